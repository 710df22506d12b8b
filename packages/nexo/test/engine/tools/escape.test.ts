/**
 * Path-escape attempts against the file tools, made the way a model (or a prompt injection) would:
 * through the registry, with only the arguments under its control.
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
import { join, relative } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { builtinTools } from "../../../src/engine/tools/builtins.js";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import type { ToolLogger, ToolOutput } from "../../../src/engine/types.js";
import { toolContext } from "../../helpers/tools.js";

let root: string;
let ws: string;
let outside: string;
let evil: string;

before(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "nexo-escape-")));
  ws = join(root, "ws");
  outside = join(root, "outside");
  evil = join(root, "ws-evil");
  mkdirSync(join(ws, "src"), { recursive: true });
  mkdirSync(outside);
  mkdirSync(evil);
  writeFileSync(join(ws, "src", "ok.txt"), "inside\n");
  symlinkSync(outside, join(ws, "link-out"));
  symlinkSync(join(outside, "secret.txt"), join(ws, "secret-link"));
  symlinkSync(join(outside, "planted.txt"), join(ws, "dangling"));
});
beforeEach(() => {
  writeFileSync(join(outside, "secret.txt"), "TOP SECRET\n");
  writeFileSync(join(evil, "loot.txt"), "LOOT\n");
  rmSync(join(outside, "planted.txt"), { force: true });
  rmSync(join(outside, "new.txt"), { force: true });
});
after(() => rmSync(root, { recursive: true, force: true }));

const registry = new ToolRegistry();
registry.registerAll(builtinTools());

function call(
  name: string,
  args: Record<string, unknown>,
  unconfined = false,
  logger?: ToolLogger,
): Promise<ToolOutput> {
  const ctx = toolContext(ws, { unconfined, ...(logger === undefined ? {} : { logger }) });
  return registry.invoke(name, args, ctx);
}

async function assertRefused(
  name: string,
  args: Record<string, unknown>,
  reason = /Path refused/,
): Promise<void> {
  const output = await call(name, args);
  assert.equal(output.isError, true, `${name} ${JSON.stringify(args)} was not refused: ${output.output}`);
  assert.match(output.output, reason, `${name} ${JSON.stringify(args)}: ${output.output}`);
  assert.doesNotMatch(output.output, /TOP SECRET|LOOT/);
}

function assertOutsideUntouched(): void {
  assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), "TOP SECRET\n");
  assert.equal(readFileSync(join(evil, "loot.txt"), "utf8"), "LOOT\n");
  assert.equal(existsSync(join(outside, "planted.txt")), false);
  assert.equal(existsSync(join(outside, "new.txt")), false);
}

// Every way out, as each tool's path argument.
const escapes = (): string[] => [
  "../../etc/passwd",
  "/etc/passwd",
  "../outside/secret.txt",
  "src/../../outside/secret.txt",
  "secret-link",
  "link-out/secret.txt",
  join(evil, "loot.txt"),
  "../ws-evil/loot.txt",
];

describe("file tools refuse to leave the workspace", () => {
  it("Read", async () => {
    for (const path of escapes()) await assertRefused("Read", { file_path: path });
    await assertRefused("Read", { file_path: "src/ok.txt\0" }, /NUL byte/);
  });

  it("Write", async () => {
    for (const path of escapes()) await assertRefused("Write", { file_path: path, content: "pwned" });
    // A new file under a symlinked directory that points outside, and through a dangling link.
    await assertRefused("Write", { file_path: "link-out/new.txt", content: "pwned" });
    await assertRefused("Write", { file_path: "link-out/deeper/new.txt", content: "pwned" });
    await assertRefused("Write", { file_path: "dangling", content: "pwned" });
    await assertRefused("Write", { file_path: "x\0y", content: "pwned" }, /NUL byte/);
    assertOutsideUntouched();
    assert.equal(existsSync(join(outside, "deeper")), false);
  });

  it("Edit", async () => {
    for (const path of escapes()) {
      await assertRefused("Edit", { file_path: path, old_string: "TOP", new_string: "NO" });
    }
    await assertRefused(
      "Edit",
      { file_path: "secret-link\0", old_string: "TOP", new_string: "NO" },
      /NUL byte/,
    );
    assertOutsideUntouched();
  });

  it("Glob (path and pattern)", async () => {
    for (const path of ["..", "/etc", "link-out", evil, "../ws-evil", "../outside"]) {
      await assertRefused("Glob", { pattern: "*", path });
    }
    for (const pattern of ["../outside/*", `${outside}/*`, "link-out/*", "../ws-evil/*", "../../*"]) {
      await assertRefused("Glob", { pattern });
    }
    await assertRefused("Glob", { pattern: "*", path: "src\0" }, /NUL byte/);
  });

  it("Grep (path)", async () => {
    for (const path of [...escapes(), "..", "link-out", evil]) {
      await assertRefused("Grep", { pattern: "SECRET|LOOT", path, output_mode: "content" });
    }
    await assertRefused("Grep", { pattern: "x", path: "src\0" }, /NUL byte/);
    // Searching the whole workspace does not follow the links out either.
    const all = await call("Grep", { pattern: "SECRET|LOOT", output_mode: "content" });
    assert.equal(all.output, "No matches");
  });
});

describe("refusals tell the model only what it sent", () => {
  it("no pid, no real path, no workspace path in the output; the details go to the log", async () => {
    const logged: Record<string, unknown>[] = [];
    const logger: ToolLogger = { warn: (details) => logged.push(details as Record<string, unknown>) };
    const attempts: [string, Record<string, unknown>][] = [
      ["Read", { file_path: "/proc/self/environ" }],
      ["Read", { file_path: "secret-link" }],
      ["Write", { file_path: "link-out/new.txt", content: "x" }],
      ["Grep", { pattern: "x", path: "/proc/self/cwd" }],
      ["Glob", { pattern: "*", path: "/proc/self/root" }],
    ];
    for (const [tool, args] of attempts) {
      const output = await call(tool, args, false, logger);
      assert.equal(output.isError, true);
      assert.match(output.output, /^Path refused: .* is outside the workspace$/);
      for (const detail of [`/proc/${process.pid}`, String(process.pid), root]) {
        assert.ok(!output.output.includes(detail), `${tool} showed ${detail}: ${output.output}`);
      }
    }
    assert.equal(logged.length, attempts.length);
    assert.deepEqual(logged[0], {
      session_id: "s",
      call_id: "c",
      path: "/proc/self/environ",
      reason: "outside_workspace",
      resolved_path: `/proc/${process.pid}/environ`,
      workspace: ws,
    });
    assert.equal(logged[1]!.resolved_path, join(outside, "secret.txt"));
  });
});

describe("unconfined mode lifts the confinement", () => {
  it("Read follows links and absolute paths out", async () => {
    assert.equal((await call("Read", { file_path: "secret-link" }, true)).output, "     1\tTOP SECRET");
    assert.equal((await call("Read", { file_path: join(evil, "loot.txt") }, true)).output, "     1\tLOOT");
    const passwd = await call("Read", { file_path: "../../../../../../etc/passwd" }, true);
    assert.equal(passwd.isError, undefined);
    assert.match(passwd.output, /root/);
  });

  it("Write and Edit change files outside", async () => {
    const written = await call("Write", { file_path: "link-out/new.txt", content: "hello\n" }, true);
    assert.equal(written.output, `Created ${join(outside, "new.txt")} (6 bytes)`);
    assert.equal(readFileSync(join(outside, "new.txt"), "utf8"), "hello\n");
    const edited = await call(
      "Edit",
      { file_path: "secret-link", old_string: "TOP", new_string: "NOT" },
      true,
    );
    assert.equal(edited.isError, undefined);
    assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), "NOT SECRET\n");
  });

  it("Glob and Grep search outside", async () => {
    const found = await call("Glob", { pattern: "*.txt", path: "link-out" }, true);
    assert.equal(found.output, join(outside, "secret.txt"));
    const grep = await call(
      "Grep",
      { pattern: "LOOT", path: relative(ws, evil), output_mode: "content" },
      true,
    );
    assert.equal(grep.output, `${join(evil, "loot.txt")}:1:LOOT`);
  });

  it("still refuses NUL bytes", async () => {
    const output = await call("Read", { file_path: "secret-link\0" }, true);
    assert.equal(output.isError, true);
    assert.match(output.output, /NUL byte/);
  });
});
