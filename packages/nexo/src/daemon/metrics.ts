/**
 * The daemon's Prometheus metrics, on a registry of their own (never prom-client's global one, so
 * two daemons in one process — tests, the benchmark — do not mix their numbers).
 *
 * Two kinds of numbers. Events the daemon sees happen (a turn ends, a tool call returns, an LLM
 * request completes, a message is routed or matches no binding) are counted when they happen,
 * through the methods below. State that other parts already keep (the broker's counters, each
 * plugin's restarts and health, the session queues) is read at scrape time from the sources given
 * to `collectFrom`, so the metrics never drift from what those parts report. Their cumulative
 * counts become Prometheus counters by adding what grew since the last scrape; a source replaced
 * by a new one (hot reload) starts counting afresh instead of being subtracted.
 *
 * prom-client (with the OpenTelemetry API it loads) is ~1.5 MB of heap that an idle daemon would
 * hold for nothing (issue 15, idle RSS), so it loads with the first number there is to keep: the
 * first event counted or the first scrape, whichever comes first. Until then every metric is zero
 * or absent, which is what a scrape would have shown; the process metrics (GC, event-loop lag)
 * count from that moment. And only the parts used load: the package's index also loads its
 * Pushgateway client (with node:https, TLS and zlib), Summary (with tdigest) and cluster
 * aggregation, and its process CPU metric the OpenTelemetry API, ~1 MB of heap more that the
 * daemon kept after its first message (docs/performance.md, "Ninth pass (b)").
 */
import { createRequire } from "node:module";
import type { Counter, Histogram, Registry } from "prom-client";
import type { BrokerStats } from "../broker/types.js";
import type { TurnEndReason } from "../engine/events.js";
import type { PluginStatus } from "../extensions/plugins/manager.js";
import { createLogger } from "../log.js";

/** The parts of prom-client the daemon uses; the same classes its index exports. */
type PromClient = Pick<typeof import("prom-client"), "Registry" | "Counter" | "Gauge" | "Histogram">;

let promClient: PromClient | undefined;

/**
 * prom-client, loaded on first use. Synchronously (a counter is bumped in the middle of a turn's
 * bookkeeping); it is CommonJS, so `require` is what loading it means anyway. Each part from its
 * own module, where the index would load them all (the package has no `exports` map; its index is
 * these same files).
 */
function loadPromClient(): PromClient {
  if (promClient === undefined) {
    const require = createRequire(import.meta.url);
    promClient = {
      Registry: require("prom-client/lib/registry"),
      Counter: require("prom-client/lib/counter"),
      Gauge: require("prom-client/lib/gauge"),
      Histogram: require("prom-client/lib/histogram"),
    } as PromClient;
  }
  return promClient;
}

/** One of prom-client's default metrics (its lib/metrics/*.js): registers its metrics on `registry`. */
type DefaultMetric = (registry: Registry, config: { eventLoopMonitoringPrecision: number }) => void;

/**
 * prom-client's default metrics (what its `collectDefaultMetrics` registers, in its order, with its
 * default config), each from its own module, except the process CPU counters: prom-client's module
 * for those requires the OpenTelemetry API at load, for exemplars the daemon does not enable
 * (~0.3 MB of heap); {@link registerProcessCpu} counts the same. The families and their order are
 * pinned by test/daemon/metrics.test.ts against what the package's index registered.
 */
function registerDefaultMetrics(prom: PromClient, registry: Registry): void {
  const require = createRequire(import.meta.url);
  const metric = (name: string) => require(`prom-client/lib/metrics/${name}`) as DefaultMetric;
  const config = { eventLoopMonitoringPrecision: 10 };
  registerProcessCpu(prom, registry);
  for (const name of [
    "processStartTime",
    "osMemoryHeap",
    "processOpenFileDescriptors",
    "processMaxFileDescriptors",
    "eventLoopLag",
    // prom-client lists it only where Node has process.getActiveResourcesInfo (Node 20 has).
    ...(typeof process.getActiveResourcesInfo === "function" ? ["processResources"] : []),
    "processHandles",
    "processRequests",
    "heapSizeAndUsed",
    "heapSpacesSizeAndUsed",
    "version",
    "gc",
  ])
    metric(name)(registry, config);
}

