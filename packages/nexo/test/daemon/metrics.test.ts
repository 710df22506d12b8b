/**
 * The daemon's metrics: events counted through the daemon's calls, state read at scrape time from
 * a real LocalBroker and a real PluginManager (a plugin killed for real shows as a restart), a
 * registry of their own, and a scrape that survives a failing source.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, describe, it } from "node:test";
import { register as globalRegistry } from "prom-client";
import { createEvent } from "../../src/broker/event.js";
import { LocalBroker } from "../../src/broker/local.js";
import { Metrics, type SessionQueueStats } from "../../src/daemon/metrics.js";
import { PluginManager } from "../../src/extensions/plugins/index.js";
import { ProcessGroupRegistry } from "../../src/extensions/reaper.js";
import { baseEnv, pluginDir } from "../fixtures/plugins/harness.js";
import { recordingLogger, waitUntil } from "../fixtures/processes.js";

const root = mkdtempSync(join(tmpdir(), "nexo-metrics-"));
after(() => rmSync(root, { recursive: true, force: true }));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

function localBroker(queueDepth?: number): LocalBroker {
  const broker = new LocalBroker({
    logger: recordingLogger() as never,
    ...(queueDepth ? { queueDepth } : {}),
  });
  cleanups.push(() => broker.close({ drainTimeoutMs: 0 }));
  return broker;
}

/**
 * The value of one sample in Prometheus text format, or undefined when the series is absent.
 * `labels` must list the sample's labels in the order prom-client prints them.
 */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const rendered = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .join(",");
  const prefix = rendered === "" ? `${name} ` : `${name}{${rendered}} `;
  const line = text.split("\n").find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(prefix.length));
}

async function scrape(metrics: Metrics): Promise<string> {
  return (await metrics.render()).body;
}

/**
 * Every metric family a scrape shows with the process metrics on, in the order it shows them, with
 * its type and help text: what a dashboard or alert reads. prom-client loads on first use, and the
 * daemon requires only the parts of it it uses (daemon/metrics.ts); this pins that the output is
 * the same as through the package's index.
 */
