import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { compileSearchPattern, createGrepTool } from "../../../src/engine/tools/grep.js";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import { toolContext } from "../../helpers/tools.js";

let root: string;
let ws: string;
before(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "nexo-grep-")));
  ws = join(root, "ws");
  const files: Record<string, string | Buffer> = {
    "src/main.ts": "import x from 'y';\nconst TODO = 1;\n// todo: later\n",
    "src/util.js": "export function todo() {}\r\n",
    "docs/notes.md": "nothing here\n",
    "node_modules/dep/index.js": "TODO in a dependency\n",
    ".git/config": "TODO in git\n",
    "bin/tool": Buffer.from([0x54, 0x4f, 0x44, 0x4f, 0x00, 0x01]),
    "big.txt": `TODO ${"x".repeat(2000)}\n`,
    "many.txt": Array.from({ length: 10 }, (_, i) => `hit ${i}`).join("\n"),
    "aaa.txt": `${"a".repeat(40)}!\n`,
  };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(ws, path)), { recursive: true });
    writeFileSync(join(ws, path), content);
  }
  mkdirSync(join(root, "outside"));
  writeFileSync(join(root, "outside", "secret.txt"), "TODO secret\n");
  symlinkSync(join(root, "outside", "secret.txt"), join(ws, "secret-link.txt"));
  symlinkSync(join(root, "outside"), join(ws, "outside-dir"));
});
after(() => rmSync(root, { recursive: true, force: true }));

const registry = new ToolRegistry();
registry.register(createGrepTool({ maxResults: 5, maxFileBytes: 1000, maxLineChars: 40, timeoutMs: 1000 }));
function grep(args: Record<string, unknown>, unconfined = false) {
  const ctx = toolContext(ws, { unconfined });
  return registry.invoke("Grep", args, ctx);
}

