/**
 * Many plugins at once: load their manifests, start them in parallel, wire each into the
 * engine's registries (channels, LLM providers, hooks, vector backends, tools), its services
 * (memory.recall, llm.complete, with its grants) and the broker bridge, report their status, and
 * stop them all.
 *
 * One plugin's failure never stops the others: a bad manifest, a refused sandbox or a failed
 * handshake leaves that plugin `invalid` or `failed` in the status, with the reason, and the rest
 * run. Starting waits for each plugin's first attempt only: one that crashed and is scheduled to
 * restart is left restarting in the background and wired when it comes up (`wired`). A plugin that later gives up (crash loop) has its wrappers removed, so the model is not
 * offered tools that cannot answer.
 */
import { EventEmitter } from "node:events";
import { join } from "node:path";
import type { Broker } from "../../broker/types.js";
import type { InboundReceipts } from "../../channels/inbound-receipts.js";
import type { ChannelRegistry } from "../../channels/registry.js";
import type { HookRunner } from "../../engine/hooks.js";
import type { ProviderRegistry } from "../../engine/providers/registry.js";
import type { ToolRegistry } from "../../engine/tools/registry.js";
import type { AgentMemory } from "../../engine/types.js";
import { isoTime } from "../../iso-time.js";
import { createLogger } from "../../log.js";
import type { VectorBackendRegistry } from "../../memory/vector.js";
import type { ProcessGroupRegistry } from "../../process/registry.js";
import type { RestartPolicy } from "../restart-policy.js";
import type { SupervisorLogger, SupervisorState } from "../supervisor.js";
import { type BridgeStats, BrokerBridge } from "./bridge.js";
import { registerPluginChannels } from "./channel.js";
import { errorCodeOf } from "./errors.js";
import type { PluginGrants } from "./grants.js";
import { registerPluginHooks } from "./hook.js";
import { type PluginErrorRecord, PluginHost } from "./host.js";
import { registerPluginLlmProviders } from "./llm.js";
import { type LoadedPluginManifest, loadPluginManifest } from "./manifest.js";
import { registerPluginVectorBackends } from "./memory.js";
import { attachPluginServices, type ProviderLookup } from "./services.js";
import { registerPluginTools } from "./tool.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The engine's registries the wrappers go into; a missing one means that capability is not wired. */
export interface PluginRegistries {
  tools?: ToolRegistry;
  providers?: ProviderRegistry;
  hooks?: HookRunner;
  channels?: ChannelRegistry;
  vectors?: VectorBackendRegistry;
}

/** What the operator decides per plugin. */
export interface PluginSettings {
  grants?: PluginGrants;
  /** Extra environment for this plugin (wins over its manifest's). */
  env?: Readonly<Record<string, string>>;
  /** Variables copied from the daemon's environment, by name. */
  passthroughEnv?: readonly string[];
  /**
   * plugins.yaml's `restart:` for this plugin. Key by key it wins over the manager-wide `restart`,
   * which wins over the manifest's `[plugin.supervisor]`: the operator decides.
   */
  restart?: Partial<RestartPolicy>;
}

export interface PluginManagerOptions {
  /** Plugin directories, or their nexo-plugin.toml files. */
  plugins: readonly string[];
  /** Each plugin's state dir is `<stateRoot>/<plugin id>`. */
  stateRoot: string;
  env?: Env;
  nexoVersion?: string;
  broker?: Broker;
  /**
   * With the broker: channel plugins are offered the acknowledged publish
   * (`broker.publish_acked`), answered once the router reported on the message here.
   */
  receipts?: InboundReceipts;
  registries?: PluginRegistries;
  /** What `memory.recall` and `llm.complete` are served from. */
  services?: { memory?: AgentMemory; providers?: ProviderLookup };
  /** By plugin id. */
  settings?: Readonly<Record<string, PluginSettings>>;
  restart?: Partial<RestartPolicy>;
  shutdownTimeoutMs?: number;
  logger?: SupervisorLogger;
  processGroups?: ProcessGroupRegistry;
}

export interface PluginStatus {
  /** The plugin id, or the path when the manifest could not be read. */
  id: string;
  /** The directory or manifest it was loaded from. */
  source: string;
  /** `invalid`: the manifest (or another plugin with the same id) kept it from being created. */
  state: SupervisorState | "invalid";
  version: string | undefined;
  pid: number | undefined;
  /** When the running process became ready (for its uptime); undefined while none runs. */
  startedAt: Date | undefined;
  restarts: number;
  sandboxed: boolean | undefined;
  tools: string[];
  warnings: string[];
  /** `broker.event` notifications dropped because the plugin did not keep up (§8). */
  droppedEvents: number;
  bridge: BridgeStats | undefined;
  lastError: PluginErrorRecord | undefined;
  stderrTail: string[];
}

interface Slot {
  source: string;
  manifest?: LoadedPluginManifest;
  host?: PluginHost;
  bridge?: BrokerBridge;
  removers: Array<() => void>;
  warnings: string[];
  error?: PluginErrorRecord;
}

