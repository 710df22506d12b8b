import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createReadTool } from "../../../src/engine/tools/read.js";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import type { ToolContext } from "../../../src/engine/types.js";
import { toolContext } from "../../helpers/tools.js";

// A 1x1 transparent PNG.
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

let ws: string;
before(() => {
  ws = realpathSync(mkdtempSync(join(tmpdir(), "nexo-read-")));
  writeFileSync(join(ws, "three.txt"), "alpha\nbeta\ngamma\n");
  writeFileSync(join(ws, "crlf.txt"), "one\r\ntwo\r\n");
  writeFileSync(join(ws, "empty.txt"), "");
  writeFileSync(join(ws, "long.txt"), Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n"));
  writeFileSync(join(ws, "wide.txt"), `${"w".repeat(50)}\nshort\n`);
  writeFileSync(join(ws, "pixel.png"), Buffer.from(PNG_BASE64, "base64"));
  // An image under a misleading name is still an image; a binary under a text name is still binary.
  writeFileSync(join(ws, "pixel.dat"), Buffer.from(PNG_BASE64, "base64"));
  writeFileSync(join(ws, "blob.txt"), Buffer.from([0x41, 0x00, 0x42, 0x43]));
  writeFileSync(join(ws, "big.txt"), "b".repeat(2000));
  mkdirSync(join(ws, "dir"));
});
after(() => rmSync(ws, { recursive: true, force: true }));

function ctx(): ToolContext {
  return toolContext(ws);
}

const registry = new ToolRegistry();
registry.register(
  createReadTool({ defaultLineLimit: 10, maxLineChars: 20, maxTextBytes: 1000, maxImageBytes: 1000 }),
);
const read = (args: Record<string, unknown>) => registry.invoke("Read", args, ctx());

describe("Read", () => {
  it("numbers lines like cat -n", async () => {
    const output = await read({ file_path: "three.txt" });
    assert.equal(output.output, "     1\talpha\n     2\tbeta\n     3\tgamma");
    assert.equal(output.isError, undefined);
    assert.deepEqual(output.metadata, {
      file_path: join(ws, "three.txt"),
      first_line: 1,
      last_line: 3,
      total_lines: 3,
    });
  });

  it("accepts absolute paths inside the workspace and strips CRLF", async () => {
    const output = await read({ file_path: join(ws, "crlf.txt") });
    assert.equal(output.output, "     1\tone\n     2\ttwo");
  });

  it("honours offset and limit and says how to continue", async () => {
    const output = await read({ file_path: "long.txt", offset: 5, limit: 2 });
    assert.equal(output.output, "     5\tline 5\n     6\tline 6\n(lines 5-6 of 30; continue with offset 7)");
    const defaulted = await read({ file_path: "long.txt" });
    assert.match(defaulted.output, /^ {5}1\tline 1\n/);
    assert.match(defaulted.output, /\n {4}10\tline 10\n\(lines 1-10 of 30; continue with offset 11\)$/);
    const tail = await read({ file_path: "long.txt", offset: 29 });
    assert.equal(tail.output, "    29\tline 29\n    30\tline 30\n(lines 29-30 of 30)");
  });

  it("refuses an offset past the end", async () => {
    const output = await read({ file_path: "three.txt", offset: 4 });
    assert.equal(output.isError, true);
    assert.equal(output.output, "offset 4 is past the end of three.txt, which has 3 lines");
  });

  it("cuts very long lines", async () => {
    const output = await read({ file_path: "wide.txt" });
    assert.equal(output.output, `     1\t${"w".repeat(20)} … [line cut: 50 characters]\n     2\tshort`);
  });

  it("says when a file is empty", async () => {
    const output = await read({ file_path: "empty.txt" });
    assert.equal(output.output, "(empty.txt is empty)");
    assert.equal(output.isError, undefined);
  });

  it("returns images as base64 with their media type", async () => {
    for (const name of ["pixel.png", "pixel.dat"]) {
      const output = await read({ file_path: name });
      assert.equal(output.outputType, "image");
      assert.equal(output.output, PNG_BASE64);
      assert.deepEqual(output.metadata, { file_path: join(ws, name), media_type: "image/png", bytes: 70 });
    }
  });

  it("refuses binary files, directories, oversized files and missing files", async () => {
    const binary = await read({ file_path: "blob.txt" });
    assert.equal(binary.isError, true);
    assert.match(binary.output, /^blob\.txt is a binary file \(4 bytes\)/);
    const dir = await read({ file_path: "dir" });
    assert.equal(dir.isError, true);
    assert.match(dir.output, /dir is a directory/);
    const big = await read({ file_path: "big.txt" });
    assert.equal(big.isError, true);
    assert.match(big.output, /big\.txt is 2000 bytes, over Read's limit of 1000/);
    const missing = await read({ file_path: "nope.txt" });
    assert.deepEqual(missing, { output: "No such file or directory: nope.txt", isError: true });
  });

  it("refuses oversized images", async () => {
    const small = new ToolRegistry();
    small.register(createReadTool({ maxImageBytes: 10 }));
    const output = await small.invoke("Read", { file_path: "pixel.png" }, ctx());
    assert.equal(output.isError, true);
    assert.match(output.output, /image of 70 bytes; Read accepts images up to 10 bytes/);
  });

  it("describes calls in one line", () => {
    const tool = createReadTool();
    assert.equal(tool.describe?.({ file_path: "src/main.rs" }), "Read src/main.rs");
    assert.equal(tool.describe?.({ file_path: "a.ts", offset: 10, limit: 5 }), "Read a.ts (lines 10-14)");
    assert.equal(tool.describe?.({ file_path: "a.ts", offset: 10 }), "Read a.ts (from line 10)");
  });
});
