/**
 * The directory↔symlink swap race, from the attacker's side: a real concurrent process swaps a
 * workspace directory for a symlink to a directory outside, as fast as it can, while the file
 * tools read, write, edit and search through it thousands of times. A path check followed by an
 * open by path loses this race now and then; an open walked from directory descriptors never does.
 */
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { ToolOutput } from "../../../src/engine/types.js";
import { fileTools, startSwapper as swap } from "../../helpers/file-tools.js";

const ATTEMPTS = Number(process.env.NEXO_RACE_ATTEMPTS ?? 2000);
const SECRET = "OUTSIDE-SECRET";

let root: string;
let ws: string;
let outside: string;

let call: (name: string, args: Record<string, unknown>) => Promise<ToolOutput>;

/** Starts the swapper on ws/d ↔ symlink to `outside`; resolves once it has swapped at least once. */
function startSwapper(): Promise<{ stop: () => Promise<number> }> {
  return swap(join(ws, "d"), outside);
}

before(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "nexo-race-")));
  ws = join(root, "ws");
  outside = join(root, "outside");
  mkdirSync(join(ws, "d"), { recursive: true });
  mkdirSync(outside);
  call = fileTools(ws);
});
after(() => rmSync(root, { recursive: true, force: true }));

/** A fresh ws/d, whatever state the last swapper was stopped in (never following a symlink). */
function resetFiles(): void {
  rmSync(join(ws, "d"), { recursive: true, force: true });
  rmSync(join(ws, "d.real"), { recursive: true, force: true });
  mkdirSync(join(ws, "d"));
  writeFileSync(join(ws, "d", "f.txt"), "inside marker\n");
  writeFileSync(join(outside, "f.txt"), `${SECRET} marker\n`);
  rmSync(join(outside, "new.txt"), { force: true });
}

describe("the directory↔symlink swap race", { concurrency: false }, () => {
  it(`Read never returns a file outside the workspace (${ATTEMPTS} attempts)`, async () => {
    resetFiles();
    const swapper = await startSwapper();
    let escapes = 0;
    let inside = 0;
    try {
      for (let i = 0; i < ATTEMPTS; i++) {
        const result = await call("Read", { file_path: "d/f.txt" });
        if (result.output.includes(SECRET)) escapes++;
        else if (!result.isError) inside++;
      }
    } finally {
      const swaps = await swapper.stop();
      assert.ok(swaps > 0, "the swapper never swapped");
    }
    assert.equal(escapes, 0, `${escapes} of ${ATTEMPTS} reads returned the outside file`);
    assert.ok(inside > 0, "no read ever saw the real directory: the race was not exercised");
  });

  it(`Write never creates a file outside the workspace (${ATTEMPTS} attempts)`, async () => {
    resetFiles();
    const swapper = await startSwapper();
    let escapes = 0;
    let written = 0;
    try {
      for (let i = 0; i < ATTEMPTS; i++) {
        const result = await call("Write", { file_path: "d/new.txt", content: `attempt ${i}\n` });
        if (!result.isError) written++;
        if (existsSync(join(outside, "new.txt"))) {
          escapes++;
          unlinkSync(join(outside, "new.txt"));
        }
      }
    } finally {
      await swapper.stop();
    }
    assert.equal(escapes, 0, `${escapes} of ${ATTEMPTS} writes landed outside the workspace`);
    assert.ok(written > 0, "no write ever succeeded: the race was not exercised");
  });

  it(`Edit never reads or changes a file outside the workspace (${ATTEMPTS} attempts)`, async () => {
    resetFiles();
    const swapper = await startSwapper();
    let escapes = 0;
    let edited = 0;
    try {
      for (let i = 0; i < ATTEMPTS; i++) {
        const [from, to] = i % 2 === 0 ? ["marker", "MARKER"] : ["MARKER", "marker"];
        const result = await call("Edit", { file_path: "d/f.txt", old_string: from, new_string: to });
        if (result.output.includes(SECRET)) escapes++;
        else if (!result.isError) edited++;
      }
    } finally {
      await swapper.stop();
    }
    const outsideNow = readFileSync(join(outside, "f.txt"), "utf8");
    assert.equal(outsideNow, `${SECRET} marker\n`, "the outside file was changed");
    assert.equal(escapes, 0, `${escapes} of ${ATTEMPTS} edits showed the outside file`);
    assert.ok(edited > 0, "no edit ever succeeded: the race was not exercised");
  });

  it(`Grep and Glob never search or list outside the workspace (${ATTEMPTS / 2} attempts each)`, async () => {
    resetFiles();
    writeFileSync(join(outside, "only-outside.txt"), `${SECRET}\n`);
    const swapper = await startSwapper();
    let escapes = 0;
    let found = 0;
    try {
      for (let i = 0; i < ATTEMPTS / 2; i++) {
        const grep = await call("Grep", { pattern: "marker|OUTSIDE", output_mode: "content" });
        if (grep.output.includes(SECRET)) escapes++;
        else if (grep.output.includes("inside marker")) found++;
        const glob = await call("Glob", { pattern: "**/*.txt" });
        if (glob.output.includes("only-outside")) escapes++;
      }
    } finally {
      await swapper.stop();
    }
    assert.equal(escapes, 0, `${escapes} searches reached outside the workspace`);
    assert.ok(found > 0, "no search ever saw the real directory: the race was not exercised");
  });
});