export interface PluginManagerEvents {
  /**
   * A plugin's wrappers were put in the registries: at its first start, or later, when a plugin
   * whose first attempt failed came up on a restart (its channels may need starting then).
   */
  wired: [pluginId: string];
  /**
   * A wired plugin's process crashed and a new one is up (same wrappers, new process): whatever
   * the old process held — a started channel — is gone and must be asked for again.
   */
  respawned: [pluginId: string];
}

export class PluginManager extends EventEmitter<PluginManagerEvents> {
  private readonly options: { -readonly [K in keyof PluginManagerOptions]: PluginManagerOptions[K] };
  private readonly logger: SupervisorLogger;
  private slots: Slot[] = [];

  constructor(options: PluginManagerOptions) {
    super();
    this.options = options;
    this.logger = options.logger ?? createLogger({ base: { component: "plugin-manager" } });
  }

  /**
   * Loads and starts every plugin, in parallel. Resolves when each has started or failed; never
   * rejects because of a plugin. Returns the status of all of them.
   */
  async start(): Promise<PluginStatus[]> {
    const env = this.options.env ?? process.env;
    this.slots = await Promise.all(
      this.options.plugins.map(async (source): Promise<Slot> => {
        const slot: Slot = { source, removers: [], warnings: [] };
        try {
          slot.manifest = await loadPluginManifest(source, { env, ...this.versionOption() });
        } catch (error) {
          slot.error = record("manifest_invalid", error);
        }
        return slot;
      }),
    );
    const seen = new Map<string, string>();
    for (const slot of this.slots) {
      if (slot.manifest === undefined) continue;
      const first = seen.get(slot.manifest.id);
      if (first !== undefined) {
        slot.error = record(
          "duplicate_plugin_id",
          new Error(`plugin id "${slot.manifest.id}" is already loaded from ${first}`),
        );
        slot.manifest = undefined;
      } else {
        seen.set(slot.manifest.id, slot.manifest.file);
      }
    }
    await Promise.all(this.slots.map((slot) => this.startSlot(slot)));
    return this.status();
  }

  /**
   * Loads and starts one more plugin (a config reload added it). Its id must not be taken by a
   * plugin already loaded. Returns its status; never rejects because of the plugin.
   */
  async add(source: string): Promise<PluginStatus> {
    const env = this.options.env ?? process.env;
    const slot: Slot = { source, removers: [], warnings: [] };
    try {
      slot.manifest = await loadPluginManifest(source, { env, ...this.versionOption() });
      const taken = this.slots.find((other) => other.manifest?.id === slot.manifest?.id);
      if (taken) {
        slot.error = record(
          "duplicate_plugin_id",
          new Error(`plugin id "${slot.manifest.id}" is already loaded from ${taken.manifest?.file}`),
        );
        slot.manifest = undefined;
      }
    } catch (error) {
      slot.error = record("manifest_invalid", error);
    }
    this.slots.push(slot);
    await this.startSlot(slot);
    return this.status().at(-1)!;
  }

  /** Stops one plugin (shutdown, grace, SIGKILL), removes its wrappers and forgets it. */
  async remove(source: string, reason = "removed from the config"): Promise<boolean> {
    const index = this.slots.findIndex((slot) => slot.source === source);
    if (index < 0) return false;
    const [slot] = this.slots.splice(index, 1);
    this.unwire(slot!);
    await slot!.host?.stop(reason);
    return true;
  }

  /** New operator settings (grants, env) for plugins started from now on, e.g. after a reload. */
  updateSettings(settings: Readonly<Record<string, PluginSettings>>): void {
    this.options.settings = settings;
  }

  /** The sources (dirs or manifests) currently loaded, in load order. */
  sources(): string[] {
    return this.slots.map((slot) => slot.source);
  }

  /**
   * The state directories of the plugins that serve channel `kind` (their manifests declare it):
   * where their downloads of inbound files live, and the only place the daemon reads them from.
   */
  stateDirsServing(kind: string): string[] {
    return this.slots.flatMap((slot) =>
      slot.manifest?.channelKinds.includes(kind) ? [this.stateDirOf(slot.manifest.id)] : [],
    );
  }

  /** Each plugin's state dir: `<stateRoot>/<plugin id>`. */
  private stateDirOf(pluginId: string): string {
    return join(this.options.stateRoot, pluginId);
  }

  /** The host of a plugin, by id. */
  host(id: string): PluginHost | undefined {
    return this.slots.find((slot) => slot.host?.id === id)?.host;
  }

  status(): PluginStatus[] {
    return this.slots.map((slot) => {
      const host = slot.host?.status();
      const bridge = slot.bridge?.stats();
      return {
        id: slot.manifest?.id ?? slot.source,
        source: slot.source,
        state: host?.state ?? (slot.manifest === undefined ? "invalid" : "failed"),
        version: slot.manifest?.manifest.plugin.version,
        pid: host?.pid,
        startedAt: host?.startedAt,
        restarts: host?.restarts ?? 0,
        sandboxed: host?.sandboxed,
        tools: host?.tools ?? [],
        warnings: [...(host?.warnings ?? []), ...slot.warnings],
        droppedEvents: bridge?.dropped ?? 0,
        bridge,
        lastError: host?.lastError ?? slot.error,
        stderrTail: host?.stderrTail ?? [],
      };
    });
  }