/**
 * process_cpu_user_seconds_total, process_cpu_system_seconds_total and process_cpu_seconds_total as
 * prom-client counts them: the process's CPU time since they were registered, added at each scrape
 * by the first counter's `collect` for all three.
 */
function registerProcessCpu(prom: PromClient, registry: Registry): void {
  const registers = [registry];
  let last = process.cpuUsage();
  const user = new prom.Counter({
    name: "process_cpu_user_seconds_total",
    help: "Total user CPU time spent in seconds.",
    registers,
    collect() {
      const now = process.cpuUsage();
      const userMicros = now.user - last.user;
      const systemMicros = now.system - last.system;
      last = now;
      user.inc(userMicros / 1e6);
      system.inc(systemMicros / 1e6);
      total.inc((userMicros + systemMicros) / 1e6);
    },
  });
  const system = new prom.Counter({
    name: "process_cpu_system_seconds_total",
    help: "Total system CPU time spent in seconds.",
    registers,
  });
  const total = new prom.Counter({
    name: "process_cpu_seconds_total",
    help: "Total user and system CPU time spent in seconds.",
    registers,
  });
}

/** The session queues of the router, as it reports them. */
export interface SessionQueueStats {
  /** Sessions with a turn running or messages waiting. */
  sessions: number;
  /** Messages waiting across all sessions (the running turn's message is not counted). */
  queued: number;
  /** The most messages waiting in any one session. */
  longest: number;
}

/** What the gauges and scrape-time counters are read from; each part is optional. */
export interface MetricSources {
  broker?: { stats(): BrokerStats };
  plugins?: { status(): PluginStatus[] };
  router?: { queueStats(): SessionQueueStats };
}

export type ToolCallStatus = "success" | "error" | "cancelled";
export type LlmRequestOutcome = "ok" | "error";

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC, handles). Default true. */
  processMetrics?: boolean;
  /** Where a failing source is reported; a scrape never fails because of one. */
  logger?: { warn(obj: object, msg?: string): void };
}

const TURN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];
const TOOL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const LLM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];

export class Metrics {
  private sources: MetricSources = {};
  private readonly logger: NonNullable<MetricsOptions["logger"]>;
  private readonly processMetrics: boolean;
  /** The prom-client side, built by the first event or scrape. */
  private built: PromMetrics | undefined;

  constructor(options: MetricsOptions = {}) {
    this.logger = options.logger ?? createLogger({ base: { component: "metrics" } });
    this.processMetrics = options.processMetrics ?? true;
  }

  /** `outcome` is the turn's end reason (completed, cancelled, error, max_turns, blocked). */
  turnFinished(agent: string, outcome: TurnEndReason, seconds: number): void {
    checkSeconds(seconds);
    const prom = this.prom();
    prom.turns.inc({ agent, outcome });
    prom.turnSeconds.observe({ agent }, seconds);
  }

  toolCallFinished(tool: string, status: ToolCallStatus, seconds: number): void {
    checkSeconds(seconds);
    const prom = this.prom();
    prom.toolCalls.inc({ tool, status });
    prom.toolSeconds.observe({ tool }, seconds);
  }

  llmRequestFinished(provider: string, outcome: LlmRequestOutcome, seconds: number): void {
    checkSeconds(seconds);
    this.prom().llmSeconds.observe({ provider, outcome }, seconds);
  }

  messageRouted(agent: string): void {
    this.prom().routed.inc({ agent });
  }

  messageUnbound(channel: string): void {
    this.prom().unbound.inc({ channel });
  }

  /**
   * Reads gauges and scrape-time counters from these sources from now on, replacing the previous
   * ones (after a hot reload, pass the new set).
   */
  collectFrom(sources: MetricSources): void {
    this.sources = { ...sources };
  }

  /** The registry every metric is on (loads prom-client, as a scrape would). */
  get registry(): Registry {
    return this.prom().registry;
  }

