/**
 * The bundle's compaction (scripts/bundle-compact.mjs, run by scripts/bundle-cli.mjs on every
 * chunk): comments and indentation leave, every line stays where it is, and nothing inside a
 * string, template or regular expression literal changes. Checked here on input written to trip
 * a tokenizer, by running the original and the compacted program and comparing what they print;
 * the build's own check (esbuild's whitespace-minified print of both) must pass on it and fail on a
 * real difference; and a stack frame mapped through the rewritten source map with
 * `node --enable-source-maps` names the same original position as before.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

interface Compaction {
  compactSource(text: string, fileName?: string): { text: string; position(offset: number): number };
  assertSameProgram(original: string, compacted: string, fileName: string): Promise<void>;
  compactBundle(dir: string, extension: string): Promise<{ before: number; after: number }>;
}

const SCRIPT = fileURLToPath(new URL("../../../../scripts/bundle-compact.mjs", import.meta.url));
const { compactSource, assertSameProgram, compactBundle } = (await import(
  pathToFileURL(SCRIPT).href
)) as Compaction;

const TRICKY = [
  "#!/usr/bin/env node",
  "/*! legal: kept as written */",
  "// a line comment",
  "// packages/nexo/dist/cli/main.js",
  "/**",
  " * A JSDoc block over lines.",
  " */",
  "const out = [];",
  "const n = 3;",
  "const template = `first line",
  "    indented text ${`nested ${n + 1} ${{ a: '}' }.a} ${`/* not a comment */`}`}",
  "  // not a comment either",
  "  tail`;",
  "out.push(template);",
  'const continued = "first \\',
  '    second";',
  "out.push(continued);",
  'const slashes = /\\/\\/ and \\/\\* inside/.test("x // and /* inside") && /[/]\\//.source;',
  "out.push(slashes);",
  "let a = 12, b = 3, g = 2;",
  "out.push(a / b / g, a /b/ g, [a].map((x) => x / 2)[0]);",
  "out.push(/=/.test('a=b'), a /= 2, a);",
  "function asi() {",
  "  return",
  "  42;",
  "}",
  "out.push(asi());",
  "let c = 1;",
  "let d = 1;",
  "c",
  "++d",
  "out.push(c, d);",
  "out.push(a - -b + +a - --c + +(+g), a++ + ++b, 1 .toString(), n ? .5 : 1);",
  "out.push(typeof /* inline */ a, void 0, 'in' in { in: 1 });",
  "label: for (const x of [1, 2]) { if (x) continue label; }",
  "out.push(`${out.length}` + String.raw`\\n  raw`);",
  "const later = [",
  '  import("node:os").then((os) => typeof os.EOL),',
  "  import.meta.url.length > 0,",
  "];",
  "out.push(await later[0], later[1]);",
  "console.log(JSON.stringify(out));",
  "//# sourceMappingURL=input.js.map",
  "",
].join("\n");

function run(source: string): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-compact-run-"));
  writeFileSync(join(dir, "input.mjs"), source);
  const child = spawnSync(process.execPath, [join(dir, "input.mjs")], { encoding: "utf8" });
  assert.equal(child.stderr, "");
  assert.equal(child.status, 0);
  return child.stdout;
}

