// Compacts the ES module bundle's chunks without moving a line (scripts/bundle-cli.mjs runs it).
// Why: V8 keeps every module's whole source text for the life of the process, so every byte of
// a chunk `nexo start` loads is held by the idle daemon. esbuild prints the code indented and keeps
// JSDoc comments (its own on class members, and the SDKs'): about a third of the text. Full
// whitespace minification would also save that but put each chunk on one line, so every stack
// trace would read `chunk-....js:1:<column>` (the packed CLI ships no source maps). Here every
// line stays where it is: comments become the newlines they held, leading indentation goes, and
// so do the spaces between two tokens that need none, all between tokens, never inside a
// string, template or regular expression literal (the tokens come from TypeScript's scanner,
// told by its parser where a `/` starts a regular expression and where a `}` resumes a template).
//
// Kept as written: a hashbang line, legal comments (`/*!`, `//!`, `@license`, `@preserve`),
// `//# sourceMappingURL=` and esbuild's lines naming each module (`// node_modules/zod/...`).
// Dropped with the other comments: esbuild's `/* @__PURE__ */` and `// @__NO_SIDE_EFFECTS__`
// annotations, which only a bundler or minifier reads, and nothing re-bundles the bundle.
//
// Each file is checked against its original before it is written, and the build fails on any
// difference: esbuild's whitespace-minified print of both must be the same bytes (one program,
// token for token, line breaks included where a line break changes the parse), and both must have
// the same line breaks. The linked source map is rewritten so that every mapped position points
// where the same code now is: a stack frame mapped with `node --enable-source-maps` reads the same
// original position as before.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { transform } from "esbuild";
import { SourceMapConsumer, SourceMapGenerator } from "source-map-js";
import ts from "typescript";

const KEPT_COMMENT = /^\/\*!|^\/\/!|@license|@preserve|^\/\/[#@] source(?:Mapping)?URL=/;
// esbuild's line naming the module whose code follows (`// packages/nexo/dist/broker/local.js`):
// what a reader of a chunk, and the start-up tests, go by to know what a chunk holds.
const MODULE_PATH = /^\/\/ [^\s/]*\/\S+$/;
const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/g;
const WORD = /[\w$\\#\u0080-\uffff]/;
const TRIVIA = new Set([
  ts.SyntaxKind.WhitespaceTrivia,
  ts.SyntaxKind.NewLineTrivia,
  ts.SyntaxKind.SingleLineCommentTrivia,
  ts.SyntaxKind.MultiLineCommentTrivia,
]);

/**
 * Where the parser saw a regular expression start and a template resume: the scanner alone cannot
 * tell `a / b` from `/re/`, nor the `}` closing a block from the one closing a `${`.
 */
function parsedStarts(text, fileName) {
  const file = ts.createSourceFile(
    fileName,
    text,
    { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone },
    false,
    ts.ScriptKind.JS,
  );
  const errors = file.parseDiagnostics ?? [];
  if (errors.length > 0)
    throw new Error(
      `${fileName}: cannot compact, the parser reports: ${ts.flattenDiagnosticMessageText(errors[0].messageText, " ")} at ${errors[0].start}`,
    );
  const regex = new Set();
  const resume = new Set();
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) regex.add(node.getStart(file));
    else if (node.kind === ts.SyntaxKind.TemplateMiddle || node.kind === ts.SyntaxKind.TemplateTail)
      resume.add(node.getStart(file));
    ts.forEachChild(node, visit);
  };
  visit(file);
  return { regex, resume };
}

/** Whether two tokens would read as other tokens (or a comment) if written with nothing between. */
function needsSpace(previous, previousKind, next) {
  const a = previous[previous.length - 1];
  const b = next[0];
  if (WORD.test(a) && WORD.test(b)) return true;
  if ((a === "+" || a === "-") && b === a) return true; // a + +b, a - --b
  if (a === "/" && (b === "/" || b === "*")) return true; // a / /re/
  if ((a === "<" && b === "!") || (a === "-" && b === ">")) return true; // <!-- and --> comments
  if (a === "?" && b === ".") return true; // a ? .5 : b
  return previousKind === ts.SyntaxKind.NumericLiteral && b === "."; // 1 .toString()
}

/**
 * A line never begins with `import(` or `import.meta`: only a static import does, in esbuild's
 * output, and tools that list a chunk's static imports (the start-up tests' test/helpers/bundle.ts)
 * read them as lines beginning with `import`. Such a line keeps one space of its indentation.
 */
