/**
 * The daemon: boot in the order the plugin and admin specs assume, run, and shut down cleanly.
 *
 *   open the store → start the broker → spawn plugins in parallel (their wrappers register into
 *   the registries) → connect MCP servers → channel.start for every bound channel → route
 *   `plugin.inbound.>` to agents → one ready line with a summary.
 *
 * Shutdown reverses it: stop channels, let in-flight turns finish within a bound (then cancel
 * them), shut plugins and MCP servers down, close the broker and the store.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type BrokerConfigInput, createBroker } from "../broker/config.js";
import type { Broker, Subscription } from "../broker/types.js";
import { ChannelRegistry } from "../channels/registry.js";
import { HookRunner } from "../engine/hooks.js";
import { type LlmConfig, TenantProviders } from "../engine/providers/llm-config.js";
import { ToolRegistry } from "../engine/tools/registry.js";
import type { McpConfig } from "../extensions/mcp/config.js";
import type { McpManager } from "../extensions/mcp/manager.js";
import { PluginManager, type PluginSettings, type PluginStatus } from "../extensions/plugins/manager.js";
import type { Logger } from "../log.js";
import { VectorBackendRegistry } from "../memory/vector.js";
import { DATABASE_FILE } from "../paths.js";
import { Store } from "../store/index.js";
import { NEXO_VERSION } from "../version.js";
import { Metrics } from "./metrics.js";
import { type Binding, BindingTable } from "./routing/bindings.js";
import { ReplySender } from "./routing/outbound.js";
import { Router } from "./routing/router.js";
import { type AgentRuntimeSettings, DaemonSessions } from "./sessions.js";
import { timedProvider } from "./timed-provider.js";

export interface DaemonAgent extends AgentRuntimeSettings {
  active: boolean;
  bindings: Binding[];
  queueCap: number;
}

/** Everything the daemon runs, already validated (the config loader builds it from the config dir). */
export interface DaemonSpec {
  stateDir: string;
  agents: DaemonAgent[];
  llm: LlmConfig;
  broker: BrokerConfigInput;
  plugins: { dirs: string[]; settings: Record<string, PluginSettings> };
  mcp?: McpConfig;
  /** How long in-flight turns may run on after a shutdown request. Default 10 s. */
  shutdownGraceMs?: number;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Where turns, tool calls, LLM latency and queue depths are counted; one is made when absent. */
  metrics?: Metrics;
}

/** What a reload changed, and what it could not change without a restart. */
export interface ReloadReport {
  agents: { added: string[]; removed: string[]; changed: string[] };
  plugins: { added: string[]; removed: string[] };
  providersReloaded: boolean;
  /** Settings that changed but only take effect after a restart (the broker, the state dir). */
  needsRestart: string[];
}

export interface DaemonSummary {
  version: string;
  agents: string[];
  bindings: number;
  plugins: Array<Pick<PluginStatus, "id" | "state">>;
  channels: string[];
  broker: string;
  mcpServers: number;
}

export class Daemon {
  private inboundSub: Subscription | undefined;
  private stopping: Promise<void> | undefined;
  /** `<kind>.<instance>` of the channels channel.start was sent to. */
  private readonly startedChannels = new Set<string>();

  private constructor(
    public spec: DaemonSpec,
    readonly store: Store,
    readonly broker: Broker,
    readonly plugins: PluginManager,
    readonly channels: ChannelRegistry,
    readonly router: Router,
    readonly sessions: DaemonSessions,
    readonly mcp: McpManager | undefined,
    private readonly agentsRef: { current: Map<string, DaemonAgent> },
    private readonly providers: TenantProviders,
    readonly metrics: Metrics,
  ) {}

