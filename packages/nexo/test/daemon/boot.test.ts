/**
 * The daemon end to end with real parts: the loopback channel plugin and the demo tool plugin
 * (real child processes), the local broker, a real SQLite store, the scripted model. A message
 * POSTed to the channel's HTTP endpoint goes through the router to the agent, which calls a
 * plugin tool, and the reply comes back through channel.send_outbound to the HTTP client.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Daemon, type DaemonAgent, type DaemonSpec } from "../../src/daemon/daemon.js";
import { createLogger } from "../../src/log.js";
import { NatsServer } from "../broker/nats-server.js";
import { SLOW_MACHINE_INIT_MS } from "../helpers/daemon-dir.js";
import { endpoint, say } from "../helpers/loopback.js";

const examples = fileURLToPath(new URL("../../../../examples/plugins/", import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z");
  } catch {
    return false;
  }
}

function assistant(workspace: string): DaemonAgent {
  return {
    id: "assistant",
    active: true,
    provider: "scripted",
    model: "nexo-scripted-demo",
    maxTokens: 1024,
    maxTurns: 4,
    workspace,
    mode: "default",
    allow: ["info", "demo_weather"],
    bindings: [{ plugin: "loopback" }],
    queueCap: 8,
  };
}

test("boot, route a message through an agent and a plugin tool, reply through the channel, shut down with no child left", async () => {
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-daemon-"));
  const workspace = mkdtempSync(join(tmpdir(), "nexo-daemon-ws-"));
  const spec: DaemonSpec = {
    stateDir,
    agents: [assistant(workspace)],
    llm: { providers: {}, tenants: {} },
    broker: { type: "local" },
    plugins: { dirs: [join(examples, "loopback-channel"), join(examples, "demo-tools")], settings: {} },
    env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    logger: createLogger({ level: "silent" }),
    shutdownGraceMs: 2000,
  };
  const daemon = await Daemon.start(spec);
  let stopped = false;
  try {
    const summary = daemon.summary();
    assert.deepEqual(summary.agents, ["assistant"]);
    assert.deepEqual(summary.channels, ["loopback"]);
    assert.deepEqual(summary.plugins.map((p) => [p.id, p.state]).sort(), [
      ["demo", "running"],
      ["loopback", "running"],
    ]);
    const url = await endpoint(stateDir);
    const reply = await say(url, "alice", "weather in Paris");
    assert.match(reply, /Paris/);
    assert.match(reply, /DEMO DATA/i);
    // A second contact gets their own session; the first contact's history is kept in the store.
    await say(url, "bob", "hello");
    const sessions = daemon.store.sessions.list();
    assert.deepEqual(sessions.map((s) => s.contact).sort(), ["alice", "bob"]);
    const alice = sessions.find((s) => s.contact === "alice")!;
    const entries = daemon.store.transcripts.entries(alice.id);
    assert.equal(entries[0]!.sourcePlugin, "loopback");
    assert.equal(entries[0]!.senderId, "alice");
    // Every entry of the turn carries its id; the origin is the user message's alone.
    assert.ok(entries[0]!.turnId);
    assert.ok(
      entries.every((e) => e.turnId === entries[0]!.turnId),
      JSON.stringify(entries.map((e) => e.turnId)),
    );
    assert.ok(entries.slice(1).every((e) => e.sourcePlugin === null && e.senderId === null));
    assert.ok(entries.some((e) => e.content.some((b) => b.type === "tool_use" && b.name === "demo_weather")));
    assert.equal(daemon.router.stats().routed, 2);

    const pids = daemon.plugins
      .status()
      .map((p) => p.pid)
      .filter((p): p is number => typeof p === "number");
    assert.equal(pids.length, 2);
    await daemon.stop("test over");
    stopped = true;
    for (const pid of pids) assert.equal(alive(pid), false, `plugin process ${pid} survived the shutdown`);
  } finally {
    if (!stopped) await daemon.stop("test failed");
  }
});

test("two daemons on one NATS server: the channel plugin on A, the agent on B, and a message goes all the way round", async () => {
  const nats = await NatsServer.start();
  const logger = createLogger({ level: "silent" });
  const common = {
    llm: { providers: {}, tenants: {} },
    env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    logger,
    shutdownGraceMs: 2000,
  };
  const stateA = mkdtempSync(join(tmpdir(), "nexo-daemon-a-"));
  const stateB = mkdtempSync(join(tmpdir(), "nexo-daemon-b-"));
  let a: Daemon | undefined;
  let b: Daemon | undefined;
  try {
    a = await Daemon.start({
      ...common,
      stateDir: stateA,
      agents: [],
      broker: { type: "nats", url: nats.url, name: "daemon-a" },
      plugins: { dirs: [join(examples, "loopback-channel")], settings: {} },
    });
    b = await Daemon.start({
      ...common,
      stateDir: stateB,
      agents: [{ ...assistant(mkdtempSync(join(tmpdir(), "nexo-daemon-ws-"))), allow: ["info"] }],
      broker: { type: "nats", url: nats.url, name: "daemon-b" },
      plugins: { dirs: [], settings: {} },
    });
    assert.deepEqual(a.summary().channels, ["loopback"]);
    assert.deepEqual(b.summary().channels, [], "B has no channel plugin of its own");
    // A has no agent bound to loopback, so it does not start the channel itself: start it as an operator would.
    await a.channels.require("loopback").start({ instance: null });
    const url = await endpoint(stateA);
    const reply = await say(url, "erin", "hello from daemon A");
    assert.match(reply, /demo model/i, "the scripted agent on B answered");
    assert.equal(b.router.stats().routed, 1);
    assert.equal(a.router.stats().unbound, 1, "A saw the message too, but no agent of A is bound to it");
    assert.equal(b.store.sessions.list()[0]!.contact, "erin");
  } finally {
    await a?.stop("test over");
    await b?.stop("test over");
    await nats.stop();
  }
});

test("a plugin that crashes mid-turn: the turn ends cleanly, the plugin restarts, the next message works", async () => {
  const kitchen = fileURLToPath(new URL("../fixtures/plugins/kitchen/", import.meta.url));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-daemon-crash-"));
  const daemon = await Daemon.start({
    stateDir,
    agents: [
      {
        ...assistant(mkdtempSync(join(tmpdir(), "nexo-daemon-ws-"))),
        allowedTools: ["kitchen_crash", "kitchen_echo"],
        allow: ["kitchen_crash", "kitchen_echo"],
      },
    ],
    llm: { providers: {}, tenants: {} },
    broker: { type: "local" },
    plugins: { dirs: [join(examples, "loopback-channel"), kitchen], settings: {} },
    env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    logger: createLogger({ level: "silent" }),
    shutdownGraceMs: 2000,
  });
  try {
    const url = await endpoint(stateDir);
    const firstPid = daemon.plugins.status().find((p) => p.id === "kitchen")!.pid;
    const crashed = await say(url, "dana", "kitchen_crash please");
    assert.match(crashed, /kitchen_crash/, "the turn ended with a reply about the failed call");
    for (let i = 0; i < 100; i++) {
      const status = daemon.plugins.status().find((p) => p.id === "kitchen")!;
      if (status.state === "running" && status.pid !== firstPid) break;
      await sleep(50);
    }
    const status = daemon.plugins.status().find((p) => p.id === "kitchen")!;
    assert.equal(status.state, "running");
    assert.equal(status.restarts, 1);
    assert.notEqual(status.pid, firstPid);
    const echoed = await say(url, "dana", "kitchen_echo after the crash");
    assert.match(echoed, /after the crash/);
    assert.equal(daemon.router.stats().turnsFailed, 0);
  } finally {
    await daemon.stop("test over");
  }
});

test("a channel answering -33004 with retry_after_secs: the reply is retried after that wait and delivered", async () => {
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-daemon-ratelimit-"));
  const daemon = await Daemon.start({
    stateDir,
    agents: [assistant(mkdtempSync(join(tmpdir(), "nexo-daemon-ws-")))],
    llm: { providers: {}, tenants: {} },
    broker: { type: "local" },
    plugins: {
      dirs: [join(examples, "loopback-channel")],
      // One reply may wait per recipient; a second one is refused with -33004, retry after 1 s.
      settings: { loopback: { env: { LOOPBACK_OUTBOX_LIMIT: "1", LOOPBACK_RETRY_AFTER_SECS: "1" } } },
    },
    env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    logger: createLogger({ level: "silent" }),
    shutdownGraceMs: 2000,
  });
  try {
    const url = await endpoint(stateDir);
    const post = (text: string) =>
      fetch(`${url}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ from: "frank", text }),
      });
    await post("hello one");
    for (let i = 0; i < 100 && daemon.router.stats().repliesSent < 1; i++) await sleep(20);
    const started = Date.now();
    await post("hello two"); // its reply finds the outbox full
    await sleep(300);
    assert.equal(daemon.router.stats().repliesSent, 1, "the second reply is waiting for the retry");
    const first = (await (await fetch(`${url}/messages?to=frank&timeout=1000`)).json()) as {
      messages: unknown[];
    };
    assert.equal(first.messages.length, 1);
    for (let i = 0; i < 200 && daemon.router.stats().repliesSent < 2; i++) await sleep(20);
    assert.equal(daemon.router.stats().repliesSent, 2);
    assert.equal(daemon.router.stats().replyFailures, 0);
    assert.ok(Date.now() - started >= 900, "the retry waited for retry_after_secs");
    const second = (await (await fetch(`${url}/messages?to=frank&timeout=1000`)).json()) as {
      messages: unknown[];
    };
    assert.equal(second.messages.length, 1);
  } finally {
    await daemon.stop("test over");
  }
});

const kitchenDir = fileURLToPath(new URL("../fixtures/plugins/kitchen/", import.meta.url));
const minimalDir = fileURLToPath(new URL("../fixtures/plugins/minimal/", import.meta.url));

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

test("a plugin in a restart loop does not hold up boot: ready after its first attempt, restarts go on behind", async () => {
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-daemon-loop-"));
  const daemon = await Daemon.start({
    stateDir,
    agents: [assistant(mkdtempSync(join(tmpdir(), "nexo-daemon-ws-")))],
    llm: { providers: {}, tenants: {} },
    broker: { type: "local" },
    plugins: {
      dirs: [minimalDir, kitchenDir],
      settings: {
        kitchen: {
          env: { FIXTURE_INIT: "crash" },
          // A loop that would take 3 × 3 s before giving up, if boot waited for it.
          restart: { respawn: true, maxRestarts: 3, initialDelayMs: 3_000, maxDelayMs: 3_000, jitter: 0 },
        },
      },
    },
    env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    logger: createLogger({ level: "silent" }),
    shutdownGraceMs: 2000,
  });
  try {
    const kitchen = () => daemon.plugins.status().find((p) => p.id === "kitchen")!;
    // Ready came after the first attempt only: the plugin waits for its first restart.
    assert.equal(kitchen().state, "backoff");
    assert.equal(kitchen().restarts, 0);
    assert.match(kitchen().lastError?.message ?? "", /exited with code 1/);
    assert.deepEqual(
      daemon.summary().plugins.find((p) => p.id === "minimal"),
      { id: "minimal", state: "running" },
    );
    // The restarts go on in the background, per the policy.
    await waitFor(() => kitchen().restarts >= 1, 5_000, "the first background restart");
  } finally {
    await daemon.stop("test over");
  }
});

test("a plugin that comes up on a later attempt is wired then, and its bound channel is started", async () => {
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-daemon-late-"));
  const daemon = await Daemon.start({
    stateDir,
    agents: [
      {
        ...assistant(mkdtempSync(join(tmpdir(), "nexo-daemon-ws-"))),
        bindings: [{ plugin: "kitchen_chat" }],
      },
    ],
    llm: { providers: {}, tenants: {} },
    broker: { type: "local" },
    plugins: {
      dirs: [kitchenDir],
      settings: {
        kitchen: {
          env: { FIXTURE_INIT: "crash-first" },
          restart: { respawn: true, maxRestarts: 3, initialDelayMs: 300, jitter: 0 },
        },
      },
    },
    env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    logger: createLogger({ level: "silent" }),
    shutdownGraceMs: 2000,
  });
  try {
    const kitchen = () => daemon.plugins.status().find((p) => p.id === "kitchen")!;
    assert.equal(kitchen().state, "backoff");
    assert.deepEqual(daemon.channels.kinds(), []);
    await waitFor(() => kitchen().state === "running", 5_000, "the second attempt to succeed");
    await waitFor(() => daemon.channels.kinds().includes("kitchen_chat"), 2_000, "the channel wrapper");
    const host = daemon.plugins.host("kitchen")!;
    const params = { plugin_id: "kitchen", tool_name: "kitchen_stats", args: {}, agent_id: "assistant" };
    let channelCalls: string[] = [];
    for (let i = 0; i < 100 && !channelCalls.includes("start:kitchen_chat:null"); i++) {
      if (i > 0) await sleep(30);
      const stats = (await host.request("tool.invoke", params, { timeoutMs: 2_000 })) as {
        channel: string[];
      };
      channelCalls = stats.channel;
    }
    assert.deepEqual(channelCalls, ["start:kitchen_chat:null"], "channel.start once, on the late plugin");
  } finally {
    await daemon.stop("test over");
  }
});
