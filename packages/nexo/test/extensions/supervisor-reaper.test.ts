/**
 * The daemon never exits leaving a child behind: a real parent process (fixtures/reaper-parent.ts)
 * starts a supervised child that ignores SIGTERM plus a grandchild and a setsid escapee, and then
 * dies without stopping its supervisor — by SIGTERM, by process.exit, by an uncaught exception, by
 * an unhandled rejection. Every time, all three descendants must be gone.
 */
import assert from "node:assert/strict";
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import type { Readable } from "node:stream";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { killProcessGroup, ProcessGroupRegistry } from "../../src/extensions/reaper.js";
import { fixture, isGone, pidsWithMarker, waitUntil } from "../fixtures/processes.js";

const repoRoot = fileURLToPath(new URL("../../../..", import.meta.url));

interface Parent {
  process: ChildProcessByStdio<null, Readable, Readable>;
  child: number;
  grandchild: number;
  escapee: number;
  stderr: () => string;
}

async function startParent(mode: string, marker: string): Promise<Parent> {
  const parent = spawn(
    process.execPath,
    ["--conditions=@nexo/source", "--import", "tsx", fixture("reaper-parent.ts"), mode, marker],
    { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  parent.stderr.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  let stdout = "";
  parent.stdout.setEncoding("utf8");
  const line = new Promise<string>((resolve, reject) => {
    parent.stdout.on("data", (text: string) => {
      stdout += text;
      if (stdout.includes("\n")) resolve(stdout.slice(0, stdout.indexOf("\n")));
    });
    parent.once("exit", () => reject(new Error(`parent exited before reporting: ${stderr}`)));
  });
  const pids = JSON.parse(await line) as { child: number; grandchild: number; escapee: number };
  return { process: parent, ...pids, stderr: () => stderr };
}

async function assertDescendantsGone(parent: Parent, marker: string): Promise<void> {
  await waitUntil(
    () => isGone(parent.child) && isGone(parent.grandchild) && isGone(parent.escapee),
    3_000,
    "the child, the grandchild and the setsid escapee to die",
  );
  assert.deepEqual(pidsWithMarker(marker), []);
}

describe("installExitHooks in a real parent process", () => {
  it("SIGTERM to the parent kills the child group, and the parent still dies of SIGTERM", async () => {
    const marker = `nexo-reaper-${randomUUID()}`;
    const parent = await startParent("signal", marker);
    assert.ok(!isGone(parent.child) && !isGone(parent.grandchild));
    const exited = once(parent.process, "exit");
    parent.process.kill("SIGTERM");
    const [code, signal] = await exited;
    assert.equal(signal, "SIGTERM", `exit code ${code}; stderr: ${parent.stderr()}`);
    await assertDescendantsGone(parent, marker);
  });

  it("with the daemon's own SIGTERM listener, children die and the daemon decides how to exit", async () => {
    const marker = `nexo-reaper-${randomUUID()}`;
    const parent = await startParent("own-handler", marker);
    const exited = once(parent.process, "exit");
    parent.process.kill("SIGTERM");
    assert.deepEqual(await exited, [0, null]);
    await assertDescendantsGone(parent, marker);
  });

  for (const mode of ["exit", "throw", "reject"]) {
    it(`kills the children when the parent dies by ${mode}`, async () => {
      const marker = `nexo-reaper-${randomUUID()}`;
      const parent = await startParent(mode, marker);
      const [code] = await once(parent.process, "exit");
      assert.equal(code, mode === "exit" ? 0 : 1, parent.stderr());
      await assertDescendantsGone(parent, marker);
    });
  }
});

describe("without the exit hooks (control)", () => {
  it("the child and grandchild outlive the parent", async () => {
    const marker = `nexo-reaper-${randomUUID()}`;
    const parent = await startParent("unhooked", marker);
    await once(parent.process, "exit");
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.ok(!isGone(parent.child), "the child survived its parent");
      assert.ok(!isGone(parent.grandchild), "the grandchild survived too");
      assert.ok(!isGone(parent.escapee), "and the escapee");
    } finally {
      killProcessGroup(parent.child, "SIGKILL");
      killProcessGroup(parent.escapee, "SIGKILL");
    }
    await assertDescendantsGone(parent, marker);
  });
});

describe("ProcessGroupRegistry", () => {
  it("refuses ids that would signal everything, and killAll forgets groups that are already gone", () => {
    const registry = new ProcessGroupRegistry();
    assert.throws(() => registry.add(0, "x"), RangeError);
    assert.throws(() => registry.add(1, "x"), RangeError);
    assert.throws(() => registry.add(-5, "x"), RangeError);
    registry.add(2 ** 22 + 12_345, "long gone"); // above 2^22, the largest pid Linux can hand out
    assert.equal(registry.killAll(), 0);
    assert.equal(registry.size, 0);
    assert.equal(killProcessGroup(2 ** 22 + 12_345, "SIGKILL"), false);
  });
});