const FAMILIES: [name: string, type: string, help: string][] = [
  ["nexo_turns_total", "counter", "Turns finished, by agent and outcome (the turn's end reason)."],
  [
    "nexo_turn_duration_seconds",
    "histogram",
    "Wall-clock duration of a turn, from the message to the end of the reply.",
  ],
  [
    "nexo_tool_calls_total",
    "counter",
    "Tool calls finished, by tool and status (success, error, cancelled).",
  ],
  [
    "nexo_tool_call_duration_seconds",
    "histogram",
    "Duration of a tool call's execution (approval wait excluded).",
  ],
  [
    "nexo_llm_request_duration_seconds",
    "histogram",
    "Duration of one LLM request until its response is complete, by provider and outcome.",
  ],
  ["nexo_messages_routed_total", "counter", "Inbound messages routed to an agent."],
  [
    "nexo_messages_unbound_total",
    "counter",
    "Inbound messages no binding matched (logged and dropped), by channel kind.",
  ],
  [
    "nexo_plugin_up",
    "gauge",
    "1 while the plugin is running (handshake done), 0 otherwise (starting, backoff, failed, …).",
  ],
  ["nexo_plugin_restarts_total", "counter", "Times a plugin's process was restarted after a crash."],
  [
    "nexo_plugin_dropped_events_total",
    "counter",
    "Broker events not delivered to a plugin because it did not keep up.",
  ],
  ["nexo_broker_up", "gauge", "1 while published events can reach subscribers."],
  ["nexo_broker_published_events_total", "counter", "Events accepted by the broker's publish."],
  ["nexo_broker_dropped_events_total", "counter", "Events dropped because a subscriber's queue was full."],
  ["nexo_broker_queued_events", "gauge", "Events waiting in subscriber queues now, over all subscriptions."],
  ["nexo_sessions_active", "gauge", "Sessions with a turn running or messages waiting."],
  ["nexo_session_queued_messages", "gauge", "Messages waiting for their session's turn, over all sessions."],
  ["nexo_session_queue_max_depth", "gauge", "The most messages waiting in any one session's queue."],
  ["process_cpu_user_seconds_total", "counter", "Total user CPU time spent in seconds."],
  ["process_cpu_system_seconds_total", "counter", "Total system CPU time spent in seconds."],
  ["process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds."],
  ["process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds."],
  ["process_resident_memory_bytes", "gauge", "Resident memory size in bytes."],
  ["process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes."],
  ["process_heap_bytes", "gauge", "Process heap size in bytes."],
  ["process_open_fds", "gauge", "Number of open file descriptors."],
  ["process_max_fds", "gauge", "Maximum number of open file descriptors."],
  ["nodejs_eventloop_lag_seconds", "gauge", "Lag of event loop in seconds."],
  ["nodejs_eventloop_lag_min_seconds", "gauge", "The minimum recorded event loop delay."],
  ["nodejs_eventloop_lag_max_seconds", "gauge", "The maximum recorded event loop delay."],
  ["nodejs_eventloop_lag_mean_seconds", "gauge", "The mean of the recorded event loop delays."],
  [
    "nodejs_eventloop_lag_stddev_seconds",
    "gauge",
    "The standard deviation of the recorded event loop delays.",
  ],
  ["nodejs_eventloop_lag_p50_seconds", "gauge", "The 50th percentile of the recorded event loop delays."],
  ["nodejs_eventloop_lag_p90_seconds", "gauge", "The 90th percentile of the recorded event loop delays."],
  ["nodejs_eventloop_lag_p99_seconds", "gauge", "The 99th percentile of the recorded event loop delays."],
  [
    "nodejs_active_resources",
    "gauge",
    "Number of active resources that are currently keeping the event loop alive, grouped by async resource type.",
  ],
  ["nodejs_active_resources_total", "gauge", "Total number of active resources."],
  [
    "nodejs_active_handles",
    "gauge",
    "Number of active libuv handles grouped by handle type. Every handle type is C++ class name.",
  ],
  ["nodejs_active_handles_total", "gauge", "Total number of active handles."],
  [
    "nodejs_active_requests",
    "gauge",
    "Number of active libuv requests grouped by request type. Every request type is C++ class name.",
  ],
  ["nodejs_active_requests_total", "gauge", "Total number of active requests."],
  ["nodejs_heap_size_total_bytes", "gauge", "Process heap size from Node.js in bytes."],
  ["nodejs_heap_size_used_bytes", "gauge", "Process heap size used from Node.js in bytes."],
  ["nodejs_external_memory_bytes", "gauge", "Node.js external memory size in bytes."],
  ["nodejs_heap_space_size_total_bytes", "gauge", "Process heap space size total from Node.js in bytes."],
  ["nodejs_heap_space_size_used_bytes", "gauge", "Process heap space size used from Node.js in bytes."],
  [
    "nodejs_heap_space_size_available_bytes",
    "gauge",
    "Process heap space size available from Node.js in bytes.",
  ],
  ["nodejs_version_info", "gauge", "Node.js version info."],
  [
    "nodejs_gc_duration_seconds",
    "histogram",
    "Garbage collection duration by kind, one of major, minor, incremental or weakcb.",
  ],
];

/**
 * The series of those families, value-free (name and label names), apart from the ones that depend
 * on the moment: the garbage collections seen so far and the handles, requests and resources open.
 */
const SERIES = [
  "nexo_turns_total{agent,outcome}",
  "nexo_turn_duration_seconds_bucket{le,agent}",
  "nexo_turn_duration_seconds_sum{agent}",
  "nexo_turn_duration_seconds_count{agent}",
  "nexo_tool_calls_total{tool,status}",
  "nexo_tool_call_duration_seconds_bucket{le,tool}",
  "nexo_tool_call_duration_seconds_sum{tool}",
  "nexo_tool_call_duration_seconds_count{tool}",
  "nexo_llm_request_duration_seconds_bucket{le,provider,outcome}",
  "nexo_llm_request_duration_seconds_sum{provider,outcome}",
  "nexo_llm_request_duration_seconds_count{provider,outcome}",
  "nexo_messages_routed_total{agent}",
  "nexo_messages_unbound_total{channel}",
  "nexo_sessions_active",
  "nexo_session_queued_messages",
  "nexo_session_queue_max_depth",
  "process_cpu_user_seconds_total",
  "process_cpu_system_seconds_total",
  "process_cpu_seconds_total",
  "process_start_time_seconds",
  "process_resident_memory_bytes",
  "process_virtual_memory_bytes",
  "process_heap_bytes",
  "process_open_fds",
  "process_max_fds",
  "nodejs_eventloop_lag_seconds",
  "nodejs_eventloop_lag_min_seconds",
  "nodejs_eventloop_lag_max_seconds",
  "nodejs_eventloop_lag_mean_seconds",
  "nodejs_eventloop_lag_stddev_seconds",
  "nodejs_eventloop_lag_p50_seconds",
  "nodejs_eventloop_lag_p90_seconds",
  "nodejs_eventloop_lag_p99_seconds",
  "nodejs_heap_size_total_bytes",
  "nodejs_heap_size_used_bytes",
  "nodejs_external_memory_bytes",
  "nodejs_heap_space_size_total_bytes{space}",
  "nodejs_heap_space_size_used_bytes{space}",
  "nodejs_heap_space_size_available_bytes{space}",
  "nodejs_version_info{version,major,minor,patch}",
];