const DYNAMIC_IMPORT = /import\s*[(.]/y;

/**
 * The text compacted, and `position(offset)`: where a character of the original is in it. A
 * character inside a removed comment or indentation maps to where that gap's line now holds it.
 */
export function compactSource(text, fileName = "input.js") {
  const { regex, resume } = parsedStarts(text, fileName);
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const out = [];
  let length = 0;
  // Per piece of the original, in order: [originalStart, originalEnd, newStart, replacement or null].
  const pieces = [];
  let gapStart = -1;
  let previous = null;
  let previousKind = ts.SyntaxKind.Unknown;
  const emit = (piece) => {
    out.push(piece);
    length += piece.length;
  };
  const dynamicImportAt = (offset) => {
    DYNAMIC_IMPORT.lastIndex = offset;
    return DYNAMIC_IMPORT.test(text);
  };
  const closeGap = (end, next) => {
    if (gapStart < 0) return;
    const gap = text.slice(gapStart, end);
    const breaks = gap.match(LINE_BREAK);
    const replacement =
      breaks !== null
        ? breaks.join("") + (dynamicImportAt(end) ? " " : "")
        : previous !== null && needsSpace(previous, previousKind, next)
          ? " "
          : "";
    pieces.push([gapStart, end, length, replacement]);
    emit(replacement);
    gapStart = -1;
  };
  for (;;) {
    let kind = scanner.scan();
    const start = scanner.getTokenStart();
    if ((kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) && regex.has(start))
      kind = scanner.reScanSlashToken();
    else if (kind === ts.SyntaxKind.CloseBraceToken && resume.has(start))
      kind = scanner.reScanTemplateToken(false);
    const end = scanner.getTokenEnd();
    if (kind === ts.SyntaxKind.ConflictMarkerTrivia)
      throw new Error(`${fileName}: a conflict marker at ${start}`);
    const token = text.slice(start, end);
    const comment =
      kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia;
    const kept =
      comment &&
      (KEPT_COMMENT.test(token) || (MODULE_PATH.test(token) && (start === 0 || text[start - 1] === "\n")));
    if (TRIVIA.has(kind) && !kept) {
      if (gapStart < 0) gapStart = start;
      continue;
    }
    if (kind === ts.SyntaxKind.EndOfFileToken) {
      closeGap(end, "");
      break;
    }
    closeGap(start, token);
    pieces.push([start, end, length, null]);
    emit(token);
    previous = token;
    previousKind = kind;
  }
  const compacted = out.join("");
  const position = (offset) => {
    const low = lastAtOrBefore(pieces.length, (i) => pieces[i][0], offset);
    const [pieceStart, pieceEnd, newStart, replacement] = pieces[low] ?? [0, 0, 0, null];
    if (offset >= pieceEnd) return length;
    if (replacement === null) return newStart + (offset - pieceStart);
    // In a gap: after as many line breaks as the gap holds before the offset.
    const before = text.slice(pieceStart, offset).match(LINE_BREAK)?.join("").length ?? 0;
    return newStart + before;
  };
  return { text: compacted, position };
}

/** The offsets at which each line starts (lines as source maps count them: after each `\n`). */
function lineStarts(text) {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

function lineOf(starts, offset) {
  return lastAtOrBefore(starts.length, (i) => starts[i], offset);
}

/** The last index of an ascending list of `length` keys whose key is <= `value` (0 if none is). */
function lastAtOrBefore(length, keyAt, value) {
  let low = 0;
  let high = length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (keyAt(middle) <= value) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** The source map (JSON text) with each generated position moved where `position` says it went. */
export function movedSourceMap(mapText, originalText, compactedText, position) {
  const raw = JSON.parse(mapText);
  const consumer = new SourceMapConsumer(raw);
  const generator = new SourceMapGenerator({ file: raw.file, sourceRoot: raw.sourceRoot });
  const from = lineStarts(originalText);
  const to = lineStarts(compactedText);
  consumer.eachMapping((mapping) => {
    const offset = from[mapping.generatedLine - 1] + mapping.generatedColumn;
    const moved = position(offset);
    const line = lineOf(to, moved);
    if (line !== mapping.generatedLine - 1)
      throw new Error(`a mapping moved from line ${mapping.generatedLine} to line ${line + 1}`);
    generator.addMapping({
      generated: { line: mapping.generatedLine, column: moved - to[line] },
      original:
        mapping.source === null ? undefined : { line: mapping.originalLine, column: mapping.originalColumn },
      source: mapping.source ?? undefined,
      name: mapping.name ?? undefined,
    });
  });
  raw.sources.forEach((source, i) => {
    if (raw.sourcesContent?.[i] != null) generator.setSourceContent(source, raw.sourcesContent[i]);
  });
  const moved = generator.toJSON();
  // Sources are named as the original map names them (none resolved against another path).
  const named = new Set(raw.sources);
  const renamed = moved.sources.find((source) => !named.has(source));
  if (renamed !== undefined)
    throw new Error(`the moved source map names a source \`${renamed}\` the original did not`);
  return JSON.stringify(moved);
}

const LINE_BREAKS = /\n|\r/g;

/** Throws unless both texts are one program with the same line breaks (see the header). */
export async function assertSameProgram(original, compacted, fileName) {
  const count = (text) => text.match(LINE_BREAKS)?.length ?? 0;
  if (count(original) !== count(compacted))
    throw new Error(`${fileName}: compacting changed the number of lines`);
  const options = { loader: "js", minifyWhitespace: true, ignoreAnnotations: true, legalComments: "inline" };
  const [a, b] = await Promise.all([transform(original, options), transform(compacted, options)]);
  if (a.code !== b.code) {
    let i = 0;
    while (a.code[i] === b.code[i]) i++;
    throw new Error(
      `${fileName}: compacting changed the program near ${JSON.stringify(a.code.slice(Math.max(0, i - 60), i + 60))} (now ${JSON.stringify(b.code.slice(Math.max(0, i - 60), i + 60))})`,
    );
  }
}

/** Compacts every `extension` file of `dir` and its `.map`, checked; returns the bytes before and after. */
export async function compactBundle(dir, extension) {
  let before = 0;
  let after = 0;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(extension)) continue;
    const path = `${dir}/${name}`;
    const original = readFileSync(path, "utf8");
    const { text, position } = compactSource(original, name);
    await assertSameProgram(original, text, name);
    let map;
    try {
      map = readFileSync(`${path}.map`, "utf8");
    } catch {
      map = null;
    }
    if (map !== null) writeFileSync(`${path}.map`, movedSourceMap(map, original, text, position));
    writeFileSync(path, text);
    before += original.length;
    after += text.length;
  }
  return { before, after };
}
