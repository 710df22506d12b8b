/**
 * `min_nexo_version` (plugin contract §2) is a Cargo-style version requirement, the syntax the
 * reference host parses it with: comma-separated comparators that must all hold.
 *
 *   >=1.2.3  >1.2  <2  <=1.2.3  =1.2   exact or open bounds; missing parts read as 0 (or as a
 *                                      wildcard where that is what Cargo means, e.g. `<=1.2`)
 *   ^1.2.3   1.2.3                     compatible updates: the left-most non-zero part is fixed
 *   ~1.2.3   ~1.2   ~1                 patch (or minor, for `~1`) updates only
 *   *  1.*  1.2.*                      wildcards
 *
 * A pre-release version (`0.2.0-beta.1`) satisfies a requirement only when one of its
 * comparators names a pre-release of the same major.minor.patch, as in Cargo and npm: opting into
 * `>=0.1.0` must not silently admit every unfinished release after it.
 *
 * The `semver` package is only a transitive dependency here, so this small checker is our own.
 */

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  /** Dot-separated pre-release identifiers; empty for a release. */
  prerelease: string[];
}

type Operator = ">=" | ">" | "<" | "<=" | "=" | "^" | "~" | "*";

interface Comparator {
  op: Operator;
  major: number;
  minor: number | undefined;
  patch: number | undefined;
  prerelease: string[];
}

export interface VersionRequirement {
  readonly text: string;
  readonly comparators: readonly Comparator[];
}

/** A version or requirement that cannot be read; `input` is the text as given. */
export class VersionSyntaxError extends Error {
  readonly input: string;
  constructor(input: string, problem: string) {
    super(`"${input}" ${problem}`);
    this.name = "VersionSyntaxError";
    this.input = input;
  }
}

const NUMBER = String.raw`0|[1-9]\d*`;
const IDENTIFIERS = String.raw`[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*`;
const FULL_VERSION = new RegExp(
  `^(${NUMBER})\\.(${NUMBER})\\.(${NUMBER})(?:-(${IDENTIFIERS}))?(?:\\+${IDENTIFIERS})?$`,
);
const COMPARATOR = new RegExp(
  `^(>=|<=|[=><~^])?\\s*(?:[*xX]|(${NUMBER})(?:\\.(?:[*xX]|(${NUMBER})(?:\\.(?:[*xX]|(${NUMBER})(?:-(${IDENTIFIERS}))?(?:\\+${IDENTIFIERS})?))?))?)$`,
);

/** Parses a full `MAJOR.MINOR.PATCH[-PRE][+BUILD]` version. */
export function parseSemVer(text: string): SemVer {
  const match = FULL_VERSION.exec(text.trim());
  if (match === null) throw new VersionSyntaxError(text, "is not a semantic version (MAJOR.MINOR.PATCH)");
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    prerelease: match[4] === undefined ? [] : match[4].split("."),
  };
}

export function parseVersionRequirement(text: string): VersionRequirement {
  const parts = text.split(",");
  const comparators = parts.map((part) => parseComparator(part.trim(), text));
  return { text, comparators };
}

function parseComparator(part: string, whole: string): Comparator {
  const match = COMPARATOR.exec(part);
  if (match === null || part === "") {
    throw new VersionSyntaxError(whole, `is not a version requirement (bad comparator "${part}")`);
  }
  const [, op, major, minor, patch, pre] = match;
  if (major === undefined) return { op: "*", major: 0, minor: undefined, patch: undefined, prerelease: [] };
  // Without an operator a wildcard (`1.2.*`) means "any of these"; a plain version means
  // "compatible with" (`1.2.3` is `^1.2.3`), as in Cargo.
  const core = part.replace(/^(>=|<=|[=><~^])\s*/, "").split(/[-+]/, 1)[0] ?? "";
  const wildcard = /(^|\.)[*xX]$/.test(core);
  return {
    op: (op as Operator | undefined) ?? (wildcard ? "=" : "^"),
    major: Number(major),
    minor: minor === undefined ? undefined : Number(minor),
    patch: patch === undefined ? undefined : Number(patch),
    prerelease: pre === undefined ? [] : pre.split("."),
  };
}

