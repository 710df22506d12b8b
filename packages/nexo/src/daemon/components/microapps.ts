/**
 * The microapps component: the microapps of extensions.yaml on the microapp host, their tools and
 * hooks in the daemon's registries, and their own requests served by a MicroappRequestServer — the
 * admin RPC, which sits above the daemon and is composed in by the CLI (`nexo start`). Without
 * it a microapp's requests are answered -32601. What the daemon offers whoever serves them is the
 * MicroappRuntime: the store, the providers, the state dir, the operator token, notifications to
 * the microapps, the services facade.
 *
 * A reload applies a new extensions.yaml (microapps added, removed or changed are started, stopped
 * or restarted) and, when agents.yaml changed, tells every microapp (`agents/updated`) and asks for
 * its tools again.
 */
import { join } from "node:path";
import type { JsonRpcPeer } from "@nexo/wire";
import type { microapp } from "@nexo/wire/schemas";
import { writeOperatorTokenFile } from "../../config/secret-files.js";
import type { ProviderRegistry } from "../../engine/providers/registry.js";
import type { MicroappDefinition } from "../../extensions/microapps/definition.js";
import type { MicroappHost } from "../../extensions/microapps/host.js";
import {
  type MicroappIdentity,
  MicroappManager,
  type MicroappOutlet,
  type MicroappStatus,
} from "../../extensions/microapps/manager.js";
import type { OriginResolver } from "../../extensions/microapps/tool.js";
import type { Logger } from "../../log.js";
import type { Store } from "../../store/index.js";
import { DEFAULT_AGENT_EVENT_RETENTION_DAYS } from "../config/daemon.js";
import type { HealthServer } from "../http.js";
import { tokenProblem } from "../http-auth.js";
import type { Component, Part } from "../lifecycle.js";
import type { DaemonServices } from "../services/index.js";
import type { DaemonSpec, MicroappChanges } from "../types.js";
import type { DaemonAgent, DaemonRegistries } from "./registries.js";

/** The daemon's operator token (daemon.yaml `http.token`, the health listener's bearer). */
export interface OperatorTokenControl {
  /** The token in force, or undefined when the daemon has none. */
  current(): string | undefined;
  /** Why `token` cannot be the operator token, or undefined when it can. */
  problem(token: string): string | undefined;
  /** Puts `token` in force at once (the next request needs it) and keeps it across restarts. */
  replace(token: string): Promise<void>;
}

/** What the daemon offers whoever serves its microapps' own requests. */
export interface MicroappRuntime {
  readonly store: Store;
  /** llm.yaml's global providers (and `scripted`, and plugins'). */
  readonly providers: ProviderRegistry;
  readonly stateDir: string;
  /** The daemon's environment: knobs such as kill switches and retention. */
  readonly env: NodeJS.ProcessEnv;
  /** The environment the config's `${VAR}`s are read with. */
  readonly configEnv: Readonly<Record<string, string | undefined>>;
  readonly operatorToken: OperatorTokenControl;
  /** Days agent events are kept (daemon.yaml `agent_events.retention_days`). */
  readonly agentEventRetentionDays: number;
  /** The facade that manages the running daemon (agents, providers, MCP, plugins, reload). */
  readonly services: DaemonServices;
  /** Pushes a notification to the running microapps holding its capability; returns who got it. */
  notify(method: microapp.MicroappNotificationName, params: unknown): string[];
  /** The running microapps, one by one: for a sender with its own per-microapp queue. */
  outlets(): MicroappOutlet[];
  /** Every configured microapp's status (microapps/list). */
  status(): MicroappStatus[];
  /** Restarts one microapp (microapps/restart); undefined for an id extensions.yaml lacks. */
  restart(id: string): Promise<MicroappStatus | undefined>;
  readonly logger: Logger;
}

/** Serves the microapps' own requests on each of their peers; `close` when the daemon stops. */
export interface MicroappRequests {
  serve(identity: MicroappIdentity, peer: JsonRpcPeer): void;
  /** The methods something serves on this daemon (any other is answered -32601). */
  served?(): readonly string[];
  close?(): void | Promise<void>;
}

export type MicroappRequestServer = (runtime: MicroappRuntime) => MicroappRequests;

export class Microapps implements Component {
  readonly name = "microapps";
  private manager: MicroappManager | undefined;
  private requests: MicroappRequests | undefined;
  private services: DaemonServices | undefined;

  constructor(
    private readonly spec: DaemonSpec,
    private readonly store: Part<Store>,
    private readonly http: Part<HealthServer | undefined>,
    private readonly registries: DaemonRegistries,
    private readonly logger: Logger,
    private readonly serveRequests: MicroappRequestServer | undefined,
  ) {}

