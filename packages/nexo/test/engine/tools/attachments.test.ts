/**
 * Files the user attached from outside the workspace (issue 10.4): Read may open exactly those
 * files — named by their real paths in `ToolContext.readableFiles` — and nothing else; no other tool
 * gets further than before. Attempts are made the way a model would, through the registry.
 */
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { builtinTools } from "../../../src/engine/tools/builtins.js";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import type { ToolContext, ToolOutput } from "../../../src/engine/types.js";

let root: string;
let ws: string;
let cache: string;
let attachment: string;

before(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "nexo-attach-")));
  ws = join(root, "ws");
  cache = join(root, "cache");
  mkdirSync(ws);
  mkdirSync(join(cache, "sub"), { recursive: true });
  attachment = join(cache, "upload.txt");
});
beforeEach(() => {
  rmSync(attachment, { force: true });
  writeFileSync(attachment, "ATTACHED\n");
  writeFileSync(join(cache, "sibling.txt"), "SIBLING SECRET\n");
  writeFileSync(join(root, "elsewhere.txt"), "ELSEWHERE SECRET\n");
});
after(() => rmSync(root, { recursive: true, force: true }));

const registry = new ToolRegistry();
registry.registerAll(builtinTools());

function call(name: string, args: Record<string, unknown>): Promise<ToolOutput> {
  const ctx: ToolContext = {
    signal: new AbortController().signal,
    sessionId: "s",
    agentId: "a",
    callId: "c",
    workspace: ws,
    unconfined: false,
    readableFiles: new Set([attachment]),
  };
  return registry.invoke(name, args, ctx);
}

async function assertRefused(name: string, args: Record<string, unknown>): Promise<void> {
  const output = await call(name, args);
  assert.equal(output.isError, true, `${name} ${JSON.stringify(args)} was not refused: ${output.output}`);
  assert.doesNotMatch(output.output, /SECRET/);
}

describe("attachments outside the workspace", () => {
  it("Read opens the attached file, by its path or any spelling of it", async () => {
    for (const path of [attachment, join(cache, "sub", "..", "upload.txt")]) {
      const output = await call("Read", { file_path: path });
      assert.equal(output.isError, undefined, output.output);
      assert.match(output.output, /ATTACHED/);
    }
  });

  it("nothing else outside becomes readable: siblings, parents, `..` tricks", async () => {
    for (const path of [
      join(cache, "sibling.txt"),
      `${attachment}/../sibling.txt`,
      join(cache, "sub", "..", "sibling.txt"),
      join(root, "elsewhere.txt"),
      cache,
      "/etc/passwd",
    ]) {
      await assertRefused("Read", { file_path: path });
    }
  });

  it("a symlink put at the attachment's path afterwards is judged by what it points to", async () => {
    rmSync(attachment);
    symlinkSync(join(cache, "sibling.txt"), attachment);
    await assertRefused("Read", { file_path: attachment });
    // Nor does a link inside the workspace pointing at the attachment's directory widen anything.
    rmSync(join(ws, "to-cache"), { force: true });
    symlinkSync(cache, join(ws, "to-cache"));
    await assertRefused("Read", { file_path: "to-cache/sibling.txt" });
  });

  it("writes stay confined: Write and Edit cannot touch the attachment", async () => {
    await assertRefused("Write", { file_path: attachment, content: "overwritten" });
    await assertRefused("Edit", { file_path: attachment, old_string: "ATTACHED", new_string: "CHANGED" });
    assert.equal(readFileSync(attachment, "utf8"), "ATTACHED\n");
    await assertRefused("Write", { file_path: join(cache, "new.txt"), content: "x" });
    assert.equal(existsSync(join(cache, "new.txt")), false);
  });

  it("searching tools do not reach it either", async () => {
    await assertRefused("Grep", { pattern: "SECRET", path: cache });
    await assertRefused("Grep", { pattern: "ATTACHED", path: attachment });
    await assertRefused("Glob", { pattern: "*", path: cache });
  });
});