describe("metrics counted as they happen", () => {
  it("counts turns, tool calls, LLM requests, routed and unbound messages with their labels", async () => {
    const metrics = new Metrics({ processMetrics: false });
    metrics.turnFinished("ana", "completed", 1.5);
    metrics.turnFinished("ana", "completed", 0.2);
    metrics.turnFinished("ana", "error", 3);
    metrics.turnFinished("bo", "cancelled", 0.05);
    metrics.toolCallFinished("bash", "success", 0.03);
    metrics.toolCallFinished("bash", "error", 0.5);
    metrics.llmRequestFinished("anthropic", "ok", 2.2);
    metrics.llmRequestFinished("anthropic", "error", 0.1);
    metrics.messageRouted("ana");
    metrics.messageRouted("ana");
    metrics.messageUnbound("slack");
    const text = await scrape(metrics);

    assert.equal(sample(text, "nexo_turns_total", { agent: "ana", outcome: "completed" }), 2);
    assert.equal(sample(text, "nexo_turns_total", { agent: "ana", outcome: "error" }), 1);
    assert.equal(sample(text, "nexo_turns_total", { agent: "bo", outcome: "cancelled" }), 1);
    assert.equal(sample(text, "nexo_turn_duration_seconds_count", { agent: "ana" }), 3);
    assert.equal(sample(text, "nexo_turn_duration_seconds_sum", { agent: "ana" }), 4.7);
    assert.equal(sample(text, "nexo_turn_duration_seconds_bucket", { le: "0.25", agent: "ana" }), 1);
    assert.equal(sample(text, "nexo_tool_calls_total", { tool: "bash", status: "success" }), 1);
    assert.equal(sample(text, "nexo_tool_calls_total", { tool: "bash", status: "error" }), 1);
    assert.equal(sample(text, "nexo_tool_call_duration_seconds_count", { tool: "bash" }), 2);
    assert.equal(
      sample(text, "nexo_llm_request_duration_seconds_count", { provider: "anthropic", outcome: "ok" }),
      1,
    );
    assert.equal(
      sample(text, "nexo_llm_request_duration_seconds_bucket", {
        le: "4",
        provider: "anthropic",
        outcome: "ok",
      }),
      1,
    );
    assert.equal(sample(text, "nexo_messages_routed_total", { agent: "ana" }), 2);
    assert.equal(sample(text, "nexo_messages_unbound_total", { channel: "slack" }), 1);
    assert.match(text, /# TYPE nexo_turn_duration_seconds histogram/);
  });

  it("rejects a duration that is not a finite, non-negative number of seconds", () => {
    const metrics = new Metrics({ processMetrics: false });
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => metrics.turnFinished("ana", "completed", bad), RangeError);
      assert.throws(() => metrics.toolCallFinished("bash", "success", bad), RangeError);
      assert.throws(() => metrics.llmRequestFinished("openai", "ok", bad), RangeError);
    }
  });

  it("keeps its own registry: two instances never mix, the global registry stays empty", async () => {
    const a = new Metrics();
    const b = new Metrics();
    a.messageRouted("ana");
    assert.equal(sample(await scrape(a), "nexo_messages_routed_total", { agent: "ana" }), 1);
    assert.equal(sample(await scrape(b), "nexo_messages_routed_total", { agent: "ana" }), undefined);
    assert.doesNotMatch(await globalRegistry.metrics(), /nexo_/);
    const text = await scrape(a);
    assert.ok(sample(text, "process_cpu_user_seconds_total") !== undefined, "process metrics are on");
    assert.ok(sample(text, "nodejs_heap_size_used_bytes") !== undefined);
    assert.equal((await a.render()).contentType, "text/plain; version=0.0.4; charset=utf-8");
  });
});

