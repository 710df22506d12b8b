/**
 * Stopping real children: the owner's graceful step (a JSON-RPC `shutdown` here), then 1 s for the
 * process to exit, then SIGKILL of the whole process group — so a child that acknowledges and
 * lingers, one that ignores SIGTERM, and anything it spawned are all gone afterwards.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { JsonRpcPeer } from "@nexo/wire";
import { ProcessGroupRegistry } from "../../src/extensions/reaper.js";
import {
  type ExitEvent,
  type Incarnation,
  StartAbortedError,
  Supervisor,
  type SupervisorOptions,
} from "../../src/extensions/supervisor.js";
import { fixture, isGone, pidsWithMarker, recordingLogger, waitUntil } from "../fixtures/processes.js";

/** A supervisor over rpc-child.mjs whose owner talks JSON-RPC and says goodbye with `shutdown`. */
function rpcSupervisor(flags: string[], options: Partial<SupervisorOptions> = {}) {
  const peers = new Map<number, JsonRpcPeer>();
  const supervisor = new Supervisor({
    id: "stoppable",
    spawn: { command: process.execPath, args: [fixture("rpc-child.mjs"), ...flags], env: {} },
    onStarted: (incarnation) => {
      peers.set(
        incarnation.number,
        JsonRpcPeer.overStreams({ input: incarnation.stdout, output: incarnation.stdin, name: "stoppable" }),
      );
    },
    shutdown: (incarnation) =>
      peers.get(incarnation.number)!.request("shutdown", { reason: "host requested" }, { timeoutMs: 2_000 }),
    ...options,
  });
  const exits: ExitEvent[] = [];
  supervisor.on("exit", (exit) => exits.push(exit));
  return { supervisor, exits, peer: (incarnation: Incarnation) => peers.get(incarnation.number)! };
}

/**
 * Upper bounds tell "stopped when the rule says" from "hung"; on a loaded machine a stop that
 * should take a few hundred ms has taken over 2 s, so they are loose. The lower bounds (the grace
 * was honoured) are exact.
 */
const SLACK_MS = 10_000;

async function timed(action: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await action();
  return performance.now() - start;
}

