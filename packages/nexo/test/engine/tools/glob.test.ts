import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createGlobTool } from "../../../src/engine/tools/glob.js";
import {
  GlobPatternError,
  globToRegExp,
  patternDepth,
  splitStaticPrefix,
} from "../../../src/engine/tools/glob-pattern.js";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import { toolContext } from "../../helpers/tools.js";

describe("globToRegExp", () => {
  const matches = (pattern: string, path: string) => globToRegExp(pattern).test(path);

  it("keeps * and ? inside one segment, dotfiles included", () => {
    assert.equal(matches("*.ts", "a.ts"), true);
    assert.equal(matches("*.ts", ".hidden.ts"), true);
    assert.equal(matches("*.ts", "src/a.ts"), false);
    assert.equal(matches("a?.js", "ab.js"), true);
    assert.equal(matches("a?.js", "abc.js"), false);
    assert.equal(matches("a?b", "a/b"), false);
  });

  it("lets ** span any number of segments, including none", () => {
    assert.equal(matches("**/*.ts", "a.ts"), true);
    assert.equal(matches("**/*.ts", "src/deep/a.ts"), true);
    assert.equal(matches("src/**/*.ts", "src/a.ts"), true);
    assert.equal(matches("src/**/*.ts", "src/x/y/a.ts"), true);
    assert.equal(matches("src/**/*.ts", "lib/a.ts"), false);
    assert.equal(matches("src/**", "src/x/y"), true);
    assert.equal(matches("a**b", "axxb"), true);
    assert.equal(matches("a**b", "a/b"), false);
  });

  it("supports character classes, ranges and negation", () => {
    assert.equal(matches("[abc].md", "b.md"), true);
    assert.equal(matches("[abc].md", "d.md"), false);
    assert.equal(matches("[a-c]x", "cx"), true);
    assert.equal(matches("[!a]x", "bx"), true);
    assert.equal(matches("[!a]x", "ax"), false);
    assert.equal(matches("[^a]x", "ax"), false);
    assert.equal(matches("a[/]b", "a/b"), false);
    assert.equal(matches("[!a]", "/"), false);
    assert.equal(matches("[]]", "]"), true);
    assert.equal(matches("[\\d]", "d"), true);
    assert.equal(matches("[\\d]", "1"), false);
  });

  it("expands braces, nested and across segments", () => {
    assert.equal(matches("*.{js,json}", "a.json"), true);
    assert.equal(matches("*.{js,json}", "a.ts"), false);
    assert.equal(matches("{a,{b,c}}.txt", "c.txt"), true);
    assert.equal(matches("{src/**,lib}/*.js", "src/x/y.js"), true);
    assert.equal(matches("{src/**,lib}/*.js", "lib/y.js"), true);
    assert.equal(matches("{src/**,lib}/*.js", "test/y.js"), false);
  });

  it("treats escapes, lone braces, unclosed brackets and regex characters literally", () => {
    assert.equal(matches("\\*.txt", "*.txt"), true);
    assert.equal(matches("\\*.txt", "a.txt"), false);
    assert.equal(matches("{a}.txt", "{a}.txt"), true);
    assert.equal(matches("{a,b", "{a,b"), true);
    assert.equal(matches("[ab", "[ab"), true);
    assert.equal(matches("a+b(1).txt", "a+b(1).txt"), true);
    assert.equal(matches("a.txt", "abtxt"), false);
  });

  it("rejects a trailing lone backslash", () => {
    assert.throws(() => globToRegExp("a\\"), GlobPatternError);
  });

  it("splits off the literal directory and knows the depth", () => {
    assert.deepEqual(splitStaticPrefix("src/lib/**/*.ts"), { base: "src/lib", rest: "**/*.ts" });
    assert.deepEqual(splitStaticPrefix("*.ts"), { base: "", rest: "*.ts" });
    assert.deepEqual(splitStaticPrefix("src/main.ts"), { base: "src", rest: "main.ts" });
    assert.deepEqual(splitStaticPrefix("/etc/*.conf"), { base: "/etc", rest: "*.conf" });
    assert.deepEqual(splitStaticPrefix("../x/*"), { base: "../x", rest: "*" });
    assert.equal(patternDepth("*.ts"), 1);
    assert.equal(patternDepth("*/*.ts"), 2);
    assert.equal(patternDepth("**/*.ts"), Number.POSITIVE_INFINITY);
    assert.equal(patternDepth("{a/b,c}"), Number.POSITIVE_INFINITY);
  });
});

