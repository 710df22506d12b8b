/**
 * The daemon's components, in boot order:
 *
 *   state-lock → http → store → broker → plugins → microapps → mcp → routing → channels
 *
 * (then `config-watch`, which the daemon adds when it was started from a config directory). Each
 * is started only after the ones before it, and shutdown runs the list backwards: channels stop
 * taking messages, routing lets the turns in flight finish, MCP servers and plugins shut down, the
 * broker and the store close, the health listener closes, the lock is released.
 *
 * The health listener comes up right after the lock so that /healthz answers during a long boot
 * and /readyz says "starting" (503) until every component runs; a taken port stops the boot before
 * a single plugin is spawned.
 */
import { join } from "node:path";
import { createBroker } from "../../broker/config.js";
import type { Broker } from "../../broker/types.js";
import { InboundReceipts } from "../../channels/inbound-receipts.js";
import { readOperatorTokenFile } from "../../config/secret-files.js";
import { PluginManager } from "../../extensions/plugins/manager.js";
import { DATABASE_FILE } from "../../paths.js";
import { CHILD_LEDGER_DIR, type ChildLedger, openChildLedger } from "../../process/ledger.js";
import { Store } from "../../store/index.js";
import { NEXO_VERSION } from "../../version.js";
import { type HealthServer, HealthServerError, startHealthServer } from "../http.js";
import { type Component, type LifecycleState, Part } from "../lifecycle.js";
import { acquireStateLock, type StateLock } from "../lock.js";
import type { Metrics } from "../metrics.js";
import { type Takeover, takeoverOf } from "../processing/compose.js";
import { daemonReadiness, type ReadinessCheck } from "../readiness.js";
import type { DaemonServices } from "../services/index.js";
import type { DaemonSpec } from "../types.js";
import { BoundChannels } from "./channels.js";
import { McpServers } from "./mcp.js";
import { type MicroappRequestServer, Microapps } from "./microapps.js";
import { DaemonRegistries } from "./registries.js";
import { type Routing, routingComponent } from "./routing.js";

export interface DaemonParts {
  readonly registries: DaemonRegistries;
  readonly lock: Part<StateLock>;
  /** undefined when daemon.yaml disables the listener. */
  readonly http: Part<HealthServer | undefined>;
  readonly store: Part<Store>;
  readonly broker: Part<Broker>;
  readonly plugins: Part<PluginManager>;
  readonly microapps: Microapps;
  readonly mcp: McpServers;
  readonly routing: Part<Routing>;
  readonly channels: BoundChannels;
  /** Operator takeover: paused conversations and escalations (daemon/processing). */
  readonly takeover: Takeover;
  /** All of the above that have a lifecycle, in boot order. */
  readonly components: Component[];
}

/** The hint printed when the health port is taken: the usual cause is a second daemon. */
export const HTTP_PORT_HINT =
  "another program (often another nexo daemon) listens there; give this daemon its own port in " +
  "daemon.yaml, e.g. `http: { bind: 127.0.0.1:0 }` to pick a free one, or `http: { enabled: false }`";

/** What the composition root (the CLI) adds to the daemon's own components. */
export interface DaemonExtras {
  /** Serves the microapps' own requests: the admin RPC (admin/serve.ts). Absent: they get -32601. */
  microappRequests?: MicroappRequestServer;
}