  /** The services facade, which the daemon makes after its components. */
  bindServices(services: DaemonServices): void {
    this.services = services;
  }

  async start(): Promise<void> {
    const { spec, registries, logger } = this;
    const store = this.store.value;
    let manager: MicroappManager | undefined;
    const services = this.services;
    if (this.serveRequests !== undefined && services === undefined)
      throw new Error("the services facade was not bound before the microapps started");
    this.requests = this.serveRequests?.({
      store,
      providers: registries.providers.global,
      stateDir: spec.stateDir,
      env: spec.env,
      configEnv: spec.source?.env ?? spec.env,
      operatorToken: daemonOperatorToken(spec.stateDir, this.http),
      agentEventRetentionDays: spec.agentEventRetentionDays ?? DEFAULT_AGENT_EVENT_RETENTION_DAYS,
      services: services!,
      notify: (method, params) => manager?.notify(method, params) ?? [],
      outlets: () => manager?.outlets() ?? [],
      status: () => manager?.status() ?? [],
      restart: async (id) => manager?.restart(id),
      logger,
    });
    const requests = this.requests;
    manager = new MicroappManager({
      definitions: spec.microapps ?? [],
      stateRoot: join(spec.stateDir, "extensions"),
      env: spec.env,
      registries: { tools: registries.tools, hooks: registries.hooks },
      origin: originFromSessions(store, () => registries.agents),
      ...(requests === undefined ? {} : { serve: (identity, peer) => requests.serve(identity, peer) }),
      logger,
    });
    this.manager = manager;
    // One microapp's failure never rejects here: it shows in the microapp's status instead.
    await manager.start();
  }

  async stop(reason: string): Promise<void> {
    await this.manager?.stop(reason);
    await this.requests?.close?.();
  }

  /** The host of a running (or restarting) microapp, by id. */
  host(id: string): MicroappHost | undefined {
    return this.manager?.host(id);
  }

  status(): MicroappStatus[] {
    return this.manager?.status() ?? [];
  }

  /** The methods the microapps' requests are served for on this daemon (none without a server). */
  servedMethods(): readonly string[] {
    return this.requests?.served?.() ?? [];
  }

  /** Applies a new extensions.yaml. */
  update(definitions: readonly MicroappDefinition[]): Promise<MicroappChanges> {
    return this.manager?.update(definitions) ?? Promise.resolve({ added: [], removed: [], restarted: [] });
  }

  /** agents.yaml changed: `agents/updated` and a tools/list refresh for every running microapp. */
  agentsUpdated(agentIds: readonly string[]): Promise<void> {
    return this.manager?.agentsUpdated(agentIds) ?? Promise.resolve();
  }
}

/**
 * The operator token is the health listener's bearer: rotated in place (the next request needs the
 * new one) and kept in the state dir, where it wins over daemon.yaml's `http.token` at the next
 * start. No listener, or one without a token: nothing to rotate.
 */
function daemonOperatorToken(stateDir: string, http: Part<HealthServer | undefined>): OperatorTokenControl {
  const server = () => (http.ready ? http.value : undefined);
  return {
    current: () => server()?.token(),
    problem: tokenProblem,
    async replace(token) {
      const listener = server();
      if (listener === undefined) throw new Error("the health listener is off: there is no operator token");
      await writeOperatorTokenFile(stateDir, token);
      listener.setToken(token);
    },
  };
}

/**
 * Where a tool call came from, read from the session it runs in: the channel (`<kind>` or
 * `<kind>.<instance>`), the account (the tenant key), the contact, and which of the agent's
 * bindings routed it.
 */
export function originFromSessions(
  store: Store,
  agents: () => ReadonlyMap<string, DaemonAgent>,
): OriginResolver {
  return (ctx) => {
    const session = store.sessions.get(ctx.sessionId);
    if (session?.channel === null || session?.channel === undefined)
      return { binding_context: { agent_id: ctx.agentId } };
    const dot = session.channel.indexOf(".");
    const kind = dot < 0 ? session.channel : session.channel.slice(0, dot);
    const instance = dot < 0 ? undefined : session.channel.slice(dot + 1);
    const index = (agents().get(ctx.agentId)?.bindings ?? []).findIndex(
      (binding) => binding.plugin === kind && binding.instance === instance,
    );
    const account = session.account ?? undefined;
    return {
      binding_context: {
        agent_id: ctx.agentId,
        channel: kind,
        ...(account === undefined ? {} : { account_id: account, binding_id: `${kind}:${account}` }),
        ...(index < 0 ? {} : { binding_index: index }),
      },
      inbound: {
        kind: `${kind}_message`,
        ...(session.contact === null ? {} : { from: session.contact }),
        session_id: session.id,
      },
    };
  };
}