describe("metrics read at scrape time", () => {
  it("reports broker publishes, drops, queued events and readiness from a real LocalBroker", async () => {
    const metrics = new Metrics({ processMetrics: false });
    const broker = localBroker();
    metrics.collectFrom({ broker });
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => {
      release = resolve;
    });
    broker.subscribe("in.>", () => blocked, { queueDepth: 1 });
    for (let i = 0; i < 4; i++) broker.publish("in.x", createEvent({ topic: "in.x", source: "test" }));
    // The queue holds one event; the handler is blocked, so at least two of four were dropped.
    let stats = broker.stats();
    assert.ok(stats.dropped >= 2);
    let text = await scrape(metrics);
    assert.equal(sample(text, "nexo_broker_published_events_total", { broker: "local" }), 4);
    assert.equal(sample(text, "nexo_broker_dropped_events_total", { broker: "local" }), stats.dropped);
    assert.equal(sample(text, "nexo_broker_queued_events", { broker: "local" }), 1);
    assert.equal(sample(text, "nexo_broker_up", { broker: "local" }), 1);

    // A second scrape adds only what grew since the first: cumulative counts are not re-added.
    broker.publish("in.x", createEvent({ topic: "in.x", source: "test" }));
    stats = broker.stats();
    text = await scrape(metrics);
    assert.equal(sample(text, "nexo_broker_published_events_total", { broker: "local" }), 5);
    assert.equal(sample(text, "nexo_broker_dropped_events_total", { broker: "local" }), stats.dropped);

    release();
    await broker.close();
    text = await scrape(metrics);
    assert.equal(sample(text, "nexo_broker_up", { broker: "local" }), 0);
  });

  it("a replacement broker (reload) adds its own counts instead of being subtracted", async () => {
    const metrics = new Metrics({ processMetrics: false });
    const first = localBroker();
    metrics.collectFrom({ broker: first });
    for (let i = 0; i < 5; i++) first.publish("a", createEvent({ topic: "a", source: "test" }));
    assert.equal(sample(await scrape(metrics), "nexo_broker_published_events_total", { broker: "local" }), 5);

    const second = localBroker();
    for (let i = 0; i < 7; i++) second.publish("a", createEvent({ topic: "a", source: "test" }));
    metrics.collectFrom({ broker: second });
    assert.equal(
      sample(await scrape(metrics), "nexo_broker_published_events_total", { broker: "local" }),
      12,
    );
  });

  it("reports session queue depths from the router's stats", async () => {
    const metrics = new Metrics({ processMetrics: false });
    let stats: SessionQueueStats = { sessions: 3, queued: 7, longest: 5 };
    metrics.collectFrom({ router: { queueStats: () => stats } });
    let text = await scrape(metrics);
    assert.equal(sample(text, "nexo_sessions_active"), 3);
    assert.equal(sample(text, "nexo_session_queued_messages"), 7);
    assert.equal(sample(text, "nexo_session_queue_max_depth"), 5);
    stats = { sessions: 0, queued: 0, longest: 0 };
    text = await scrape(metrics);
    assert.equal(sample(text, "nexo_session_queued_messages"), 0);
  });

  it("counts a real plugin's crash and restart, and shows whether it is up", async () => {
    const metrics = new Metrics({ processMetrics: false });
    const groups = new ProcessGroupRegistry();
    const manager = new PluginManager({
      plugins: [pluginDir("minimal")],
      stateRoot: join(root, "plugins"),
      env: baseEnv(),
      logger: recordingLogger(),
      processGroups: groups,
      shutdownTimeoutMs: 1_000,
      // The fixture's manifest leaves respawn at the contract's default (off).
      restart: { respawn: true, initialDelayMs: 100, jitter: 0 },
    });
    cleanups.push(async () => {
      await manager.stop();
      groups.killAll("SIGKILL");
    });
    metrics.collectFrom({ plugins: manager });
    await manager.start();
    let text = await scrape(metrics);
    assert.equal(sample(text, "nexo_plugin_up", { plugin: "minimal" }), 1);
    assert.equal(sample(text, "nexo_plugin_restarts_total", { plugin: "minimal" }), 0);

    const pid = manager.status()[0]?.pid;
    assert.ok(pid !== undefined);
    process.kill(pid, "SIGKILL");
    await waitUntil(() => manager.status()[0]?.state !== "running", 3_000, "the plugin to be seen down");
    text = await scrape(metrics);
    assert.equal(sample(text, "nexo_plugin_up", { plugin: "minimal" }), 0);
    await waitUntil(
      () => manager.status()[0]?.state === "running" && manager.status()[0]?.pid !== pid,
      5_000,
      "the plugin to restart",
    );
    text = await scrape(metrics);
    assert.equal(sample(text, "nexo_plugin_up", { plugin: "minimal" }), 1);
    assert.equal(sample(text, "nexo_plugin_restarts_total", { plugin: "minimal" }), 1);
  });

  it("a failing source is logged, keeps its last values, and the scrape still succeeds", async () => {
    const logger = recordingLogger();
    const metrics = new Metrics({ processMetrics: false, logger });
    const broker = localBroker();
    let failing = false;
    metrics.messageRouted("ana");
    metrics.collectFrom({
      broker: {
        stats: () => {
          if (failing) throw new Error("broker gone");
          return broker.stats();
        },
      },
      plugins: {
        status: () => {
          throw new Error("manager gone");
        },
      },
    });
    assert.equal(sample(await scrape(metrics), "nexo_broker_up", { broker: "local" }), 1);
    failing = true;
    const text = await scrape(metrics);
    assert.equal(sample(text, "nexo_messages_routed_total", { agent: "ana" }), 1);
    assert.equal(sample(text, "nexo_broker_up", { broker: "local" }), 1, "the last good value stays");
    const warned = logger.entries
      .filter((entry) => entry.level === "warn")
      .map((entry) => entry.fields.source);
    assert.ok(warned.includes("plugins") && warned.includes("broker"));
  });
});