describe("Grep", () => {
  it("lists matching files, skipping binaries, big files, node_modules, .git and outside symlinks", async () => {
    const output = await grep({ pattern: "TODO" });
    assert.equal(output.output, "src/main.ts");
    assert.deepEqual(output.metadata, { count: 1, complete: true });
  });

  it("shows matching lines with numbers in content mode, case-insensitively on request", async () => {
    const output = await grep({
      pattern: "todo",
      case_insensitive: true,
      output_mode: "content",
      path: "src",
    });
    assert.equal(
      output.output,
      "src/main.ts:2:const TODO = 1;\nsrc/main.ts:3:// todo: later\nsrc/util.js:1:export function todo() {}",
    );
  });

  it("filters by glob on names, or on paths when the glob has a slash", async () => {
    const byName = await grep({ pattern: "todo", case_insensitive: true, glob: "*.js" });
    assert.equal(byName.output, "src/util.js");
    const byPath = await grep({ pattern: "todo", case_insensitive: true, glob: "src/*.ts" });
    assert.equal(byPath.output, "src/main.ts");
  });

  it("searches a single file given as path", async () => {
    const output = await grep({ pattern: "^const", path: "src/main.ts", output_mode: "content" });
    assert.equal(output.output, "src/main.ts:2:const TODO = 1;");
  });

  it("stops at the result limit and says so", async () => {
    const output = await grep({ pattern: "hit", output_mode: "content", path: "many.txt" });
    assert.equal(
      output.output,
      "many.txt:1:hit 0\nmany.txt:2:hit 1\nmany.txt:3:hit 2\nmany.txt:4:hit 3\nmany.txt:5:hit 4\n" +
        "(reached the limit of 5 results; there may be more: narrow the pattern, path or glob)",
    );
    assert.equal(output.metadata?.complete, false);
  });

  it("cuts long matching lines", async () => {
    const small = new ToolRegistry();
    small.register(createGrepTool({ maxLineChars: 10 }));
    const ctx = toolContext(ws);
    const output = await small.invoke(
      "Grep",
      { pattern: "TODO", path: "big.txt", output_mode: "content" },
      ctx,
    );
    assert.equal(output.output, `big.txt:1:TODO ${"x".repeat(5)} …`);
  });

  it("answers No matches when nothing matches", async () => {
    assert.deepEqual(await grep({ pattern: "zebra" }), { output: "No matches", metadata: { count: 0 } });
  });

  it("reports an invalid regular expression", async () => {
    const output = await grep({ pattern: "(unclosed" });
    assert.equal(output.isError, true);
    assert.match(output.output, /^Invalid regular expression: /);
  });

  it("stops a catastrophically backtracking pattern at the time limit", async () => {
    const started = Date.now();
    const output = await grep({ pattern: "(a+)+$", path: "aaa.txt" });
    assert.equal(output.isError, true);
    assert.match(output.output, /1000 ms time limit/);
    assert.ok(Date.now() - started < 5000);
    // The worker was ended, not left spinning: the next search works and is fast.
    assert.equal(
      (await grep({ pattern: "nothing here", output_mode: "content" })).output,
      "docs/notes.md:1:nothing here",
    );
  });

  it("keeps the process responsive while a catastrophic pattern runs (the attacker's view)", async () => {
    // What a channel user can do with no approval: ask for a search that backtracks forever.
    writeFileSync(join(ws, "redos.txt"), `${"a".repeat(5000)}b\n`);
    const slow = new ToolRegistry();
    slow.register(createGrepTool({ timeoutMs: 3000 }));
    const ctx = toolContext(ws);
    // A /healthz-like endpoint served by this same process and event loop.
    const server = createServer((_request, response) => response.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`;
    try {
      let done = false;
      const grepping = slow.invoke("Grep", { pattern: "(a+)+$", path: "redos.txt" }, ctx).finally(() => {
        done = true;
      });
      const latencies: number[] = [];
      while (!done) {
        const sent = performance.now();
        assert.equal(await (await fetch(url)).text(), "ok");
        latencies.push(performance.now() - sent);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const output = await grepping;
      assert.equal(output.isError, true);
      assert.match(output.output, /3000 ms time limit/);
      // Frozen, the loop would answer once, after ~3 s. Responsive: dozens of quick answers.
      latencies.sort((a, b) => a - b);
      const median = latencies[latencies.length >> 1]!;
      assert.ok(latencies.length >= 10, `only ${latencies.length} answers during the search`);
      assert.ok(median < 100, `median /healthz latency ${median.toFixed(1)} ms`);
      assert.ok(latencies.at(-1)! < 1000, `slowest /healthz answer ${latencies.at(-1)!.toFixed(1)} ms`);
    } finally {
      server.close();
      rmSync(join(ws, "redos.txt"));
    }
  });

  it("refuses a file too large to search when it is named directly", async () => {
    const output = await grep({ pattern: "TODO", path: "big.txt" });
    assert.equal(output.isError, true);
    assert.match(output.output, /over Grep's limit of 1000/);
  });

  it("stops when the call is cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    const ctx = toolContext(ws, { signal: controller.signal });
    assert.deepEqual(await createGrepTool().execute({ pattern: "TODO" }, ctx), {
      output: "Search cancelled",
      isError: true,
    });
  });

  it("reads outside symlinks only in unconfined mode", async () => {
    const output = await grep({ pattern: "secret", output_mode: "content" }, true);
    assert.equal(output.output, "secret-link.txt:1:TODO secret");
  });
});

describe("compileSearchPattern", () => {
  it("uses the u flag when the pattern allows it, and falls back when not", () => {
    const unicode = compileSearchPattern("\\p{Lu}", false);
    assert.ok(unicode instanceof RegExp && unicode.flags === "u");
    const legacy = compileSearchPattern("\\-x", true);
    assert.ok(legacy instanceof RegExp && legacy.flags === "i");
    assert.ok(compileSearchPattern("[", false) instanceof SyntaxError);
  });
});