  /** Stops every plugin (shutdown, 1 s grace, SIGKILL) and removes its wrappers. */
  async stop(reason = "daemon stopping"): Promise<void> {
    await Promise.all(
      this.slots.map(async (slot) => {
        this.unwire(slot);
        await slot.host?.stop(reason);
      }),
    );
  }

  private versionOption(): { nexoVersion?: string } {
    return this.options.nexoVersion === undefined ? {} : { nexoVersion: this.options.nexoVersion };
  }

  private async startSlot(slot: Slot): Promise<void> {
    const manifest = slot.manifest;
    if (manifest === undefined) return;
    const { options } = this;
    const settings = options.settings?.[manifest.id] ?? {};
    // The bridge below serves the acknowledged publish; the handshake tells the plugin so.
    const bridged = options.broker !== undefined && manifest.channelKinds.length > 0;
    const acked = bridged && options.receipts !== undefined;
    let host: PluginHost;
    try {
      host = new PluginHost({
        manifest,
        stateDir: this.stateDirOf(manifest.id),
        ...(options.env ? { env: options.env } : {}),
        ...this.versionOption(),
        ...(acked ? { hostFeatures: ["broker.publish_acked"] as const } : {}),
        ...(settings.env ? { operatorEnv: settings.env } : {}),
        ...(settings.passthroughEnv ? { passthroughEnv: settings.passthroughEnv } : {}),
        restart: { ...options.restart, ...settings.restart },
        ...(options.shutdownTimeoutMs ? { shutdownTimeoutMs: options.shutdownTimeoutMs } : {}),
        logger: this.logger,
        ...(options.processGroups ? { processGroups: options.processGroups } : {}),
      });
    } catch (error) {
      slot.error = record(errorCodeOf(error), error);
      return;
    }
    slot.host = host;
    attachPluginServices(host, {
      ...options.services,
      ...(settings.grants ? { grants: settings.grants } : {}),
    });
    // Like the services, the bridge must serve the very first peer: a plugin may publish as soon
    // as it has answered initialize, before start() returns here.
    if (bridged && options.broker !== undefined) {
      slot.bridge = new BrokerBridge({
        host,
        broker: options.broker,
        ...(options.receipts === undefined ? {} : { receipts: options.receipts }),
        kinds: manifest.channelKinds,
        logger: host.protocolLogger,
      });
      slot.bridge.start();
    }
    host.on("failed", () => this.unwire(slot));
    try {
      await host.start();
    } catch (error) {
      const message = (error as Error).message;
      if (host.state === "backoff" || host.state === "starting") {
        // Only the first attempt is waited for; the supervisor goes on restarting per the policy,
        // and the wrappers are put in place when an incarnation comes up.
        this.logger.warn(
          { plugin: manifest.id, err: message },
          "plugin did not start on its first attempt; it keeps restarting in the background",
        );
        host.once("ready", () => {
          if (this.slots.includes(slot)) this.wire(slot, host, manifest);
        });
        return;
      }
      slot.bridge?.stop();
      this.logger.error({ plugin: manifest.id, err: message }, "plugin did not start");
      return;
    }
    this.wire(slot, host, manifest);
  }

  private wire(slot: Slot, host: PluginHost, manifest: LoadedPluginManifest): void {
    const { registries = {} } = this.options;
    const wirings: Array<[string, () => () => void]> = [];
    if (registries.channels)
      wirings.push(["channels", () => registerPluginChannels(host, registries.channels!)]);
    if (registries.providers)
      wirings.push(["llm_providers", () => registerPluginLlmProviders(host, registries.providers!)]);
    if (registries.hooks)
      wirings.push(["hooks", () => registerPluginHooks(host, registries.hooks!, this.logger)]);
    if (registries.vectors)
      wirings.push(["memory_backends", () => registerPluginVectorBackends(host, registries.vectors!)]);
    if (registries.tools)
      wirings.push(["tools", () => registerPluginTools(host, registries.tools!, this.logger)]);
    for (const [what, wire] of wirings) {
      try {
        slot.removers.push(wire());
      } catch (error) {
        // E.g. another plugin already provides this channel kind or provider name.
        const warning = `${what} not registered: ${(error as Error).message}`;
        slot.warnings.push(warning);
        this.logger.warn({ plugin: manifest.id }, warning);
      }
    }
    const wiredIncarnation = host.session?.incarnation;
    const onReady = (session: { incarnation: number }) => {
      if (session.incarnation !== wiredIncarnation && this.slots.includes(slot))
        this.emit("respawned", manifest.id);
    };
    host.on("ready", onReady);
    slot.removers.push(() => host.off("ready", onReady));
    this.emit("wired", manifest.id);
  }

  private unwire(slot: Slot): void {
    slot.bridge?.stop();
    for (const remove of slot.removers.splice(0).reverse()) remove();
  }
}

function record(code: string, error: unknown): PluginErrorRecord {
  return {
    code,
    message: error instanceof Error ? error.message : String(error),
    at: isoTime(),
  };
}
