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
import type { McpConfig } from "../engine/mcp/config.js";
import type { McpManager } from "../engine/mcp/manager.js";
import { type LlmConfig, TenantProviders } from "../engine/providers/llm-config.js";
import { ToolRegistry } from "../engine/tools/registry.js";
import { PluginManager, type PluginSettings, type PluginStatus } from "../extensions/plugins/manager.js";
import type { Logger } from "../log.js";
import { VectorBackendRegistry } from "../memory/vector.js";
import { DATABASE_FILE } from "../paths.js";
import { Store } from "../store/index.js";
import { NEXO_VERSION } from "../version.js";
import { type Binding, BindingTable } from "./routing/bindings.js";
import { ReplySender } from "./routing/outbound.js";
import { Router } from "./routing/router.js";
import { type AgentRuntimeSettings, DaemonSessions } from "./sessions.js";

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

  private constructor(
    readonly spec: DaemonSpec,
    readonly store: Store,
    readonly broker: Broker,
    readonly plugins: PluginManager,
    readonly channels: ChannelRegistry,
    readonly router: Router,
    readonly sessions: DaemonSessions,
    readonly mcp: McpManager | undefined,
    private agents: Map<string, DaemonAgent>,
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
        const { McpManager: Manager, syncMcpTools } = await import("../engine/mcp/index.js");
        mcp = new Manager({ logger, hostEnv: spec.env });
        cleanups.push(() => mcp?.close());
        syncMcpTools(mcp, shared);
        await mcp.connectAll(spec.mcp);
      }

      const agents = new Map(spec.agents.map((a) => [a.id, a]));
      const sessions = new DaemonSessions({
        store,
        providers,
        shared,
        hooks,
        agents: () => agents,
        logger,
      });
      const router = new Router({
        bindings: new BindingTable(
          spec.agents.map((a) => ({ id: a.id, active: a.active, inbound_bindings: a.bindings })),
        ),
        sessions,
        replies: new ReplySender(channels, broker),
        logger,
        queueCap: (agentId) => agents.get(agentId)?.queueCap ?? 32,
      });
      const daemon = new Daemon(spec, store, broker, plugins, channels, router, sessions, mcp, agents);
      daemon.inboundSub = broker.subscribe(
        "plugin.inbound.>",
        (event, topic) => router.handle(topic, event),
        {
          name: "router",
        },
      );
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

  /** channel.start for every (kind, instance) an active agent is bound to and a local adapter serves. */
  private async startChannels(): Promise<void> {
    const seen = new Set<string>();
    for (const agent of this.spec.agents) {
      if (!agent.active) continue;
      for (const binding of agent.bindings) {
        const key = `${binding.plugin}.${binding.instance ?? ""}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const adapter = this.channels.get(binding.plugin);
        if (!adapter) {
          this.spec.logger.info(
            { channel: binding.plugin },
            "no local adapter for this channel: its messages are expected through the broker",
          );
          continue;
        }
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