describe("Glob", () => {
  let ws: string;
  let root: string;
  const registry = new ToolRegistry();
  registry.register(createGlobTool({ maxResults: 3 }));
  const glob = (args: Record<string, unknown>, unconfined = false) => {
    const ctx = toolContext(ws, { unconfined });
    return registry.invoke("Glob", args, ctx);
  };

  before(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "nexo-glob-")));
    ws = join(root, "ws");
    // Older files first, so mtime order differs from name order.
    const files: [string, number][] = [
      ["src/b.ts", 1_000],
      ["src/a.ts", 2_000],
      ["src/deep/c.ts", 3_000],
      ["README.md", 4_000],
      ["node_modules/pkg/index.ts", 5_000],
      [".git/hooks/x.ts", 6_000],
      ["lib/d.ts", 7_000],
    ];
    for (const [path, seconds] of files) {
      mkdirSync(dirname(join(ws, path)), { recursive: true });
      writeFileSync(join(ws, path), path);
      utimesSync(join(ws, path), seconds, seconds);
    }
    mkdirSync(join(root, "outside"));
    writeFileSync(join(root, "outside", "secret.ts"), "secret");
    symlinkSync(join(root, "outside", "secret.ts"), join(ws, "src", "secret-link.ts"));
    symlinkSync(join(root, "outside"), join(ws, "outside-dir"));
    symlinkSync(join(ws, "src", "a.ts"), join(ws, "src", "inner-link.ts"));
    utimesSync(join(ws, "src", "a.ts"), 2_000, 2_000);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("lists matches newest first, skipping node_modules and .git", async () => {
    const output = await glob({ pattern: "src/**/*.ts" });
    // inner-link.ts points at a.ts and shares its mtime; ties are in name order.
    assert.equal(
      output.output,
      "src/deep/c.ts\nsrc/a.ts\nsrc/inner-link.ts\n(showing 3 of 4 matching files, newest first; narrow the pattern)",
    );
    assert.deepEqual(output.metadata, { count: 3, total: 4 });
  });

  it("never lists symlinks that lead outside, and does not descend into symlinked directories", async () => {
    const output = await glob({ pattern: "**/*secret*" });
    assert.equal(output.output, "No files match **/*secret*");
  });

  it("searches from path, and inside a skipped directory when path points there", async () => {
    assert.equal(
      (await glob({ pattern: "*.ts", path: "src" })).output,
      "src/a.ts\nsrc/inner-link.ts\nsrc/b.ts",
    );
    assert.equal(
      (await glob({ pattern: "**/*.ts", path: "node_modules" })).output,
      "node_modules/pkg/index.ts",
    );
    assert.equal((await glob({ pattern: "node_modules/**/*.ts" })).output, "node_modules/pkg/index.ts");
  });

  it("matches top-level names only without **", async () => {
    assert.equal((await glob({ pattern: "*.md" })).output, "README.md");
    assert.equal((await glob({ pattern: "*.ts" })).output, "No files match *.ts");
  });

  it("accepts absolute patterns inside the workspace", async () => {
    assert.equal((await glob({ pattern: join(ws, "lib", "*.ts") })).output, "lib/d.ts");
  });

  it("reports bad patterns and non-directories", async () => {
    const bad = await glob({ pattern: "a\\" });
    assert.equal(bad.isError, true);
    assert.match(bad.output, /Invalid glob pattern/);
    const notDir = await glob({ pattern: "*", path: "README.md" });
    assert.deepEqual(notDir, { output: "README.md is not a directory", isError: true });
    const missing = await glob({ pattern: "*", path: "nope" });
    assert.deepEqual(missing, { output: "No such file or directory: nope", isError: true });
  });

  it("stops when the call is cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    const ctx = toolContext(ws, { signal: controller.signal });
    assert.deepEqual(await createGlobTool().execute({ pattern: "**/*" }, ctx), {
      output: "Search cancelled",
      isError: true,
    });
  });

  it("lists outside files by absolute path in unconfined mode", async () => {
    const output = await glob({ pattern: "*.ts", path: join(root, "outside") }, true);
    assert.equal(output.output, join(root, "outside", "secret.ts"));
  });
});