  static async start(spec: DaemonSpec): Promise<Daemon> {
    const { logger } = spec;
    mkdirSync(spec.stateDir, { recursive: true, mode: 0o700 });
    const store = Store.open(join(spec.stateDir, DATABASE_FILE));
    const cleanups: Array<() => Promise<void> | void> = [() => store.close()];
    try {
      const broker = await createBroker(spec.broker, { logger });
      cleanups.push(() => broker.close());

      const providers = new TenantProviders(spec.llm);
      const shared = new ToolRegistry();
      const hooks = new HookRunner((obj, msg) => logger.warn(obj, msg));
      const channels = new ChannelRegistry();
      const plugins = new PluginManager({
        plugins: spec.plugins.dirs,
        stateRoot: join(spec.stateDir, "plugins"),
        env: spec.env,
        nexoVersion: NEXO_VERSION,
        broker,
        registries: {
          tools: shared,
          providers: providers.global,
          hooks,
          channels,
          vectors: new VectorBackendRegistry(),
        },
        services: { memory: store.memory, providers: providers.global },
        settings: spec.plugins.settings,
        logger,
      });
      cleanups.push(() => plugins.stop("daemon stopping"));
      await plugins.start();

      let mcp: McpManager | undefined;
      if (spec.mcp && Object.keys(spec.mcp.servers ?? {}).length > 0) {
        const { McpManager: Manager, syncMcpTools } = await import("../extensions/mcp/index.js");
        mcp = new Manager({ logger, hostEnv: spec.env });
        cleanups.push(() => mcp?.close());
        syncMcpTools(mcp, shared);
        await mcp.connectAll(spec.mcp);
      }

      const metrics = spec.metrics ?? new Metrics();
      const agentsRef = { current: new Map(spec.agents.map((a) => [a.id, a])) };
      const sessions = new DaemonSessions({
        store,
        providers,
        shared,
        hooks,
        agents: () => agentsRef.current,
        logger,
        wrapProvider: (provider) =>
          timedProvider(provider, (id, outcome, seconds) => metrics.llmRequestFinished(id, outcome, seconds)),
      });
      const toolStarts = new Map<string, number>();
      const router = new Router({
        bindings: new BindingTable(
          spec.agents.map((a) => ({ id: a.id, active: a.active, inbound_bindings: a.bindings })),
        ),
        sessions,
        replies: new ReplySender(channels, broker),
        logger,
        queueCap: (agentId) => agentsRef.current.get(agentId)?.queueCap ?? 32,
        onTurn: (agentId, reason, seconds) => metrics.turnFinished(agentId, reason, seconds),
        onRouted: (agentId) => metrics.messageRouted(agentId),
        onUnbound: (channel) => metrics.messageUnbound(channel),
        onEvent: (_agentId, event) => {
          if (event.type === "tool_running") toolStarts.set(event.callId, performance.now());
          if (event.type !== "tool_result" && event.type !== "tool_cancelled") return;
          const started = toolStarts.get(event.callId);
          toolStarts.delete(event.callId);
          const seconds = started === undefined ? 0 : (performance.now() - started) / 1000;
          metrics.toolCallFinished(
            event.name,
            event.type === "tool_result" ? event.status : "cancelled",
            seconds,
          );
        },
      });
      metrics.collectFrom({ broker, plugins, router });
      const daemon = new Daemon(
        spec,
        store,
        broker,
        plugins,
        channels,
        router,
        sessions,
        mcp,
        agentsRef,
        providers,
        metrics,
      );
      daemon.inboundSub = broker.subscribe(
        "plugin.inbound.>",
        (event, topic) => router.handle(topic, event),
        {
          name: "router",
        },
      );
      // A plugin whose first attempt failed comes up later; its bound channels start then.
      plugins.on("wired", () => void daemon.startChannels());
      await daemon.startChannels();
      logger.info({ ready: daemon.summary() }, "nexo daemon ready");
      return daemon;
    } catch (error) {
      for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
      throw error;
    }
  }

  summary(): DaemonSummary {
    const bound = this.spec.agents.filter((a) => a.active);
    return {
      version: NEXO_VERSION,
      agents: bound.map((a) => a.id),
      bindings: bound.reduce((n, a) => n + a.bindings.length, 0),
      plugins: this.plugins.status().map((p) => ({ id: p.id, state: p.state })),
      channels: this.channels.kinds(),
      broker: `${this.broker.kind} (${this.broker.readiness().detail})`,
      mcpServers: this.mcp?.statuses().length ?? 0,
    };
  }

