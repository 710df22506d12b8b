/**
 * The daemon: its components (components/compose.ts) started in order and stopped in reverse, a
 * summary of what runs, hot reload of a new spec, and the services facade the admin RPC and the
 * AppServer's management methods call.
 *
 *   state-lock → http → store → broker → plugins (in parallel) → microapps (in parallel) → mcp
 *   → routing → channels
 *   → config-watch, then one ready line with a summary.
 *
 * Shutdown runs the same list backwards: the watcher stops, channels stop taking messages, in-flight
 * turns finish within a bound (then are cancelled), MCP servers and plugins shut down, the broker and
 * the store close, the health listener closes, the lock is released. A component that fails to start
 * stops the ones before it, newest first, and the error names it (lifecycle.ts).
 */
import type { Broker } from "../broker/types.js";
import type { ChannelRegistry } from "../channels/registry.js";
import type { McpManager } from "../extensions/mcp/manager.js";
import type { PluginManager, PluginStatus } from "../extensions/plugins/manager.js";
import type { Store } from "../store/index.js";
import { NEXO_VERSION } from "../version.js";
import { composeDaemon, type DaemonExtras, type DaemonParts } from "./components/compose.js";
import type { Microapps } from "./components/microapps.js";
import { bindingTableOf } from "./components/routing.js";
import { IdleTrim } from "./idle-trim.js";
import { type Component, Lifecycle, Part } from "./lifecycle.js";
import { Metrics } from "./metrics.js";
import { ConfigReloader } from "./reload.js";
import type { Router } from "./routing/router.js";
import { DaemonServices } from "./services/index.js";
import type { DaemonSessions } from "./sessions.js";
import type { DaemonSpec, DaemonSummary, ReloadReport } from "./types.js";

export type { DaemonExtras } from "./components/compose.js";
export type { DaemonAgent } from "./components/registries.js";
export type { DaemonSpec, DaemonSummary, ReloadReport } from "./types.js";

export class Daemon {
  readonly metrics: Metrics;
  /** What the admin RPC and the AppServer management methods call (services/index.ts). */
  readonly services: DaemonServices;
  /** Re-reads the config directory and applies it; absent when the spec came from no directory. */
  readonly reloader: ConfigReloader | undefined;
  private readonly parts: DaemonParts;
  private readonly lifecycle: Lifecycle;
  /** Reloads and plugin restarts change the same parts: one at a time. */
  private changes: Promise<unknown> = Promise.resolve();
  private stopping: Promise<void> | undefined;
  /** Gives memory back each time the daemon goes idle (spec.idleTrim); absent when off. */
  idleTrim: IdleTrim | undefined;

  private constructor(
    public spec: DaemonSpec,
    extras: DaemonExtras,
  ) {
    this.metrics = spec.metrics ?? new Metrics();
    this.parts = composeDaemon(
      spec,
      this.metrics,
      () => this.lifecycle.state,
      extras,
      () => this.services,
    );
    const components: Component[] = [...this.parts.components];
    if (spec.source !== undefined) {
      const { dir, env, watch = true, debounceMs } = spec.source;
      const reloader = new ConfigReloader(dir, this, env, spec.logger, debounceMs);
      this.reloader = reloader;
      if (watch)
        components.push(
          new Part("config-watch", { start: () => reloader.start(), stop: () => reloader.stop() }),
        );
    }
    this.lifecycle = new Lifecycle(components, spec.logger);
    this.services = new DaemonServices({
      config: spec.source === undefined ? undefined : { dir: spec.source.dir, env: spec.source.env },
      reload: () => {
        if (this.reloader === undefined) throw new Error("this daemon has no config directory");
        return this.reloader.reloadNow();
      },
      plugins: {
        status: () => this.plugins.status(),
        restart: (id) => this.restartPlugin(id),
      },
      mcp: {
        statuses: () => this.parts.mcp.statuses(),
        watch: (listener) => this.parts.mcp.watch(listener),
      },
      channels: {
        bound: () => this.parts.channels.list(),
        adapters: () => this.channels.list().map(({ kind, owner }) => ({ kind, owner })),
        send: (kind, message) => this.channels.get(kind)?.sendOutbound(message),
        features: (kind) => {
          const adapter = this.channels.get(kind);
          return adapter === undefined ? undefined : (adapter.features?.() ?? {});
        },
      },
      takeover: this.parts.takeover,
    });
    this.parts.microapps.bindServices(this.services);
  }

  /**
   * Starts every component in order and logs one ready line. A component that fails stops the
   * ones already started and the returned promise rejects with a ComponentStartError naming it.
   */
  static async start(spec: DaemonSpec, extras: DaemonExtras = {}): Promise<Daemon> {
    const daemon = new Daemon(spec, extras);
    await daemon.lifecycle.start();
    // Every component runs (the channels too, so replies can go out): now the turns an earlier run
    // left undone may start again, before new messages could overtake them in their sessions.
    daemon.parts.store.value.inbox.sweep();
    daemon.parts.routing.value.router.replay();
    const summary = daemon.summary();
    spec.logger.info({ ready: summary }, readyLine(summary));
    if (spec.idleTrim === true)
      daemon.idleTrim = new IdleTrim({
        turnsInFlight: () => daemon.router.queueStats().sessions,
        logger: spec.logger,
      });
    return daemon;
  }

