/**
 * Glob patterns, compiled to regular expressions over `/`-separated relative paths.
 *
 * Supported: `*` (any run of characters within one path segment), `**` as a whole segment (any
 * number of segments, including none), `?` (one character), `[abc]`, `[a-z]`, `[!abc]` / `[^abc]`,
 * `{a,b}` alternatives (nestable, may contain `/`), and `\` to escape the next character. Wildcards
 * never match `/`, and they do match names starting with a dot.
 */

export class GlobPatternError extends Error {
  override readonly name = "GlobPatternError";
  constructor(
    readonly pattern: string,
    reason: string,
  ) {
    super(`Invalid glob pattern ${JSON.stringify(pattern)}: ${reason}`);
  }
}

const MAGIC = /[*?[{\\]/;

/** Compiles `pattern` into an anchored regular expression that tests whole relative paths. */
export function globToRegExp(pattern: string): RegExp {
  const parser = new Parser(pattern);
  const source = parser.parseSequence(false);
  return new RegExp(`^${source}$`);
}

/**
 * Splits a pattern into the literal directory it starts with and the part that needs matching:
 * `src/lib/**\/*.ts` → `{ base: "src/lib", rest: "**\/*.ts" }`. Searching can start at `base`.
 * A pattern without wildcards is a path: its last segment is the rest.
 */
export function splitStaticPrefix(pattern: string): { base: string; rest: string } {
  const absolute = pattern.startsWith("/");
  const segments = pattern.split("/").filter((segment, index) => segment !== "" || index === 0);
  if (absolute) segments.shift();
  let firstMagic = segments.findIndex((segment) => MAGIC.test(segment));
  if (firstMagic === -1) firstMagic = Math.max(segments.length - 1, 0);
  const base = segments.slice(0, firstMagic).join("/");
  return { base: absolute ? `/${base}` : base, rest: segments.slice(firstMagic).join("/") };
}

/** How many segments deep a pattern can match, or `Infinity` with `**` (or a `/` inside braces). */
export function patternDepth(pattern: string): number {
  if (pattern.includes("**") || /\{[^}]*\/[^}]*\}/.test(pattern)) return Number.POSITIVE_INFINITY;
  return pattern.split("/").length;
}

class Parser {
  private index = 0;

  constructor(private readonly pattern: string) {}

  /** Parses until the end (or, inside braces, until the `,` or `}` that ends this alternative). */
  parseSequence(inBraces: boolean): string {
    let out = "";
    while (this.index < this.pattern.length) {
      const char = this.pattern[this.index]!;
      if (inBraces && (char === "," || char === "}")) break;
      if (
        char === "*" &&
        this.pattern[this.index + 1] === "*" &&
        this.atSegmentStart() &&
        this.globstarEnds()
      ) {
        out += this.parseGlobstar();
        continue;
      }
      this.index++;
      if (char === "*") {
        while (this.pattern[this.index] === "*") this.index++;
        out += "[^/]*";
      } else if (char === "?") out += "[^/]";
      else if (char === "[") out += this.parseClass();
      else if (char === "{") out += this.parseBraces();
      else if (char === "\\") {
        const next = this.pattern[this.index];
        if (next === undefined) throw new GlobPatternError(this.pattern, "it ends with a lone backslash");
        this.index++;
        out += escapeRegExp(next);
      } else out += escapeRegExp(char);
    }
    return out;
  }

  private atSegmentStart(): boolean {
    const previous = this.pattern[this.index - 1];
    return previous === undefined || previous === "/" || previous === "{" || previous === ",";
  }

  private globstarEnds(): boolean {
    const after = this.pattern[this.index + 2];
    return after === undefined || after === "/" || after === "," || after === "}";
  }

  /** `**` followed by `/` matches zero or more whole segments; a final `**` matches the rest. */
  private parseGlobstar(): string {
    this.index += 2;
    if (this.pattern[this.index] === "/") {
      this.index++;
      return "(?:[^/]*/)*";
    }
    return ".*";
  }

  private parseClass(): string {
    const start = this.index; // just after "["
    let cursor = start;
    let negated = false;
    if (this.pattern[cursor] === "!" || this.pattern[cursor] === "^") {
      negated = true;
      cursor++;
    }
    let body = "";
    let first = true;
    for (; cursor < this.pattern.length; cursor++) {
      const char = this.pattern[cursor]!;
      if (char === "]" && !first) {
        this.index = cursor + 1;
        return negated ? `[^/${body}]` : `(?!/)[${body}]`;
      }
      first = false;
      if (char === "\\") {
        cursor++;
        const next = this.pattern[cursor];
        if (next === undefined) break;
        body += escapeClassChar(next);
      } else if (char === "-") body += "-";
      else body += escapeClassChar(char);
    }
    // No closing bracket: the "[" is an ordinary character.
    this.index = start;
    return "\\[";
  }

  private parseBraces(): string {
    const start = this.index; // just after "{"
    const alternatives: string[] = [];
    for (;;) {
      alternatives.push(this.parseSequence(true));
      const char = this.pattern[this.index];
      if (char === ",") {
        this.index++;
        continue;
      }
      if (char === "}" && alternatives.length > 1) {
        this.index++;
        return `(?:${alternatives.join("|")})`;
      }
      // "{a}" or an unclosed "{": literal braces, as shells treat them.
      this.index = start;
      return "\\{";
    }
  }
}

/** A character as a literal member of a regex class (a backslash before a letter would change its meaning). */
function escapeClassChar(char: string): string {
  return /[\\\]^[-]/.test(char) ? `\\${char}` : char;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
