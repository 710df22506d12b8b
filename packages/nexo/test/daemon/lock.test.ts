/**
 * One daemon per state dir. The lock is exercised with real processes (fixtures/lock-holder.ts):
 * a second holder is refused while the first lives, a SIGKILLed holder's lock is taken over,
 * several contenders released at once onto a stale lock produce exactly one winner. Lock files
 * naming live but unrelated processes (pid 1, our parent) with the wrong start time are stale;
 * with the right start time they are not.
 */
import assert from "node:assert/strict";
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { after, afterEach, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  acquireStateLock,
  LOCK_FILE,
  type StateLock,
  StateLockError,
  takeoverMarkerPath,
} from "../../src/daemon/lock.js";
import { judgeOwner, type LockRecord, lockRecordFor } from "../../src/daemon/lock-record.js";
import { currentProcessIdentity, probePid } from "../../src/process/identity.js";
import { fixture, isGone, waitUntil } from "../fixtures/processes.js";

const repoRoot = fileURLToPath(new URL("../../../..", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "nexo-lock-"));
after(() => rmSync(root, { recursive: true, force: true }));

let dirs = 0;
const freshStateDir = (): string => join(root, `state-${++dirs}`);

type Holder = ChildProcessByStdio<Writable, Readable, Readable> & {
  next(): Promise<Record<string, unknown>>;
};
const holders: Holder[] = [];
const locks: StateLock[] = [];
afterEach(async () => {
  for (const lock of locks.splice(0)) lock.release();
  await Promise.all(
    holders.splice(0).map(async (holder) => {
      if (holder.exitCode !== null || holder.signalCode !== null) return;
      const exited = once(holder, "exit");
      holder.kill("SIGKILL");
      await exited;
    }),
  );
});