  get store(): Store {
    return this.parts.store.value;
  }
  get broker(): Broker {
    return this.parts.broker.value;
  }
  get plugins(): PluginManager {
    return this.parts.plugins.value;
  }
  get channels(): ChannelRegistry {
    return this.parts.registries.channels;
  }
  get router(): Router {
    return this.parts.routing.value.router;
  }
  get sessions(): DaemonSessions {
    return this.parts.routing.value.sessions;
  }
  get mcp(): McpManager | undefined {
    return this.parts.mcp.manager;
  }
  /** The microapps of extensions.yaml, with the admin RPC serving them. */
  get microapps(): Microapps {
    return this.parts.microapps;
  }
  /** The components' names in boot order. */
  get components(): string[] {
    return this.lifecycle.names();
  }

  summary(): DaemonSummary {
    const bound = this.spec.agents.filter((a) => a.active);
    const http = this.parts.http.ready ? this.parts.http.value?.url : undefined;
    return {
      version: NEXO_VERSION,
      agents: bound.map((a) => a.id),
      bindings: bound.reduce((n, a) => n + a.bindings.length, 0),
      plugins: this.plugins.status().map((p) => ({ id: p.id, state: p.state })),
      microapps: this.parts.microapps.status().map((m) => ({ id: m.id, state: m.state })),
      channels: this.channels.kinds(),
      broker: `${this.broker.kind} (${this.broker.readiness().detail})`,
      mcpServers: this.parts.mcp.statuses().length,
      ...(http === undefined ? {} : { http }),
    };
  }

  /**
   * Applies a new, already validated spec without a restart: agents added, changed or removed take
   * effect for the next message (the binding table is swapped atomically; turns running now
   * finish under the old settings); providers are rebuilt; plugins and MCP servers added, removed
   * or changed are started, shut down or reconnected. The broker, the state dir and the health
   * listener are fixed for the process's life.
   */
  reload(next: DaemonSpec): Promise<ReloadReport> {
    return this.serially(() => this.apply(next));
  }

  /**
   * Stops one plugin and starts it again from its directory (its manifest is read again), then
   * starts the bound channels it serves. Resolves with its status afterwards, whatever the outcome;
   * undefined when no plugin has that id.
   */
  restartPlugin(id: string): Promise<PluginStatus | undefined> {
    return this.serially(async () => {
      const source = this.plugins.status().find((plugin) => plugin.id === id)?.source;
      if (source === undefined) return undefined;
      await this.plugins.remove(source, "restart requested");
      const status = await this.plugins.add(source);
      // Its channel adapters are new ones: channel.start goes to them (and only them).
      await this.parts.channels.startBound();
      return this.plugins.status().find((plugin) => plugin.source === source) ?? status;
    });
  }

  /** Stops every component in reverse boot order. Idempotent. */
  stop(reason = "shutdown requested"): Promise<void> {
    this.stopping ??= (async () => {
      const { logger } = this.spec;
      this.idleTrim?.stop();
      logger.info({ reason }, "nexo daemon stopping");
      await this.lifecycle.stop(reason);
      logger.info({ reason }, "nexo daemon stopped");
    })();
    return this.stopping;
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.changes.then(task, task);
    this.changes = run.catch(() => undefined);
    return run;
  }

  private async apply(next: DaemonSpec): Promise<ReloadReport> {
    const { logger } = this.spec;
    const { registries } = this.parts;
    const before = registries.agents;
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
      mcp: { added: [], removed: [], changed: [] },
      microapps: { added: [], removed: [], restarted: [] },
      providersReloaded: JSON.stringify(this.spec.llm) !== JSON.stringify(next.llm),
      needsRestart: [],
    };
    if (JSON.stringify(this.spec.broker) !== JSON.stringify(next.broker)) report.needsRestart.push("broker");
    if (this.spec.stateDir !== next.stateDir) report.needsRestart.push("state_dir");
    if (JSON.stringify(this.spec.http) !== JSON.stringify(next.http)) report.needsRestart.push("http");

    // Build everything that can fail first, then swap.
    const bindings = bindingTableOf(next.agents);
    if (report.providersReloaded) registries.providers.update(next.llm);
    registries.agents = after;
    registries.longTermMemory.update(next.memory);
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
    report.microapps = await this.parts.microapps.update(next.microapps ?? []);
    report.mcp = await this.parts.mcp.apply(next.mcp);
    const { agents } = report;
    if (agents.added.length + agents.removed.length + agents.changed.length > 0) {
      // Not awaited: when a microapp's own admin call (agents/upsert) caused this reload, that
      // microapp may be waiting for the reply before it reads anything else, so waiting here for
      // its tools/list answer would hold both until a timeout. Failures are logged per microapp.
      void this.parts.microapps.agentsUpdated([...after.keys()]);
    }
    this.spec = {
      ...next,
      broker: this.spec.broker,
      stateDir: this.spec.stateDir,
      http: this.spec.http,
      source: this.spec.source,
    };
    this.parts.channels.resend();
    await this.parts.channels.startBound();
    logger.info({ reload: report }, "configuration reloaded");
    return report;
  }
}

/** The ready line's message: what runs and the URL that matters, readable without the fields. */
function readyLine(summary: DaemonSummary): string {
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
  const parts = [
    count(summary.agents.length, "agent"),
    count(summary.plugins.length, "plugin"),
    ...(summary.microapps.length > 0 ? [count(summary.microapps.length, "microapp")] : []),
    ...(summary.mcpServers > 0 ? [count(summary.mcpServers, "MCP server")] : []),
  ];
  const http =
    summary.http === undefined ? "" : `; health ${summary.http}/readyz, metrics ${summary.http}/metrics`;
  return `nexo daemon ready: ${parts.join(", ")}${http}`;
}