describe("stop()", () => {
  it("a child that answers shutdown and exits is not killed", async () => {
    const logger = recordingLogger();
    // A 20 s exit grace: returning well within it shows stop() waited for the exit, not the grace.
    const { supervisor, exits } = rpcSupervisor([], { logger, exitGraceMs: 20_000 });
    await supervisor.start();
    const elapsed = await timed(() => supervisor.stop());
    assert.ok(elapsed < SLACK_MS, `stop took ${elapsed} ms`);
    assert.deepEqual(
      exits.map(({ code, signal, requested }) => ({ code, signal, requested })),
      [{ code: 0, signal: null, requested: true }],
    );
    assert.equal(supervisor.state, "stopped");
    assert.ok(!logger.entries.some((entry) => /SIGKILL/.test(entry.message ?? "")));
  });

  it("a child that acknowledges shutdown but never exits, ignoring SIGTERM, is SIGKILLed after 1 s", async () => {
    const logger = recordingLogger();
    const { supervisor, exits } = rpcSupervisor(["--linger", "--ignore-sigterm"], { logger });
    const incarnation = await supervisor.start();
    const elapsed = await timed(() => supervisor.stop());
    assert.ok(elapsed >= 1_000 && elapsed < 1_000 + SLACK_MS, `stop took ${elapsed} ms`);
    assert.equal(exits[0]?.signal, "SIGKILL");
    assert.ok(isGone(incarnation.pid));
    assert.ok(logger.entries.some((entry) => entry.level === "warn" && /SIGKILL/.test(entry.message ?? "")));
  });

  it("a graceful step that never returns is bounded, then the exit grace, then SIGKILL", async () => {
    const { supervisor, exits, peer } = rpcSupervisor(["--ignore-sigterm"], {
      gracefulTimeoutMs: 200,
      exitGraceMs: 300,
    });
    await supervisor.start();
    const elapsed = await timed(() =>
      supervisor.stop({
        shutdown: (incarnation) => peer(incarnation).request("hang", undefined, { timeoutMs: 0 }),
      }),
    );
    assert.ok(elapsed >= 500 && elapsed < 500 + SLACK_MS, `stop took ${elapsed} ms`);
    assert.equal(exits[0]?.signal, "SIGKILL");
  });

  it("without a graceful step the group gets SIGTERM first, SIGKILL only if that is ignored", async () => {
    const polite = new Supervisor({
      id: "sigterm",
      spawn: { command: process.execPath, args: [fixture("rpc-child.mjs"), "--linger"], env: {} },
      exitGraceMs: 20_000, // SIGTERM goes first, not after the grace: stop() returns well within it
    });
    const politeExit = new Promise<ExitEvent>((resolve) => polite.once("exit", resolve));
    await polite.start();
    assert.ok((await timed(() => polite.stop())) < SLACK_MS);
    assert.equal((await politeExit).signal, "SIGTERM");

    const stubborn = new Supervisor({
      id: "sigterm-ignored",
      spawn: {
        command: process.execPath,
        args: [fixture("rpc-child.mjs"), "--linger", "--ignore-sigterm", "--stderr=ready"],
        env: {},
      },
      exitGraceMs: 300,
    });
    const stubbornExit = new Promise<ExitEvent>((resolve) => stubborn.once("exit", resolve));
    // "ready" is written after the SIGTERM handler is installed; a signal before that would kill it.
    const ready = new Promise((resolve) =>
      stubborn.on("stderr", (line) => line === "ready" && resolve(line)),
    );
    await stubborn.start();
    await ready;
    const elapsed = await timed(() => stubborn.stop());
    assert.ok(elapsed >= 300 && elapsed < 300 + SLACK_MS, `stop took ${elapsed} ms`);
    assert.equal((await stubbornExit).signal, "SIGKILL");
    assert.match(stubborn.stderrTail().join("\n"), /ignoring SIGTERM/);
  });

  it("kills a grandchild the child spawned, with the whole process group, even after a clean exit", async () => {
    const marker = `nexo-grandchild-${randomUUID()}`;
    const { supervisor, peer, exits } = rpcSupervisor([]);
    const incarnation = await supervisor.start();
    const grandchild = await peer(incarnation).request<number>("spawn_grandchild", { marker });
    assert.deepEqual(pidsWithMarker(marker), [grandchild]);
    await supervisor.stop();
    assert.equal(exits[0]?.code, 0, "the child itself exited after answering shutdown");
    await waitUntil(() => isGone(grandchild), 2_000, "the grandchild to die");
    assert.deepEqual(pidsWithMarker(marker), []);
  });

  it("also kills what a crashed child left behind, in its group or escaped with setsid", async () => {
    const marker = `nexo-orphan-${randomUUID()}`;
    const { supervisor, peer } = rpcSupervisor([], { restart: { respawn: false } });
    const incarnation = await supervisor.start();
    const grandchild = await peer(incarnation).request<number>("spawn_grandchild", { marker });
    const escapee = await peer(incarnation).request<number>("spawn_escapee", { marker });
    const failed = new Promise((resolve) => supervisor.once("failed", resolve));
    void peer(incarnation)
      .request("crash")
      .catch(() => {});
    await failed;
    await waitUntil(() => isGone(grandchild) && isGone(escapee), 2_000, "the orphans to die");
  });

  it("a clean stop also ends what left the group and the session (setsid): SIGTERM, then SIGKILL", async () => {
    const marker = `nexo-escapee-${randomUUID()}`;
    const { supervisor, peer, exits } = rpcSupervisor([]);
    const incarnation = await supervisor.start();
    const escapee = await peer(incarnation).request<number>("spawn_escapee", { marker });
    const stat = readFileSync(`/proc/${escapee}/stat`, "utf8");
    const [pgrp, session] = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .slice(2, 4)
      .map(Number);
    assert.notEqual(pgrp, incarnation.pid, "the escapee is in another process group");
    assert.notEqual(session, incarnation.pid, "and another session");
    await supervisor.stop();
    assert.equal(exits[0]?.code, 0, "the child itself exited after answering shutdown");
    await waitUntil(() => isGone(escapee), 3_000, "the setsid grandchild to die");
    assert.deepEqual(pidsWithMarker(marker), []);
  });

  it("an escapee with an empty environment is found through its parent, remembered before the stop", async () => {
    const marker = `nexo-scrubbed-${randomUUID()}`;
    const { supervisor, peer } = rpcSupervisor([]);
    const incarnation = await supervisor.start();
    const escapee = await peer(incarnation).request<number>("spawn_escapee", { marker, scrub_env: true });
    assert.equal(readFileSync(`/proc/${escapee}/environ`).length, 0, "no tag to find it by");
    await supervisor.stop();
    await waitUntil(() => isGone(escapee), 3_000, "the scrubbed escapee to die");
  });

  it("registers the process group while the child lives and forgets it afterwards", async () => {
    const registry = new ProcessGroupRegistry();
    const { supervisor } = rpcSupervisor([], { registry });
    const incarnation = await supervisor.start();
    assert.deepEqual(registry.entries(), [{ pgid: incarnation.pid, label: "stoppable" }]);
    await supervisor.stop();
    assert.equal(registry.size, 0);
  });

  it("during backoff cancels the restart; during the start step aborts start()", async () => {
    const crashing = new Supervisor({
      id: "backoff-stop",
      spawn: { command: process.execPath, args: ["-e", "process.exit(1)"], env: {} },
      restart: { initialDelayMs: 60_000, maxDelayMs: 60_000, jitter: 0 },
    });
    const inBackoff = new Promise<void>((resolve) =>
      crashing.on("state", (change) => change.to === "backoff" && resolve()),
    );
    void crashing.start();
    await inBackoff;
    let restarted = false;
    crashing.on("started", () => {
      restarted = true;
    });
    assert.ok((await timed(() => crashing.stop())) < SLACK_MS, "stop did not wait out the 60 s backoff");
    assert.equal(crashing.state, "stopped");
    assert.equal(restarted, false);

    const stuck = new Supervisor({
      id: "stop-while-starting",
      spawn: { command: process.execPath, args: [fixture("rpc-child.mjs")], env: {} },
      onStarted: (incarnation) =>
        new Promise<void>((_, reject) =>
          incarnation.signal.addEventListener("abort", () => reject(new Error("aborted"))),
        ),
    });
    const starting = stuck.start();
    await new Promise((resolve) => stuck.once("started", resolve));
    const [stopResult] = await Promise.all([stuck.stop(), assert.rejects(starting, StartAbortedError)]);
    assert.equal(stopResult, undefined);
    assert.equal(stuck.state, "stopped");
  });

  it("concurrent stop() calls share one stop, and a stopped supervisor can start again", async () => {
    const { supervisor } = rpcSupervisor([]);
    await supervisor.start();
    const first = supervisor.stop();
    assert.equal(supervisor.stop(), first);
    await first;
    const again = await supervisor.start();
    assert.equal(again.number, 2);
    assert.equal(supervisor.state, "running");
    await supervisor.stop();
  });
});
