/**
 * How every schema failure reads, everywhere: `tools[0].name: expected string; server_version:
 * required`. One formatter, so a -32602 from the daemon, a refused plugin reply and a bad config
 * key all name the offending place the same way.
 */

/** What the formatter needs of a zod issue (zod's own issues fit as they are). */
export interface IssueLike {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** Plain keys print as `.key`; anything a reader could misparse is quoted: `["my key"]`. */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** A path the way a reader would write it: `agents[2].model.provider`, `servers["a.b"].url`. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (typeof segment === "string" && PLAIN_KEY.test(segment))
      out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

/**
 * The issues as one line, `path: message` joined by `; `. `whole` names the value itself, for an
 * issue about it rather than one of its fields (`(params): expected object`).
 */
export function formatIssues(issues: readonly IssueLike[], whole = "(root)"): string {
  return issues.map((issue) => `${formatIssuePath(issue.path) || whole}: ${issue.message}`).join("; ");
}