  /** The Prometheus text exposition of every metric. */
  async render(): Promise<{ contentType: string; body: string }> {
    const { registry } = this.prom();
    return { contentType: registry.contentType, body: await registry.metrics() };
  }

  private prom(): PromMetrics {
    this.built ??= new PromMetrics(loadPromClient(), () => this.sources, this.logger, this.processMetrics);
    return this.built;
  }
}

/** The metrics as prom-client objects on their own registry. */
class PromMetrics {
  readonly registry: Registry;
  readonly turns: Counter<"agent" | "outcome">;
  readonly turnSeconds: Histogram<"agent">;
  readonly toolCalls: Counter<"tool" | "status">;
  readonly toolSeconds: Histogram<"tool">;
  readonly llmSeconds: Histogram<"provider" | "outcome">;
  readonly routed: Counter<"agent">;
  readonly unbound: Counter<"channel">;
  private readonly feeds = new CumulativeFeeds();

  constructor(
    private readonly prom: PromClient,
    private readonly sources: () => MetricSources,
    private readonly logger: NonNullable<MetricsOptions["logger"]>,
    processMetrics: boolean,
  ) {
    const { Counter, Histogram } = prom;
    this.registry = new prom.Registry();
    const registers = [this.registry];
    this.turns = new Counter({
      name: "nexo_turns_total",
      help: "Turns finished, by agent and outcome (the turn's end reason).",
      labelNames: ["agent", "outcome"],
      registers,
    });
    this.turnSeconds = new Histogram({
      name: "nexo_turn_duration_seconds",
      help: "Wall-clock duration of a turn, from the message to the end of the reply.",
      labelNames: ["agent"],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.toolCalls = new Counter({
      name: "nexo_tool_calls_total",
      help: "Tool calls finished, by tool and status (success, error, cancelled).",
      labelNames: ["tool", "status"],
      registers,
    });
    this.toolSeconds = new Histogram({
      name: "nexo_tool_call_duration_seconds",
      help: "Duration of a tool call's execution (approval wait excluded).",
      labelNames: ["tool"],
      buckets: TOOL_BUCKETS,
      registers,
    });
    this.llmSeconds = new Histogram({
      name: "nexo_llm_request_duration_seconds",
      help: "Duration of one LLM request until its response is complete, by provider and outcome.",
      labelNames: ["provider", "outcome"],
      buckets: LLM_BUCKETS,
      registers,
    });
    this.routed = new Counter({
      name: "nexo_messages_routed_total",
      help: "Inbound messages routed to an agent.",
      labelNames: ["agent"],
      registers,
    });
    this.unbound = new Counter({
      name: "nexo_messages_unbound_total",
      help: "Inbound messages no binding matched (logged and dropped), by channel kind.",
      labelNames: ["channel"],
      registers,
    });
    this.registerScrapeTimeMetrics();
    if (processMetrics) registerDefaultMetrics(prom, this.registry);
  }

  private registerScrapeTimeMetrics(): void {
    const { Counter, Gauge } = this.prom;
    const registers = [this.registry];
    // prom-client calls `collect` with the metric as `this`; the feeds are reached through this.
    const feeds = this.feeds;
    const plugins = (read: (statuses: PluginStatus[], source: object) => void) =>
      this.safely("plugins", () => {
        const source = this.sources().plugins;
        if (source !== undefined) read(source.status(), source);
      });
    const broker = (read: (stats: BrokerStats, source: object) => void) =>
      this.safely("broker", () => {
        const source = this.sources().broker;
        if (source !== undefined) read(source.stats(), source);
      });
    const queues = (read: (stats: SessionQueueStats) => void) =>
      this.safely("router", () => {
        const source = this.sources().router;
        if (source !== undefined) read(source.queueStats());
      });

    new Gauge({
      name: "nexo_plugin_up",
      help: "1 while the plugin is running (handshake done), 0 otherwise (starting, backoff, failed, …).",
      labelNames: ["plugin"],
      registers,
      collect() {
        plugins((statuses) => {
          // Plugins removed by a reload disappear from the gauge.
          this.reset();
          for (const status of statuses) this.set({ plugin: status.id }, status.state === "running" ? 1 : 0);
        });
      },
    });
    new Counter({
      name: "nexo_plugin_restarts_total",
      help: "Times a plugin's process was restarted after a crash.",
      labelNames: ["plugin"],
      registers,
      collect() {
        plugins((statuses, source) => {
          for (const s of statuses) feeds.feed(this, source, { plugin: s.id }, s.restarts);
        });
      },
    });
    new Counter({
      name: "nexo_plugin_dropped_events_total",
      help: "Broker events not delivered to a plugin because it did not keep up.",
      labelNames: ["plugin"],
      registers,
      collect() {
        plugins((statuses, source) => {
          for (const s of statuses) feeds.feed(this, source, { plugin: s.id }, s.droppedEvents);
        });
      },
    });
    new Gauge({
      name: "nexo_broker_up",
      help: "1 while published events can reach subscribers.",
      labelNames: ["broker"],
      registers,
      collect() {
        broker((stats) => {
          this.reset();
          this.set({ broker: stats.kind }, stats.ready ? 1 : 0);
        });
      },
    });
    new Counter({
      name: "nexo_broker_published_events_total",
      help: "Events accepted by the broker's publish.",
      labelNames: ["broker"],
      registers,
      collect() {
        broker((stats, source) => feeds.feed(this, source, { broker: stats.kind }, stats.published));
      },
    });
    new Counter({
      name: "nexo_broker_dropped_events_total",
      help: "Events dropped because a subscriber's queue was full.",
      labelNames: ["broker"],
      registers,
      collect() {
        broker((stats, source) => feeds.feed(this, source, { broker: stats.kind }, stats.dropped));
      },
    });
    new Gauge({
      name: "nexo_broker_queued_events",
      help: "Events waiting in subscriber queues now, over all subscriptions.",
      labelNames: ["broker"],
      registers,
      collect() {
        broker((stats) => {
          this.reset();
          const queued = stats.subscriptions.reduce((sum, s) => sum + s.queued, 0);
          this.set({ broker: stats.kind }, queued);
        });
      },
    });
    new Gauge({
      name: "nexo_sessions_active",
      help: "Sessions with a turn running or messages waiting.",
      registers,
      collect() {
        queues((stats) => this.set(stats.sessions));
      },
    });
    new Gauge({
      name: "nexo_session_queued_messages",
      help: "Messages waiting for their session's turn, over all sessions.",
      registers,
      collect() {
        queues((stats) => this.set(stats.queued));
      },
    });
    new Gauge({
      name: "nexo_session_queue_max_depth",
      help: "The most messages waiting in any one session's queue.",
      registers,
      collect() {
        queues((stats) => this.set(stats.longest));
      },
    });
  }

  private safely(source: string, read: () => void): void {
    try {
      read();
    } catch (error) {
      this.logger.warn(
        { source, err: error instanceof Error ? error.message : String(error) },
        "metrics source failed; its values are from the last good scrape",
      );
    }
  }
}

/**
 * Turns cumulative counts kept elsewhere into increments of a Prometheus counter. Remembers the
 * last value per (counter, source object, labels); a count that went down means the part was
 * recreated, and its whole new count is added.
 */
class CumulativeFeeds {
  private readonly last = new WeakMap<object, WeakMap<object, Map<string, number>>>();

  feed<L extends string>(
    counter: Counter<L>,
    source: object,
    labels: Record<L, string>,
    total: number,
  ): void {
    let bySource = this.last.get(counter);
    if (bySource === undefined) {
      bySource = new WeakMap();
      this.last.set(counter, bySource);
    }
    let byLabels = bySource.get(source);
    if (byLabels === undefined) {
      byLabels = new Map();
      bySource.set(source, byLabels);
    }
    const key = JSON.stringify(labels);
    const previous = byLabels.get(key) ?? 0;
    const increment = total >= previous ? total - previous : total;
    byLabels.set(key, total);
    // Adding 0 still creates the series, so a plugin that never restarted shows 0, not nothing.
    counter.inc(labels, increment);
  }
}

function checkSeconds(seconds: number): void {
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new RangeError(`a duration must be a finite number of seconds >= 0, got ${seconds}`);
  }
}