  /**
   * channel.start for every (kind, instance) an active agent is bound to and a local adapter serves,
   * unless it was sent already.
   */
  private async startChannels(): Promise<void> {
    const seen = new Set<string>();
    for (const agent of this.spec.agents) {
      if (!agent.active) continue;
      for (const binding of agent.bindings) {
        const key = `${binding.plugin}.${binding.instance ?? ""}`;
        if (seen.has(key) || this.startedChannels.has(key)) continue;
        seen.add(key);
        const adapter = this.channels.get(binding.plugin);
        if (!adapter) {
          this.spec.logger.info(
            { channel: binding.plugin },
            "no local adapter for this channel: its messages are expected through the broker",
          );
          continue;
        }
        this.startedChannels.add(key);
        try {
          await adapter.start({ instance: binding.instance ?? null });
        } catch (error) {
          this.spec.logger.error(
            { channel: binding.plugin, err: (error as Error).message },
            "channel.start failed",
          );
        }
      }
    }
  }

  /**
   * Applies a new, already validated spec without a restart: agents added, changed or removed take
   * effect for the next message (the binding table is swapped atomically; turns running now
   * finish under the old settings); providers are rebuilt; plugins added or removed are started or
   * shut down. The broker and the state dir are fixed for the process's life.
   */
  async reload(next: DaemonSpec): Promise<ReloadReport> {
    const { logger } = this.spec;
    const before = this.agentsRef.current;
    const after = new Map(next.agents.map((a) => [a.id, a]));
    const report: ReloadReport = {
      agents: {
        added: [...after.keys()].filter((id) => !before.has(id)),
        removed: [...before.keys()].filter((id) => !after.has(id)),
        changed: [...after.keys()].filter(
          (id) => before.has(id) && JSON.stringify(before.get(id)) !== JSON.stringify(after.get(id)),
        ),
      },
      plugins: { added: [], removed: [] },
      providersReloaded: JSON.stringify(this.spec.llm) !== JSON.stringify(next.llm),
      needsRestart: [],
    };
    if (JSON.stringify(this.spec.broker) !== JSON.stringify(next.broker)) report.needsRestart.push("broker");
    if (this.spec.stateDir !== next.stateDir) report.needsRestart.push("state_dir");

    // Build everything that can fail first, then swap.
    const bindings = new BindingTable(
      next.agents.map((a) => ({ id: a.id, active: a.active, inbound_bindings: a.bindings })),
    );
    if (report.providersReloaded) this.providers.update(next.llm);
    this.agentsRef.current = after;
    this.router.setBindings(bindings);
    this.sessions.forget();

    const loaded = new Set(this.plugins.sources());
    const wanted = new Set(next.plugins.dirs);
    for (const dir of loaded) {
      if (!wanted.has(dir) && (await this.plugins.remove(dir))) report.plugins.removed.push(dir);
    }
    this.plugins.updateSettings(next.plugins.settings);
    for (const dir of wanted) {
      if (!loaded.has(dir)) {
        await this.plugins.add(dir);
        report.plugins.added.push(dir);
      }
    }
    this.spec = { ...next, broker: this.spec.broker, stateDir: this.spec.stateDir };
    this.startedChannels.clear();
    await this.startChannels();
    logger.info({ reload: report }, "configuration reloaded");
    return report;
  }

  /** Stops channels, drains turns within the grace, stops plugins, MCP, broker and store. Idempotent. */
  stop(reason = "shutdown requested"): Promise<void> {
    this.stopping ??= this.shutdown(reason);
    return this.stopping;
  }

  private async shutdown(reason: string): Promise<void> {
    const { logger } = this.spec;
    logger.info({ reason }, "nexo daemon stopping");
    for (const adapter of this.channels.list()) {
      await adapter
        .stop()
        .catch((error: Error) =>
          logger.warn({ channel: adapter.kind, err: error.message }, "channel.stop failed"),
        );
    }
    this.inboundSub?.unsubscribe();
    await this.router.drain(this.spec.shutdownGraceMs ?? 10_000);
    await this.plugins.stop(reason);
    await this.mcp?.close();
    await this.broker.close();
    this.store.close();
    logger.info({ reason }, "nexo daemon stopped");
  }
}
