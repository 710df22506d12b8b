/**
 * Crash handling with real processes: a crash restarts the child after an exponentially growing
 * delay, a crash loop ends in `failed` (and stays there, visibly, with the stderr tail), a failed
 * start step counts as a crash unless it is fatal, and requests in flight to a child that dies fail
 * at once with a typed error.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ConnectionClosedError, JsonRpcPeer } from "@nexo/wire";
import {
  CrashTracker,
  normalizeRestartPolicy,
  restartDelayMs,
  restartPolicyFromManifest,
} from "../../src/extensions/restart-policy.js";
import {
  type FailureInfo,
  FatalStartError,
  type Incarnation,
  StartDeferredError,
  type StateChange,
  Supervisor,
  SupervisorFailedError,
} from "../../src/extensions/supervisor.js";
import { fixture } from "../fixtures/processes.js";

const crashingChild = {
  command: process.execPath,
  args: ["-e", 'process.stderr.write("boom\\n"); setTimeout(() => process.exit(7), 20)'],
  env: {},
};

describe("restart policy", () => {
  it("grows the delay by the factor up to the maximum, spread by the jitter", () => {
    const policy = normalizeRestartPolicy({ initialDelayMs: 100, maxDelayMs: 1_000, factor: 3, jitter: 0 });
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((attempt) => restartDelayMs(policy, attempt)),
      [100, 300, 900, 1_000, 1_000],
    );
    const jittered = normalizeRestartPolicy({ initialDelayMs: 1_000, maxDelayMs: 1_000, jitter: 0.25 });
    assert.equal(
      restartDelayMs(jittered, 1, () => 0),
      750,
    );
    assert.equal(
      restartDelayMs(jittered, 1, () => 1),
      1_250,
    );
  });

  it("forgets crashes older than the window, so a stable child starts again from the first delay", () => {
    const tracker = new CrashTracker(
      normalizeRestartPolicy({ maxRestarts: 2, windowMs: 1_000, initialDelayMs: 10, jitter: 0 }),
    );
    assert.deepEqual(tracker.record(0), { action: "restart", attempt: 1, delayMs: 10 });
    assert.deepEqual(tracker.record(100), { action: "restart", attempt: 2, delayMs: 20 });
    assert.equal(tracker.record(200).action, "give_up");
    tracker.reset();
    assert.equal(tracker.record(5_000).action, "restart");
    assert.deepEqual(tracker.record(6_500), { action: "restart", attempt: 1, delayMs: 10 });
  });

  it("rejects a policy that cannot work, naming the field", () => {
    assert.throws(() => normalizeRestartPolicy({ factor: 0.5 }), /factor/);
    assert.throws(() => normalizeRestartPolicy({ jitter: 2 }), /jitter/);
    assert.throws(() => normalizeRestartPolicy({ initialDelayMs: 10, maxDelayMs: 5 }), /maxDelayMs/);
    assert.throws(() => normalizeRestartPolicy({ maxRestarts: 1.5 }), /maxRestarts/);
  });

  it("reads [plugin.supervisor]: respawn off by default, max_attempts restarts, backoff_ms first delay", () => {
    assert.equal(restartPolicyFromManifest(undefined).respawn, false);
    const policy = restartPolicyFromManifest({ respawn: true, max_attempts: 4, backoff_ms: 250 });
    assert.equal(policy.respawn, true);
    assert.equal(policy.maxRestarts, 4);
    assert.equal(policy.initialDelayMs, 250);
    assert.equal(policy.maxDelayMs, 8_000);
    assert.equal(restartPolicyFromManifest({ respawn: true, backoff_ms: 100_000 }).maxDelayMs, 300_000);
  });
});

describe("crashes of a real child", () => {
  it("restarts with exponential backoff, then gives up on the crash loop and stays failed", async () => {
    const supervisor = new Supervisor({
      id: "crashy",
      spawn: crashingChild,
      restart: {
        maxRestarts: 3,
        windowMs: 60_000,
        initialDelayMs: 100,
        factor: 2,
        maxDelayMs: 10_000,
        jitter: 0,
      },
    });
    const exits: number[] = [];
    const starts: number[] = [];
    const states: StateChange[] = [];
    supervisor.on("exit", () => exits.push(performance.now()));
    supervisor.on("started", () => starts.push(performance.now()));
    supervisor.on("state", (change) => states.push(change));
    const failed = new Promise<FailureInfo>((resolve) => supervisor.once("failed", resolve));

    await supervisor.start();
    const failure = await failed;

    assert.equal(starts.length, 4, "the first start and three restarts");
    assert.equal(exits.length, 4);
    const gaps = [1, 2, 3].map((i) => starts[i]! - exits[i - 1]!);
    [100, 200, 400].forEach((expected, i) => {
      assert.ok(
        gaps[i]! >= expected - 5 && gaps[i]! < expected + 250,
        `gap ${i + 1} was ${gaps[i]} ms, wanted ~${expected}`,
      );
    });
    assert.deepEqual(
      states.filter((change) => change.to === "backoff").map((change) => change.delayMs),
      [100, 200, 400],
    );
    assert.match(failure.reason, /exited with code 7; crash loop: 4 crashes within 60 s/);
    assert.deepEqual(failure.stderrTail, ["boom", "boom", "boom", "boom"]);
    assert.equal(failure.exit?.code, 7);
    assert.equal(supervisor.state, "failed");
    assert.equal(supervisor.failure?.reason, failure.reason);

    await sleep(600);
    assert.equal(supervisor.state, "failed", "a failed child stays failed");
    assert.equal(starts.length, 4, "and is not started again");
    assert.equal(supervisor.incarnation, undefined);
  });

  it("fails on the first crash when respawn is off, and start() reports it if nothing ever ran", async () => {
    const supervisor = new Supervisor({
      id: "once",
      spawn: { command: process.execPath, args: ["-e", "process.exit(2)"], env: {} },
      onStarted: () => sleep(2_000),
      restart: { respawn: false },
    });
    await assert.rejects(supervisor.start(), (error: unknown) => {
      assert.ok(error instanceof SupervisorFailedError);
      assert.match(error.reason, /exited with code 2; respawn is disabled/);
      return true;
    });
    assert.equal(supervisor.state, "failed");
  });

  it("start({firstAttemptOnly}) settles after the first attempt; the restarts go on in the background", async () => {
    // The child crashes on its first run only (a marker file says it ran before); a healthy run
    // says "ready" on stdout, which is the start step.
    const marker = join(mkdtempSync(join(tmpdir(), "nexo-first-")), "ran");
    const supervisor = new Supervisor({
      id: "flaky",
      spawn: {
        command: process.execPath,
        args: [
          "-e",
          `const fs = require("node:fs"); if (!fs.existsSync(${JSON.stringify(marker)})) {
             fs.writeFileSync(${JSON.stringify(marker)}, ""); process.exit(5); }
           process.stdout.write("ready\\n"); setInterval(() => {}, 1000);`,
        ],
        env: {},
      },
      onStarted: (incarnation) => once(incarnation.stdout, "data").then(() => undefined),
      restart: { respawn: true, maxRestarts: 2, initialDelayMs: 200, jitter: 0 },
    });
    try {
      const running = new Promise<Incarnation>((resolve) => supervisor.once("running", resolve));
      const error = await supervisor.start({ firstAttemptOnly: true }).then(
        () => assert.fail("the first attempt crashed"),
        (e: unknown) => e,
      );
      assert.ok(error instanceof StartDeferredError, String(error));
      assert.match(error.reason, /exited with code 5/);
      assert.equal(error.retryInMs, 200);
      assert.equal(supervisor.state, "backoff");
      assert.equal((await running).number, 2);
      assert.equal(supervisor.state, "running");
    } finally {
      await supervisor.stop();
    }
  });

  it("a child that cannot be spawned fails with the spawn error", async () => {
    const supervisor = new Supervisor({
      id: "missing",
      spawn: { command: "/nonexistent/plugin-binary", env: {} },
      restart: { respawn: false },
    });
    await assert.rejects(
      supervisor.start(),
      /could not be spawned \(spawn \/nonexistent\/plugin-binary ENOENT\)/,
    );
  });

  it("a failing start step counts as a crash and is retried; a fatal one fails at once and kills the child", async () => {
    let attempts = 0;
    const retried = new Supervisor({
      id: "flaky-handshake",
      spawn: { command: process.execPath, args: [fixture("rpc-child.mjs")], env: {} },
      restart: { initialDelayMs: 20, jitter: 0 },
      onStarted: () => {
        attempts += 1;
        if (attempts < 3) throw new Error(`handshake ${attempts} failed`);
      },
    });
    const running = await retried.start();
    assert.equal(running.number, 3);
    assert.equal(retried.state, "running");
    await retried.stop();

    let pid = 0;
    const fatal = new Supervisor({
      id: "impostor",
      spawn: { command: process.execPath, args: [fixture("rpc-child.mjs")], env: {} },
      onStarted: (incarnation) => {
        pid = incarnation.pid;
        throw new FatalStartError('initialize answered with plugin id "other", expected "impostor"');
      },
    });
    await assert.rejects(fatal.start(), /expected "impostor"/);
    assert.equal(fatal.state, "failed");
    assert.throws(() => process.kill(pid, 0), { code: "ESRCH" });
  });

  it("a start step that never finishes is bounded by startTimeoutMs", async () => {
    const supervisor = new Supervisor({
      id: "slow-handshake",
      spawn: { command: process.execPath, args: [fixture("rpc-child.mjs")], env: {} },
      startTimeoutMs: 150,
      restart: { respawn: false },
      onStarted: () => new Promise<void>(() => {}),
    });
    const started = performance.now();
    await assert.rejects(supervisor.start(), /start failed: the start step did not finish within 150 ms/);
    assert.ok(performance.now() - started < 1_500);
  });
});

describe("requests in flight to a child that dies", () => {
  it("fail at once with ConnectionClosedError, and the restarted child gets a fresh peer", async () => {
    const peers: JsonRpcPeer[] = [];
    const supervisor = new Supervisor({
      id: "dies-mid-call",
      spawn: { command: process.execPath, args: [fixture("rpc-child.mjs")], env: {} },
      restart: { initialDelayMs: 50, jitter: 0 },
      onStarted: async (incarnation: Incarnation) => {
        const peer = JsonRpcPeer.overStreams({
          input: incarnation.stdout,
          output: incarnation.stdin,
          name: "dies-mid-call",
        });
        peers.push(peer);
        assert.equal(await peer.request("ping"), "pong");
      },
    });
    await supervisor.start();
    const first = peers[0]!;
    const pending = first.request("hang", undefined, { timeoutMs: 30_000 });
    const pendingToo = first.request("hang", undefined, { timeoutMs: 30_000 });
    const crashedAt = performance.now();
    void first.request("crash", { code: 9 }).catch(() => {});

    await assert.rejects(pending, ConnectionClosedError);
    await assert.rejects(pendingToo, ConnectionClosedError);
    const elapsed = performance.now() - crashedAt;
    assert.ok(elapsed < 1_000, `in-flight requests took ${elapsed} ms to fail`);

    const restarted = await new Promise<Incarnation>((resolve) => supervisor.once("running", resolve));
    assert.equal(restarted.number, 2);
    assert.equal(await peers[1]!.request("ping"), "pong");
    await supervisor.stop();
  });
});