describe("compactSource", () => {
  test("keeps every line and every literal, drops comments and indentation, runs the same", async () => {
    const { text } = compactSource(TRICKY);
    await assertSameProgram(TRICKY, text, "tricky.js");
    assert.equal(text.split("\n").length, TRICKY.split("\n").length);
    assert.ok(text.length < TRICKY.length * 0.9, `${text.length} of ${TRICKY.length}`);
    const lines = text.split("\n");
    assert.equal(lines[0], "#!/usr/bin/env node");
    assert.equal(lines[1], "/*! legal: kept as written */");
    assert.equal(lines[2], "");
    // esbuild's line naming the module that follows is kept.
    assert.equal(lines[3], "// packages/nexo/dist/cli/main.js");
    assert.deepEqual(lines.slice(4, 7), ["", "", ""]);
    assert.equal(lines[7], "const out=[];");
    // The template's text, indentation and `//` included, is untouched.
    assert.ok(
      text.includes(
        "`first line\n    indented text ${`nested ${n+1} ${{a:'}'}.a} ${`/* not a comment */`}`}",
      ),
    );
    assert.ok(text.includes("\n  // not a comment either\n  tail`;"));
    assert.ok(text.includes('"first \\\n    second"'));
    assert.ok(text.includes("/\\/\\/ and \\/\\* inside/.test("));
    assert.equal(lines[lines.indexOf("function asi(){") + 1], "return");
    assert.equal(lines[lines.indexOf("let d=1;") + 2], "++d");
    assert.ok(text.includes("a- -b+ +a- --c+ +(+g),a++ + ++b,1 .toString(),n? .5:1"));
    assert.ok(text.includes("typeof a,void 0,"));
    // A line beginning with a dynamic import keeps a space: only static imports begin a line.
    assert.ok(
      text.includes('[\n import("node:os").then((os)=>typeof os.EOL),\n import.meta.url.length>0,\n];'),
    );
    assert.ok(text.endsWith("\n//# sourceMappingURL=input.js.map\n"));
    assert.equal(run(text), run(TRICKY));
  });

  test("keeps CRLF line breaks, inside comments too", async () => {
    const crlf = TRICKY.replaceAll("\n", "\r\n");
    const { text } = compactSource(crlf);
    await assertSameProgram(crlf, text, "crlf.js");
    assert.equal(text.split("\r\n").length, crlf.split("\r\n").length);
    assert.equal(text.replaceAll("\r\n", "").includes("\n"), false);
    assert.equal(run(text), run(crlf));
  });

  test("maps each original offset to where its character went", () => {
    const source = "function f() {\n    return a  +  b; // sum\n}\n";
    const { text, position } = compactSource(source);
    assert.equal(text, "function f(){\nreturn a+b;\n}\n");
    for (const token of ["return", "a", "+", "b", "}"]) {
      const from = source.indexOf(token, token === "}" ? source.indexOf("sum") : 0);
      assert.equal(text.slice(position(from), position(from) + token.length), token);
    }
    // In a gap: where that line of the gap is now.
    assert.equal(position(source.indexOf("// sum")), text.indexOf("\n}"));
    assert.equal(position(source.indexOf("    return")), text.indexOf("return"));
  });

  test("the build's check fails on a change of program or of line count", async () => {
    await assert.rejects(
      assertSameProgram(
        "function f() {\n  return\n  1;\n}\n",
        "function f() {\n  return 1;\n\n}\n",
        "asi.js",
      ),
      /changed the program/,
    );
    await assert.rejects(assertSameProgram("a\n++b\n", "a++\nb\n", "update.js"), /changed the program/);
    await assert.rejects(
      assertSameProgram("const s = 'x';\n", "const s = 'x '\n", "string.js"),
      /changed the program/,
    );
    await assert.rejects(assertSameProgram("a;\n\nb;\n", "a;\nb;\n", "lines.js"), /number of lines/);
    await assertSameProgram("/* @__PURE__ */ f();\n", "f();\n", "pure.js");
  });
});

describe("compactBundle", () => {
  test("a stack frame mapped through the rewritten source map names the same original position", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nexo-compact-map-"));
    writeFileSync(
      join(dir, "thrower.js"),
      [
        "/** Throws from a line of its own, several columns in. */",
        "export function thrower(value) {",
        "  if (value > 1) {",
        "    const message = `value ${value}`;",
        "    /* the throw */ throw new Error(message);",
        "  }",
        "  return value;",
        "}",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "entry.js"),
      [
        'import { thrower } from "./thrower.js";',
        "// Calls it where the column is not the first.",
        "function main() {",
        "    const values = [1, 2];",
        "    return values.map((value) =>   thrower(value));",
        "}",
        "try { main(); } catch (error) { console.log(error.stack.split('\\n').slice(1, 4).join('\\n')); }",
        "",
      ].join("\n"),
    );
    const out = join(dir, "out");
    await build({
      entryPoints: [join(dir, "entry.js")],
      outdir: out,
      bundle: true,
      format: "esm",
      platform: "node",
      sourcemap: "linked",
      logLevel: "silent",
    });
    const stack = (flags: string[]) => {
      const child = spawnSync(process.execPath, [...flags, join(out, "entry.js")], { encoding: "utf8" });
      assert.equal(child.status, 0, child.stderr);
      return child.stdout;
    };
    const mappedBefore = stack(["--enable-source-maps"]);
    const rawBefore = stack([]);
    assert.match(mappedBefore, /thrower\.js:5:\d+/);
    const before = readFileSync(join(out, "entry.js"), "utf8");
    const sizes = await compactBundle(out, ".js");
    assert.ok(sizes.after < sizes.before);
    assert.notEqual(readFileSync(join(out, "entry.js"), "utf8"), before);
    assert.equal(stack(["--enable-source-maps"]), mappedBefore);
    // Unmapped, the frames name the same lines of the bundle, at other columns.
    const lines = (text: string) => [...text.matchAll(/entry\.js:(\d+):\d+/g)].map((match) => match[1]);
    const rawAfter = stack([]);
    assert.notEqual(rawAfter, rawBefore);
    assert.deepEqual(lines(rawAfter), lines(rawBefore));
  });
});
