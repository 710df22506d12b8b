/**
 * Keeping an operator's YAML layout through a programmatic edit.
 *
 * The yaml Document API keeps comments, key order, blank lines and quoting, but re-rendering a file
 * still normalises details (spaces before a trailing comment, `0x1F` → `0x1f`, flow padding, ...).
 * To leave untouched lines byte-identical, the edit is applied as a three-way merge of lines:
 * base = the document rendered before the edit, ours = the file as written, theirs = the document
 * rendered after the edit. Where only the edit changed a region, its rendering is taken; where only
 * the normalisation differs, the operator's text is kept. The caller verifies the merge and falls
 * back to the plain rendering if the merged text does not mean exactly the same.
 */
import type { ToStringOptions } from "yaml";

/** Beyond this many differing lines a merge is not worth computing; the plain rendering is used. */
const MAX_DIFF = 2000;

/** Rendering options that match how `text` is already laid out (indent, sequence style, padding). */
export function detectYamlStyle(text: string): ToStringOptions {
  const lines = text.split(/\r?\n/);
  const indentVotes = new Map<number, number>();
  let indentedSeq = 0;
  let flushSeq = 0;
  for (const [index, line] of lines.entries()) {
    if (!/^[^#]*:\s*(#.*)?$/.test(line) || /^\s*#/.test(line)) continue;
    const child = nextContentLine(lines, index + 1);
    if (child === undefined) continue;
    const keyColumn = (/^(\s*(?:-\s+)*)/.exec(line)?.[1] ?? "").length;
    const childIndent = child.length - child.trimStart().length;
    if (child.trimStart().startsWith("- ") || child.trim() === "-") {
      if (childIndent === keyColumn) flushSeq += 1;
      else if (childIndent > keyColumn) indentedSeq += 1;
    } else if (childIndent > keyColumn) {
      const step = childIndent - keyColumn;
      indentVotes.set(step, (indentVotes.get(step) ?? 0) + 1);
    }
  }
  let indent = 2;
  let bestVotes = 0;
  for (const [step, votes] of indentVotes) {
    if (votes > bestVotes && step >= 1 && step <= 8) {
      indent = step;
      bestVotes = votes;
    }
  }
  let padded = 0;
  let unpadded = 0;
  for (const match of text.matchAll(/(?::|-)[ \t]+[[{]( ?)[^\s\]}]/g)) {
    if (match[1] === " ") padded += 1;
    else unpadded += 1;
  }
  return {
    indent,
    indentSeq: flushSeq <= indentedSeq,
    flowCollectionPadding: unpadded <= padded,
    lineWidth: 0,
  };
}

function nextContentLine(lines: readonly string[], from: number): string | undefined {
  for (let i = from; i < lines.length; i += 1) {
    const line = lines[i] as string;
    if (line.trim() !== "" && !line.trimStart().startsWith("#")) return line;
  }
  return undefined;
}

/**
 * Applies the change `before → after` to `source`, keeping `source`'s own lines wherever the
 * change does not touch them. All three are whole texts; line endings of `source` are kept.
 */
export function mergeLayout(source: string, before: string, after: string): string | undefined {
  const crlf = source.includes("\r\n");
  const ours = (crlf ? source.replaceAll("\r\n", "\n") : source).split("\n");
  const merged = mergeLines(ours, before.split("\n"), after.split("\n"));
  if (merged === undefined) return undefined;
  const text = merged.join("\n");
  return crlf ? text.replaceAll("\n", "\r\n") : text;
}

/**
 * Walks the rendered-before lines alongside the operator's lines. Lines the edit kept come out in
 * the operator's spelling; lines the edit added or changed come out as rendered. Where the edit
 * touched a line whose spelling the operator's file differs in, that region is taken as rendered.
 */
function mergeLines(
  ours: readonly string[],
  base: readonly string[],
  theirs: readonly string[],
): string[] | undefined {
  const toOurs = matchLines(base, ours);
  const toTheirs = matchLines(base, theirs);
  if (toOurs === undefined || toTheirs === undefined) return undefined;
  const theirsOf = (b: number): number => toTheirs[b] ?? -1;
  const out: string[] = [];
  let t = 0;
  /** Emits the edit's new lines that come before `theirs[until]`, then moves past `until`. */
  const insertionsBefore = (until: number) => {
    out.push(...theirs.slice(t, until));
    t = Math.max(t, until);
  };
  for (const segment of alignSegments(toOurs, base.length, ours.length)) {
    const { b0, b1, o0, o1 } = segment;
    const kept: number[] = [];
    for (let b = b0; b < b1; b += 1) if (theirsOf(b) >= 0) kept.push(theirsOf(b));
    const first = kept[0];
    const last = kept[kept.length - 1];
    if (b0 === b1) {
      // Lines only the operator's file has (an extra blank line, say): keep them where they are.
      out.push(...ours.slice(o0, o1));
    } else if (
      first !== undefined &&
      last !== undefined &&
      kept.length === b1 - b0 &&
      last - first === kept.length - 1
    ) {
      // The edit kept this region as one block: write it as the operator wrote it.
      insertionsBefore(first);
      out.push(...ours.slice(o0, o1));
      t = last + 1;
    } else if (last !== undefined) {
      // The edit changed part of a region the operator spelled differently: take the rendering.
      insertionsBefore(last + 1);
    }
  }
  insertionsBefore(theirs.length);
  return out;
}

interface Segment {
  /** Lines `base[b0, b1)` correspond to `ours[o0, o1)`; single equal lines are segments of one. */
  readonly b0: number;
  readonly b1: number;
  readonly o0: number;
  readonly o1: number;
}

function* alignSegments(toOurs: Int32Array, baseLength: number, oursLength: number): Generator<Segment> {
  let b = 0;
  let o = 0;
  while (b < baseLength || o < oursLength) {
    const match = b < baseLength ? (toOurs[b] ?? -1) : -1;
    if (match === o) {
      yield { b0: b, b1: b + 1, o0: o, o1: o + 1 };
      b += 1;
      o += 1;
      continue;
    }
    const b0 = b;
    while (b < baseLength && (toOurs[b] ?? -1) === -1) b += 1;
    const o1 = b < baseLength ? (toOurs[b] ?? oursLength) : oursLength;
    yield { b0, b1: b, o0: o, o1 };
    o = o1;
  }
}

/**
 * Myers' diff: for each line of `a`, the index of the line of `b` it is matched with in a longest
 * common subsequence, or -1. `undefined` when the texts differ in more than `MAX_DIFF` lines.
 */
function matchLines(a: readonly string[], b: readonly string[]): Int32Array | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_DIFF);
  const offset = n + m + 1;
  const v = new Int32Array(2 * offset + 1);
  // trace[d] holds v[-d-1 .. d+1] as it was before step d, which is all that backtracking reads.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d += 1) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0));
      let x = down ? (v[offset + k + 1] ?? 0) : (v[offset + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, n, m, d);
    }
  }
  return undefined;
}

function backtrack(trace: readonly Int32Array[], n: number, m: number, depth: number): Int32Array {
  const matches = new Int32Array(n).fill(-1);
  let x = n;
  let y = m;
  for (let d = depth; d >= 0; d -= 1) {
    const snapshot = trace[d] as Int32Array;
    const at = (k: number): number => snapshot[k + d + 1] ?? 0;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : at(prevK);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      x -= 1;
      y -= 1;
      matches[x] = y;
    }
    x = prevX;
    y = prevY;
  }
  return matches;
}