/** Whether `version` meets every comparator of `requirement`. */
export function satisfiesRequirement(version: SemVer, requirement: VersionRequirement): boolean {
  if (!requirement.comparators.every((comparator) => matches(comparator, version))) return false;
  if (version.prerelease.length === 0) return true;
  return requirement.comparators.some(
    (c) =>
      c.prerelease.length > 0 &&
      c.major === version.major &&
      c.minor === version.minor &&
      c.patch === version.patch,
  );
}

/** Convenience: parse both and check; throws VersionSyntaxError on bad input. */
export function versionSatisfies(version: string, requirement: string): boolean {
  return satisfiesRequirement(parseSemVer(version), parseVersionRequirement(requirement));
}

function matches(c: Comparator, v: SemVer): boolean {
  const lower = (minor: number, patch: number, pre: string[] = []): SemVer => ({
    major: c.major,
    minor,
    patch,
    prerelease: pre,
  });
  const exact = lower(c.minor ?? 0, c.patch ?? 0, c.prerelease);
  switch (c.op) {
    case "*":
      return true;
    case ">=":
      return compare(v, exact) >= 0;
    case "<":
      return compare(v, exact) < 0;
    case ">":
      // `>1.2` excludes every 1.2.x, `>1` every 1.x.y.
      if (c.minor === undefined) return v.major > c.major;
      if (c.patch === undefined) return compare(v, lower(c.minor + 1, 0)) >= 0;
      return compare(v, exact) > 0;
    case "<=":
      if (c.minor === undefined) return v.major <= c.major;
      if (c.patch === undefined) return compare(v, lower(c.minor + 1, 0)) < 0;
      return compare(v, exact) <= 0;
    case "=":
      return inRange(v, exact, exclusiveUpperOfWildcard(c));
    case "~":
      return inRange(v, exact, c.minor === undefined ? bump(c.major + 1) : lower(c.minor + 1, 0));
    case "^":
      return inRange(v, exact, caretUpper(c));
  }
}

/** `=1.2` is `1.2.*`; `=1.2.3` is exactly 1.2.3. */
function exclusiveUpperOfWildcard(c: Comparator): SemVer | "exact" {
  if (c.minor === undefined) return bump(c.major + 1);
  if (c.patch === undefined) return { major: c.major, minor: c.minor + 1, patch: 0, prerelease: [] };
  return "exact";
}

function caretUpper(c: Comparator): SemVer {
  if (c.major > 0 || c.minor === undefined) return bump(c.major + 1);
  if (c.minor > 0 || c.patch === undefined) return { major: 0, minor: c.minor + 1, patch: 0, prerelease: [] };
  return { major: 0, minor: 0, patch: c.patch + 1, prerelease: [] };
}

function bump(major: number): SemVer {
  return { major, minor: 0, patch: 0, prerelease: [] };
}

function inRange(v: SemVer, low: SemVer, high: SemVer | "exact"): boolean {
  if (high === "exact") return compare(v, low) === 0;
  // An upper bound excludes the pre-releases of the bound itself (`<2.0.0` excludes 2.0.0-rc.1).
  return compare(v, low) >= 0 && compare({ ...v, prerelease: [] }, high) < 0;
}

/** Semantic Versioning 2.0.0 precedence (§11): build metadata is ignored. */
export function compare(a: SemVer, b: SemVer): number {
  if (a.major !== b.major) return a.major - b.major;
  if (a.minor !== b.minor) return a.minor - b.minor;
  if (a.patch !== b.patch) return a.patch - b.patch;
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return b.prerelease.length - a.prerelease.length;
  }
  for (let i = 0; i < Math.max(a.prerelease.length, b.prerelease.length); i++) {
    const x = a.prerelease[i];
    const y = b.prerelease[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) return Number(x) - Number(y);
    if (xn) return -1;
    if (yn) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}