describe("the /metrics output", () => {
  it("shows every family with its type and help, in order, and the series of each", async () => {
    const metrics = new Metrics();
    metrics.messageRouted("ana");
    metrics.turnFinished("ana", "completed", 1.5);
    metrics.toolCallFinished("bash", "success", 0.01);
    metrics.llmRequestFinished("openai", "ok", 0.3);
    metrics.messageUnbound("loopback");
    const { contentType, body } = await metrics.render();
    assert.equal(contentType, "text/plain; version=0.0.4; charset=utf-8");
    const lines = body.split("\n");
    assert.deepEqual(
      lines.filter((line) => line.startsWith("# ")),
      FAMILIES.flatMap(([name, type, help]) => [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`]),
    );
    const series = lines
      .filter((line) => line !== "" && !line.startsWith("#") && !/^nodejs_(gc_|active_)/.test(line))
      .map((line) => line.replace(/ [^ ]+$/, "").replace(/="(?:[^"\\]|\\.)*"/g, ""));
    assert.deepEqual([...new Set(series)], SERIES);
    assert.equal(sample(body, "nexo_messages_routed_total", { agent: "ana" }), 1);
    // The process's CPU time since the metrics were built, user + system = the total, growing with work.
    const cpu = (text: string): [number, number, number] => {
      const read = (name: string) => {
        const value = sample(text, name);
        assert.ok(value !== undefined, `no ${name}`);
        return value;
      };
      return [
        read("process_cpu_user_seconds_total"),
        read("process_cpu_system_seconds_total"),
        read("process_cpu_seconds_total"),
      ];
    };
    const [user, system, total] = cpu(body);
    assert.ok(Math.abs(user + system - total) < 1e-9, `${user} + ${system} != ${total}`);
    // 50 ms of this process's CPU time (not of the clock: on a loaded machine a 50 ms busy loop
    // may get a fraction of a CPU), all of it after the scrape above and before the next one.
    const before = process.cpuUsage();
    let spent = 0;
    while (spent < 50_000) {
      const { user: u, system: s } = process.cpuUsage(before);
      spent = u + s;
    }
    const [userAfter, systemAfter, totalAfter] = cpu((await metrics.render()).body);
    assert.ok(totalAfter - total >= 0.05, `${spent / 1000} ms of CPU counted as ${totalAfter - total} s`);
    assert.ok(Math.abs(userAfter + systemAfter - totalAfter) < 1e-9);
    assert.equal(
      sample(body, "nodejs_version_info", {
        version: process.version,
        major: String(process.versions.node.split(".")[0]),
        minor: String(process.versions.node.split(".")[1]),
        patch: String(process.versions.node.split(".")[2]),
      }),
      1,
    );
  });
});
