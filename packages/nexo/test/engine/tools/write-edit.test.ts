import assert from "node:assert/strict";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createEditTool } from "../../../src/engine/tools/edit.js";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import { createWriteTool } from "../../../src/engine/tools/write.js";
import type { ToolContext } from "../../../src/engine/types.js";
import { toolContext } from "../../helpers/tools.js";

let root: string;
let ws: string;
before(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "nexo-write-edit-")));
  ws = join(root, "ws");
  mkdirSync(join(ws, "src"), { recursive: true });
});
after(() => rmSync(root, { recursive: true, force: true }));

function ctx(overrides: Partial<ToolContext> = {}): ToolContext {
  return toolContext(ws, overrides);
}

const registry = new ToolRegistry();
registry.register(createWriteTool());
registry.register(createEditTool({ maxFileBytes: 1000 }));

describe("Write", () => {
  it("creates a file and its missing parent directories", async () => {
    const output = await registry.invoke(
      "Write",
      { file_path: "src/deep/er/new.txt", content: "héllo\n" },
      ctx(),
    );
    assert.equal(output.output, "Created src/deep/er/new.txt (7 bytes)");
    assert.equal(output.isError, undefined);
    assert.deepEqual(output.metadata, {
      file_path: join(ws, "src/deep/er/new.txt"),
      bytes: 7,
      created: true,
      diff: "--- a/src/deep/er/new.txt\n+++ b/src/deep/er/new.txt\n@@ -0,0 +1,1 @@\n+héllo\n",
    });
    assert.deepEqual(output.detail, {
      kind: "file_change",
      path: join(ws, "src/deep/er/new.txt"),
      change: "created",
      diff: output.metadata?.diff,
    });
    assert.equal(readFileSync(join(ws, "src/deep/er/new.txt"), "utf8"), "héllo\n");
    assert.equal(statSync(join(ws, "src/deep/er/new.txt")).mode & 0o777, 0o644);
  });

  it("overwrites atomically, keeping the file's mode and leaving no temp file", async () => {
    const path = join(ws, "src", "script.sh");
    writeFileSync(path, "old");
    chmodSync(path, 0o755);
    const output = await registry.invoke(
      "Write",
      { file_path: "src/script.sh", content: "#!/bin/sh\n" },
      ctx(),
    );
    assert.equal(output.output, "Overwrote src/script.sh (10 bytes)");
    assert.equal(
      output.metadata?.diff,
      "--- a/src/script.sh\n+++ b/src/script.sh\n@@ -1,1 +1,1 @@\n-old\n\\ No newline at end of file\n+#!/bin/sh\n",
    );
    assert.equal(readFileSync(path, "utf8"), "#!/bin/sh\n");
    assert.equal(statSync(path).mode & 0o777, 0o755);
    assert.deepEqual(
      readdirSync(join(ws, "src")).filter((name) => name.includes(".tmp-")),
      [],
    );
  });

  it("reports no diff when the file it replaces is binary", async () => {
    writeFileSync(join(ws, "src", "blob.bin"), Buffer.from([0, 1, 2, 0, 255]));
    const output = await registry.invoke(
      "Write",
      { file_path: "src/blob.bin", content: "text now\n" },
      ctx(),
    );
    assert.equal(output.metadata?.created, false);
    assert.equal(output.metadata?.diff, undefined);
    assert.deepEqual(output.detail, {
      kind: "file_change",
      path: join(ws, "src/blob.bin"),
      change: "modified",
    });
  });

  it("refuses to replace a directory", async () => {
    const output = await registry.invoke("Write", { file_path: "src", content: "x" }, ctx());
    assert.deepEqual(output, { output: "src is a directory", isError: true });
  });

  it("reports a file in the way of a parent directory", async () => {
    writeFileSync(join(ws, "plain"), "x");
    const output = await registry.invoke("Write", { file_path: "plain/child.txt", content: "x" }, ctx());
    assert.equal(output.isError, true);
    assert.match(output.output, /plain\/child\.txt/);
  });

  it("describes calls", () => {
    assert.equal(createWriteTool().describe?.({ file_path: "src/main.rs" }), "Write to src/main.rs");
  });
});