/** Starts a lock-holder process; `next()` resolves with its next JSON line. */
function startHolder(stateDir: string, waitGo = false): Holder {
  const child = spawn(
    process.execPath,
    [
      "--conditions=@nexo/source",
      "--import",
      "tsx",
      fixture("lock-holder.ts"),
      stateDir,
      ...(waitGo ? ["--wait-go"] : []),
    ],
    { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const holder = Object.assign(child, {
    async next(): Promise<Record<string, unknown>> {
      const line = await lines.next();
      if (line.done) throw new Error(`lock holder ${child.pid} ended without a line; stderr: ${stderr}`);
      return JSON.parse(line.value) as Record<string, unknown>;
    },
  });
  holders.push(holder);
  return holder;
}

function lockFile(stateDir: string): LockRecord {
  return JSON.parse(readFileSync(join(stateDir, LOCK_FILE), "utf8")) as LockRecord;
}

/** A lock file as another process would have written it; `changes` override its fields. */
function writeLock(stateDir: string, changes: Partial<LockRecord>): LockRecord {
  const record = { ...lockRecordFor(currentProcessIdentity(), "someone-else"), ...changes };
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(join(stateDir, LOCK_FILE), JSON.stringify(record));
  return record;
}

/** The start time of a live process, in clock ticks since boot, from /proc. */
function startTicksOf(pid: number): string {
  const probe = probePid(pid);
  assert.ok(probe.alive && probe.startTicks !== null, `pid ${pid} should be alive with a start time`);
  return probe.startTicks;
}

/** The pid of a process that has exited and been reaped: nothing runs under it now. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await once(child, "exit");
  assert.ok(child.pid !== undefined && isGone(child.pid));
  return child.pid;
}

async function refusal(promise: Promise<unknown>): Promise<StateLockError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof StateLockError, `expected a StateLockError, got ${String(error)}`);
    return error;
  }
  assert.fail("the lock was granted");
}

describe("state-dir lock with real processes", () => {
  it("refuses a second daemon while the first lives, naming the owner's pid and since when", async () => {
    const stateDir = freshStateDir();
    const first = startHolder(stateDir);
    const acquired = await first.next();
    assert.equal(acquired.event, "acquired");
    const record = lockFile(stateDir);
    assert.equal(record.pid, first.pid);
    assert.equal(record.process_start, startTicksOf(first.pid!));

    const second = startHolder(stateDir);
    const refused = await second.next();
    assert.equal(refused.event, "refused");
    assert.equal(refused.code, "locked");
    assert.deepEqual(refused.owner, { pid: first.pid, hostname: hostname(), startedAt: record.started_at });
    assert.match(String(refused.message), new RegExp(`pid ${first.pid} .*since ${record.started_at}`));
    const [code] = await once(second, "exit");
    assert.equal(code, 3);

    // The refused daemon did not disturb the lock, and its owner was not signalled.
    assert.deepEqual(lockFile(stateDir), record);
    assert.ok(!isGone(first.pid!));
  });

  it("takes over the lock of a daemon that was SIGKILLed", async () => {
    const stateDir = freshStateDir();
    const first = startHolder(stateDir);
    assert.equal((await first.next()).event, "acquired");
    const exited = once(first, "exit");
    first.kill("SIGKILL");
    await exited;
    assert.equal(lockFile(stateDir).pid, first.pid, "a SIGKILLed daemon leaves its lock file behind");

    const second = startHolder(stateDir);
    const acquired = await second.next();
    assert.equal(acquired.event, "acquired");
    assert.deepEqual((acquired.replaced as { owner: { pid: number } }).owner.pid, first.pid);
    assert.equal(lockFile(stateDir).pid, second.pid);
    assert.deepEqual(leftovers(stateDir), [LOCK_FILE]);

    // A clean stop removes the lock; the next daemon creates a fresh one.
    const stopped = once(second, "exit");
    second.stdin.end();
    assert.deepEqual(await stopped, [0, null]);
    assert.ok(!existsSync(join(stateDir, LOCK_FILE)));
  });

  it("treats an owner that was killed but not yet reaped (a zombie) as dead", async () => {
    // `sh` starts a short child, then execs into `sleep`, which never reaps it: a zombie remains.
    // The child lives 2 s, so that on a loaded machine `sh` has exec'd before it ends (sh itself
    // would reap it).
    const parent = spawn("sh", ["-c", "sleep 2 & echo $!; exec sleep 60"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      const [line] = (await once(createInterface({ input: parent.stdout }), "line")) as [string];
      const zombie = Number(line);
      // After the name: state is field 3, the start time field 22.
      const fields = () => {
        const stat = readFileSync(`/proc/${zombie}/stat`, "utf8");
        return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      };
      await waitUntil(() => fields()[0] === "Z", 15_000, "the zombie");
      const stateDir = freshStateDir();
      writeLock(stateDir, { pid: zombie, process_start: fields()[19]! });
      const lock = await acquireStateLock(stateDir);
      locks.push(lock);
      assert.equal(lock.replaced?.owner.pid, zombie);
      assert.match(lock.replaced.reason, /not running/);
    } finally {
      const exited = once(parent, "exit");
      parent.kill("SIGKILL");
      await exited;
    }
  });

  it("lets exactly one of several daemons racing for a stale lock win", async () => {
    for (let round = 0; round < 3; round++) {
      const stateDir = freshStateDir();
      writeLock(stateDir, { pid: await deadPid() });
      const contenders = Array.from({ length: 4 }, () => startHolder(stateDir, true));
      for (const contender of contenders) assert.equal((await contender.next()).event, "waiting");
      for (const contender of contenders) contender.stdin.write("go\n");
      const results = await Promise.all(contenders.map((contender) => contender.next()));

      const winners = contenders.filter((_, i) => results[i]!.event === "acquired");
      assert.equal(winners.length, 1, `round ${round}: ${JSON.stringify(results)}`);
      const winner = winners[0]!;
      for (const [i, result] of results.entries()) {
        if (contenders[i] === winner) continue;
        assert.equal(result.event, "refused");
        assert.equal(result.code, "locked");
        assert.equal((result.owner as { pid: number }).pid, winner.pid);
      }
      assert.equal(lockFile(stateDir).pid, winner.pid);
      assert.deepEqual(leftovers(stateDir), [LOCK_FILE], "no takeover marker or temp file is left");
    }
  });
});

/** Everything in the state dir: only the lock file should be there. */
function leftovers(stateDir: string): string[] {
  return readdirSync(stateDir).sort();
}

describe("state-dir lock: who counts as the owner", () => {
  it("treats a live but unrelated pid with another start time as a recycled pid (stale)", async () => {
    for (const pid of [1, process.ppid]) {
      const stateDir = freshStateDir();
      writeLock(stateDir, { pid, process_start: String(Number(startTicksOf(pid)) + 1) });
      const lock = await acquireStateLock(stateDir);
      locks.push(lock);
      assert.equal(lock.replaced?.owner.pid, pid);
      assert.match(lock.replaced.reason, /another process/);
      assert.equal(lockFile(stateDir).pid, process.pid);
      assert.ok(!isGone(pid), `pid ${pid} must not have been signalled`);
    }
  });

  it("refuses when the pid is alive with the recorded start time", async () => {
    const stateDir = freshStateDir();
    const record = writeLock(stateDir, { pid: 1, process_start: startTicksOf(1) });
    const error = await refusal(acquireStateLock(stateDir));
    assert.equal(error.code, "locked");
    assert.deepEqual(error.owner, { pid: 1, hostname: record.hostname, startedAt: record.started_at });
    assert.deepEqual(lockFile(stateDir), record, "a refused daemon leaves the lock alone");
  });

  it("takes over the lock of a pid that is not running", async () => {
    const stateDir = freshStateDir();
    const pid = await deadPid();
    writeLock(stateDir, { pid });
    const lock = await acquireStateLock(stateDir);
    locks.push(lock);
    assert.equal(lock.replaced?.owner.pid, pid);
    assert.equal(lockFile(stateDir).lock_id, lock.record.lock_id);
  });

  it("refuses a second lock in the same process", async () => {
    const stateDir = freshStateDir();
    const lock = await acquireStateLock(stateDir);
    locks.push(lock);
    const error = await refusal(acquireStateLock(stateDir));
    assert.equal(error.code, "locked");
    assert.equal(error.owner?.pid, process.pid);
    assert.ok(lock.held());
  });

  it("after a reboot of this host (another boot id) the lock is stale", async () => {
    const stateDir = freshStateDir();
    writeLock(stateDir, { pid: process.ppid, boot_id: "00000000-0000-4000-8000-000000000000" });
    const lock = await acquireStateLock(stateDir);
    locks.push(lock);
    assert.match(lock.replaced?.reason ?? "", /rebooted/);
  });

  it("refuses, as unverifiable, a lock held on another host or in another pid namespace", async () => {
    const cases: Array<[Partial<LockRecord>, RegExp]> = [
      [{ hostname: "elsewhere", boot_id: "00000000-0000-4000-8000-000000000000" }, /host elsewhere/],
      [{ pid_namespace: "pid:[1]" }, /another pid namespace/],
    ];
    for (const [changes, reason] of cases) {
      const stateDir = freshStateDir();
      // The pid is dead here, which proves nothing about a process numbered elsewhere.
      writeLock(stateDir, { pid: await deadPid(), ...changes });
      const error = await refusal(acquireStateLock(stateDir));
      assert.equal(error.code, "unverifiable");
      assert.match(error.message, reason);
      assert.match(error.message, /delete .*daemon\.lock/);
    }
  });

  it("refuses a lock file that is not a lock record, and never guesses", async () => {
    for (const [text, problem] of [
      ["", /empty/],
      ["{not json", /not JSON/],
      [JSON.stringify({ pid: 0 }), /pid/],
    ] as const) {
      const stateDir = freshStateDir();
      mkdirSync(stateDir, { recursive: true });
      writeFileSync(join(stateDir, LOCK_FILE), text);
      const error = await refusal(acquireStateLock(stateDir));
      assert.equal(error.code, "corrupt");
      assert.match(error.message, problem);
      assert.equal(readFileSync(join(stateDir, LOCK_FILE), "utf8"), text);
    }
  });

  it("the verdict never signals: probing refuses pids that address process groups", () => {
    assert.throws(() => probePid(0), RangeError);
    assert.throws(() => probePid(-1), RangeError);
    const self = currentProcessIdentity();
    assert.equal(judgeOwner(lockRecordFor(self, "x"), self).state, "alive");
  });
});

describe("state-dir lock: takeover markers and release", () => {
  it("steps past a takeover abandoned by a taker that died holding its marker", async () => {
    const stateDir = freshStateDir();
    writeLock(stateDir, { pid: await deadPid() });
    const marker = takeoverMarkerPath(join(stateDir, LOCK_FILE))!;
    writeFileSync(marker, JSON.stringify({ ...lockFile(stateDir), pid: await deadPid(), lock_id: "taker" }));

    const lock = await acquireStateLock(stateDir);
    locks.push(lock);
    assert.ok(lock.held());
    assert.deepEqual(leftovers(stateDir), [LOCK_FILE], "the dead taker's marker is cleaned up");
  });

  it("waits for a live taker, then reports busy naming it", async () => {
    const stateDir = freshStateDir();
    writeLock(stateDir, { pid: await deadPid() });
    const text = readFileSync(join(stateDir, LOCK_FILE), "utf8");
    // A marker held by a live process (pid 1, with its real start time): a takeover in progress.
    const marker = takeoverMarkerPath(join(stateDir, LOCK_FILE))!;
    writeFileSync(marker, JSON.stringify({ ...lockFile(stateDir), pid: 1, process_start: startTicksOf(1) }));

    const started = Date.now();
    const error = await refusal(acquireStateLock(stateDir, { busyTimeoutMs: 200 }));
    assert.equal(error.code, "busy");
    assert.match(error.message, /pid 1 /);
    assert.ok(Date.now() - started >= 200);
    assert.equal(readFileSync(join(stateDir, LOCK_FILE), "utf8"), text, "the stale lock is not touched");
    assert.ok(existsSync(marker), "another process's marker is not removed");
  });

  it("release removes the lock only while it is still ours", async () => {
    const stateDir = freshStateDir();
    const lock = await acquireStateLock(stateDir);
    assert.ok(lock.held());
    assert.equal(lock.release(), true);
    assert.ok(!existsSync(join(stateDir, LOCK_FILE)));
    assert.equal(lock.release(), false, "idempotent");

    const again = await acquireStateLock(stateDir);
    // Someone else's record replaces ours (an operator deleted it and another daemon started).
    const successor = writeLock(stateDir, { lock_id: "successor" });
    assert.equal(again.held(), false);
    assert.equal(again.release(), false);
    assert.deepEqual(lockFile(stateDir), successor, "a successor's lock is never removed");
  });

  it("reports a state dir that cannot be created as an io error", async () => {
    const file = join(root, "a-file");
    writeFileSync(file, "");
    const error = await refusal(acquireStateLock(join(file, "state")));
    assert.equal(error.code, "io");
    assert.match(error.message, /cannot create the state dir/);
  });
});
