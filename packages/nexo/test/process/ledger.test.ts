/**
 * What a SIGKILLed daemon leaves behind is reaped at the next start, from the child ledger: a real
 * stand-in daemon (fixtures/reaper-parent.ts, mode "ledger") with a child that ignores stdin EOF and SIGTERM, its
 * grandchild and a setsid escapee is SIGKILLed; they survive it; `reapOrphans` ends all three. And
 * the ledger never signals what it cannot prove is the recorded process: a run whose owner lives
 * is left alone, and a recorded pid that now belongs to another process is not touched.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { currentProcessIdentity } from "../../src/process/identity.js";
import { ChildLedger, reapOrphans } from "../../src/process/ledger.js";
import { runToken } from "../../src/process/lineage.js";
import { fixture, isGone, pidsWithMarker, waitUntil } from "../fixtures/processes.js";

const repoRoot = fileURLToPath(new URL("../../../..", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "nexo-ledger-"));
const strays: ChildProcess[] = [];
after(() => {
  for (const stray of strays) stray.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

/** A process that lives until killed, in a group of its own, with `marker` on its command line. */
function bystander(marker: string): ChildProcess {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", marker], {
    stdio: "ignore",
    detached: true,
  });
  strays.push(child);
  return child;
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await once(child, "exit");
  return child.pid!;
}

describe("reapOrphans after a daemon was SIGKILLed", () => {
  it("stops the child that ignored stdin EOF, its grandchild and its setsid escapee", async () => {
    const dir = join(root, "children");
    const marker = `nexo-ledger-${randomUUID()}`;
    const parent = spawn(
      process.execPath,
      ["--conditions=@nexo/source", "--import", "tsx", fixture("reaper-parent.ts"), "ledger", marker, dir],
      { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    parent.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    const [line] = (await Promise.race([
      once(parent.stdout.setEncoding("utf8"), "data"),
      once(parent, "exit").then(() => {
        throw new Error(`the parent exited: ${stderr}`);
      }),
    ])) as [string];
    const pids = JSON.parse(line) as { child: number; grandchild: number; escapee: number };
    const runs = readdirSync(dir);
    assert.equal(runs.length, 1, "the parent's run is on disk");
    assert.ok(existsSync(join(dir, runs[0]!, `${pids.child}.json`)), "with its child");

    parent.kill("SIGKILL");
    await once(parent, "exit");
    await sleep(300);
    assert.ok(!isGone(pids.child), "no exit hook ran: the child ignored stdin EOF and lives on");
    assert.ok(!isGone(pids.grandchild) && !isGone(pids.escapee));

    const report = reapOrphans(dir);
    assert.equal(report.reaped.length, 1);
    assert.equal(report.reaped[0]?.run, runs[0]);
    assert.deepEqual(report.reaped[0]?.children, ["left-behind"]);
    assert.match(report.reaped[0]?.reason ?? "", /not running/);
    assert.deepEqual(
      [...(report.reaped[0]?.killed ?? [])].sort(),
      [pids.child, pids.grandchild, pids.escapee].sort(),
    );
    await waitUntil(
      () => isGone(pids.child) && isGone(pids.grandchild) && isGone(pids.escapee),
      3_000,
      "the left-behind processes to die",
    );
    assert.deepEqual(pidsWithMarker(marker), []);
    assert.deepEqual(readdirSync(dir), [], "the run is forgotten");
    assert.deepEqual(reapOrphans(dir), { reaped: [], skipped: [] });
  });
});

describe("the ledger never signals a process it cannot prove is the recorded one", () => {
  it("leaves a run alone while its owner lives", () => {
    const dir = join(root, "alive");
    const marker = `nexo-ledger-alive-${randomUUID()}`;
    const child = bystander(marker);
    const run = "aaaaaaaaaaaa";
    mkdirSync(join(dir, run), { recursive: true });
    writeFileSync(join(dir, run, "owner.json"), JSON.stringify(currentProcessIdentity()));
    writeFileSync(join(dir, run, `${child.pid}.json`), JSON.stringify({ pgid: child.pid, label: "x" }));
    const report = reapOrphans(dir);
    assert.deepEqual(report.reaped, []);
    assert.deepEqual(report.skipped, [{ run, reason: `pid ${process.pid} is running` }]);
    assert.ok(!isGone(child.pid!));
  });

  it("does not signal a recorded pid whose start time differs (the pid was reused)", async () => {
    const dir = join(root, "reused");
    const marker = `nexo-ledger-reused-${randomUUID()}`;
    const child = bystander(marker);
    const run = "bbbbbbbbbbbb";
    mkdirSync(join(dir, run), { recursive: true });
    const owner = { ...currentProcessIdentity(), pid: await deadPid() };
    writeFileSync(join(dir, run, "owner.json"), JSON.stringify(owner));
    // The record names the bystander's pid, but a process that started at another time.
    const record = { pgid: child.pid, label: "ghost", tag: `${run}.1`, startTicks: "1" };
    writeFileSync(join(dir, run, `${child.pid}.json`), JSON.stringify(record));
    const report = reapOrphans(dir);
    assert.equal(report.reaped.length, 1);
    assert.deepEqual(report.reaped[0]?.killed, []);
    await sleep(100);
    assert.ok(!isGone(child.pid!), "the bystander was not signalled");
    assert.ok(!existsSync(join(dir, run)));
  });

  it("does not judge its own run, nor a directory that is not a run", () => {
    const dir = join(root, "own");
    const ledger = ChildLedger.open(dir);
    mkdirSync(join(dir, "not-a-run"));
    assert.deepEqual(reapOrphans(dir), { reaped: [], skipped: [] });
    assert.ok(existsSync(join(dir, runToken(), "owner.json")));
    ledger.close();
    assert.ok(!existsSync(join(dir, runToken())));
  });
});