describe("Edit", () => {
  const numbers = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n";

  it("replaces a unique string and returns the exact unified diff", async () => {
    writeFileSync(join(ws, "src", "nums.txt"), numbers);
    const output = await registry.invoke(
      "Edit",
      { file_path: "src/nums.txt", old_string: "five", new_string: "FIVE" },
      ctx(),
    );
    assert.equal(
      output.output,
      [
        "--- a/src/nums.txt",
        "+++ b/src/nums.txt",
        "@@ -2,7 +2,7 @@",
        " two",
        " three",
        " four",
        "-five",
        "+FIVE",
        " six",
        " seven",
        " eight",
        "",
      ].join("\n"),
    );
    assert.equal(output.outputType, "diff");
    assert.deepEqual(output.metadata, { file_path: join(ws, "src", "nums.txt"), replacements: 1 });
    assert.equal(readFileSync(join(ws, "src", "nums.txt"), "utf8"), numbers.replace("five", "FIVE"));
  });

  it("shows added lines and a missing final newline in the diff", async () => {
    writeFileSync(join(ws, "src", "short.txt"), "a\nb");
    const output = await registry.invoke(
      "Edit",
      { file_path: "src/short.txt", old_string: "b", new_string: "b\nc\n" },
      ctx(),
    );
    assert.equal(
      output.output,
      "--- a/src/short.txt\n+++ b/src/short.txt\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n",
    );
  });

  it("refuses an ambiguous match unless replace_all", async () => {
    writeFileSync(join(ws, "src", "dup.txt"), "x = 1\nx = 1\ny = 2\n");
    const ambiguous = await registry.invoke(
      "Edit",
      { file_path: "src/dup.txt", old_string: "x = 1", new_string: "x = 3" },
      ctx(),
    );
    assert.equal(ambiguous.isError, true);
    assert.match(ambiguous.output, /occurs 2 times in src\/dup\.txt/);
    assert.equal(readFileSync(join(ws, "src", "dup.txt"), "utf8"), "x = 1\nx = 1\ny = 2\n");

    const all = await registry.invoke(
      "Edit",
      { file_path: "src/dup.txt", old_string: "x = 1", new_string: "x = 3", replace_all: true },
      ctx(),
    );
    assert.equal(all.isError, undefined);
    assert.equal(all.metadata?.replacements, 2);
    assert.equal(readFileSync(join(ws, "src", "dup.txt"), "utf8"), "x = 3\nx = 3\ny = 2\n");
  });

  it("inserts the replacement literally ($ patterns are not special)", async () => {
    writeFileSync(join(ws, "src", "dollar.txt"), "price\n");
    await registry.invoke(
      "Edit",
      { file_path: "src/dollar.txt", old_string: "price", new_string: "$& $1 $$" },
      ctx(),
    );
    assert.equal(readFileSync(join(ws, "src", "dollar.txt"), "utf8"), "$& $1 $$\n");
  });

  it("reports a missing string, a no-op, a missing file, a binary file and a too large file", async () => {
    writeFileSync(join(ws, "src", "plain.txt"), "hello\n");
    const missing = await registry.invoke(
      "Edit",
      { file_path: "src/plain.txt", old_string: "bye", new_string: "x" },
      ctx(),
    );
    assert.deepEqual(missing, { output: "old_string was not found in src/plain.txt", isError: true });
    const same = await registry.invoke(
      "Edit",
      { file_path: "src/plain.txt", old_string: "hello", new_string: "hello" },
      ctx(),
    );
    assert.equal(same.isError, true);
    assert.match(same.output, /identical/);
    const noFile = await registry.invoke(
      "Edit",
      { file_path: "src/none.txt", old_string: "a", new_string: "b" },
      ctx(),
    );
    assert.deepEqual(noFile, { output: "No such file or directory: src/none.txt", isError: true });
    writeFileSync(join(ws, "src", "bin.dat"), Buffer.from([0x61, 0, 0x62]));
    const binary = await registry.invoke(
      "Edit",
      { file_path: "src/bin.dat", old_string: "a", new_string: "b" },
      ctx(),
    );
    assert.equal(binary.isError, true);
    assert.match(binary.output, /binary file/);
    writeFileSync(join(ws, "src", "huge.txt"), "h".repeat(1001));
    const huge = await registry.invoke(
      "Edit",
      { file_path: "src/huge.txt", old_string: "h", new_string: "x" },
      ctx(),
    );
    assert.equal(huge.isError, true);
    assert.match(huge.output, /1001 bytes, over Edit's limit of 1000/);
  });

  it("requires a non-empty old_string", async () => {
    const output = await registry.invoke(
      "Edit",
      { file_path: "src/plain.txt", old_string: "", new_string: "x" },
      ctx(),
    );
    assert.equal(output.isError, true);
    assert.match(output.output, /\/old_string must NOT have fewer than 1 characters/);
  });

  it("names a file outside the workspace by its absolute path in unconfined mode", async () => {
    const outside = join(root, "outside.txt");
    writeFileSync(outside, "keep\nchange\n");
    const output = await registry.invoke(
      "Edit",
      { file_path: outside, old_string: "change", new_string: "changed" },
      ctx({ unconfined: true }),
    );
    assert.equal(
      output.output,
      `--- ${outside}\n+++ ${outside}\n@@ -1,2 +1,2 @@\n keep\n-change\n+changed\n`,
    );
  });
});