export function composeDaemon(
  spec: DaemonSpec,
  metrics: Metrics,
  lifecycleState: () => LifecycleState,
  extras: DaemonExtras = {},
  /** The daemon's services facade, made after the components. */
  services: () => DaemonServices = () => {
    throw new Error("this daemon has no services facade");
  },
): DaemonParts {
  const { logger } = spec;
  const registries = new DaemonRegistries(spec.llm, spec.agents, logger, spec.memory);

  let ledger: ChildLedger | undefined;
  const lock = new Part("state-lock", {
    start: async () => {
      // One daemon per state dir: a second one is refused (a dead owner's lock is taken over).
      const held = await acquireStateLock(spec.stateDir);
      if (held.replaced)
        logger.warn(
          { lock: held.path, reason: held.replaced.reason },
          "took over the lock of a daemon that is no longer running",
        );
      // Under the lock: reap what a SIGKILLed predecessor left running, then record our children.
      ledger = openChildLedger(join(spec.stateDir, CHILD_LEDGER_DIR), logger);
      return held;
    },
    stop: (held) => {
      ledger?.close();
      held.release();
    },
  });

  const store = new Part("store", {
    start: () => {
      const started = Date.now();
      const opened = Store.open(join(spec.stateDir, DATABASE_FILE), {
        onMigration: (step) =>
          logger.info(
            { migration: step.version },
            `store: migration ${step.index} of ${step.total}: ${step.name} (schema v${step.version})`,
          ),
      });
      const { from, to, applied } = opened.migration;
      if (applied.length > 0) {
        logger.info(`store: schema v${from} → v${to} in ${Date.now() - started} ms`);
      }
      return opened;
    },
    stop: (opened) => opened.close(),
  });

  const broker = new Part("broker", {
    start: () => createBroker(spec.broker, { logger }),
    stop: (connected) => connected.close(),
  });

  // Plugins' acknowledged publishes wait here for the router's word on their message.
  const receipts = new InboundReceipts();
  const plugins = new Part("plugins", {
    start: async () => {
      const manager = new PluginManager({
        plugins: spec.plugins.dirs,
        stateRoot: join(spec.stateDir, "plugins"),
        env: spec.env,
        nexoVersion: NEXO_VERSION,
        broker: broker.value,
        // Acknowledged publish only on the in-process broker: over NATS the daemon that routes a
        // channel's messages may be another one, so this daemon's router cannot answer for them
        // (its "no agent bound here" is no refusal); such plugins fall back to broker.publish.
        ...(broker.value.kind === "local" ? { receipts } : {}),
        registries: {
          tools: registries.tools,
          providers: registries.providers.global,
          hooks: registries.hooks,
          channels: registries.channels,
          vectors: registries.vectors,
        },
        services: {
          memory: registries.longTermMemory.forPlugins(store.value.memory),
          providers: registries.providers.global,
        },
        settings: spec.plugins.settings,
        logger,
      });
      // One plugin's failure never rejects here: it shows in the plugin's status instead.
      await manager.start();
      return manager;
    },
    stop: (manager, reason) => manager.stop(reason),
  });

  const mcp = new McpServers(spec.mcp, registries.tools, spec.env, logger);

  let routing: Part<Routing> | undefined;
  const takeover = takeoverOf({
    store: () => store.value,
    sessions: () => (routing?.ready ? routing.value.sessions : undefined),
    send: (kind, message) => services().channels.send(kind, message),
    tools: registries.tools,
    env: spec.env,
    logger,
  });

  routing = routingComponent({
    gate: takeover.control,
    store,
    broker,
    plugins,
    registries,
    metrics,
    logger,
    shutdownGraceMs: spec.shutdownGraceMs ?? 10_000,
    receipts,
  });

  const channels = new BoundChannels(
    registries.channels,
    () => registries.agents.values(),
    (listener) => {
      plugins.value.on("wired", listener);
      return () => plugins.value.off("wired", listener);
    },
    logger,
    (listener) => {
      plugins.value.on("respawned", listener);
      return () => plugins.value.off("respawned", listener);
    },
  );

  const bootCheck = (): ReadinessCheck => {
    const state = lifecycleState();
    return { name: "daemon", ready: state === "running", detail: state };
  };
  const http = new Part("http", {
    start: async () => {
      if (spec.http === undefined) return undefined;
      // A token rotated through the admin RPC (auth/rotate_token) replaced daemon.yaml's.
      const rotated = spec.http.token === undefined ? undefined : readOperatorTokenFile(spec.stateDir);
      if (rotated !== undefined)
        logger.info({}, "the health listener's token is the one rotated through the admin RPC");
      const token = rotated ?? spec.http.token;
      try {
        const server = await startHealthServer({
          host: spec.http.host,
          port: spec.http.port,
          ...(token ? { token } : {}),
          metrics,
          readiness: daemonReadiness({
            broker: {
              readiness: () =>
                broker.ready
                  ? broker.value.readiness()
                  : { ready: false, state: "disconnected", detail: "not started yet" },
            },
            plugins: { status: () => (plugins.ready ? plugins.value.status() : []) },
            mcp,
            extra: [bootCheck],
          }),
          logger,
        });
        logger.info({ url: server.url }, "health and metrics listening");
        return server;
      } catch (error) {
        if (error instanceof HealthServerError && error.code === "listen_failed")
          throw new HealthServerError(error.code, `${error.message}: ${HTTP_PORT_HINT}`, error);
        throw error;
      }
    },
    stop: (server) => server?.close(),
  });

  const microapps = new Microapps(spec, store, http, registries, logger, extras.microappRequests);

  return {
    registries,
    lock,
    http,
    store,
    broker,
    plugins,
    microapps,
    mcp,
    routing,
    channels,
    takeover,
    components: [lock, http, store, broker, plugins, microapps, mcp, routing, channels],
  };
}
