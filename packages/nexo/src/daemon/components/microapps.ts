/**
 * The microapps component: the microapps of extensions.yaml on the microapp host, their tools and
 * hooks in the daemon's registries, and the admin RPC frame serving their own requests over the
 * daemon's real subsystems (the store's audit log and memory, the providers, the state dir's
 * secrets, the health listener's operator token). The audit log's retention is applied at start
 * and every hour.
 *
 * A reload applies a new extensions.yaml (microapps added, removed or changed are started, stopped
 * or restarted) and, when agents.yaml changed, tells every microapp (`agents/updated`) and asks for
 * its tools again.
 */
import { join } from "node:path";
import {
  AdminFrame,
  auditRetentionFromEnv,
  keepAuditBounded,
  type OperatorToken,
  writeOperatorTokenFile,
} from "../../admin/index.js";
import type { MicroappDefinition } from "../../extensions/microapps/definition.js";
import type { MicroappHost } from "../../extensions/microapps/host.js";
import { MicroappManager, type MicroappStatus } from "../../extensions/microapps/manager.js";
import type { OriginResolver } from "../../extensions/microapps/tool.js";
import type { Logger } from "../../log.js";
import type { Store } from "../../store/index.js";
import type { HealthServer } from "../http.js";
import { tokenProblem } from "../http-auth.js";
import type { Component, Part } from "../lifecycle.js";
import type { DaemonSpec } from "../types.js";
import type { DaemonAgent, DaemonRegistries } from "./registries.js";

export interface MicroappChanges {
  added: string[];
  removed: string[];
  restarted: string[];
}

export class Microapps implements Component {
  readonly name = "microapps";
  private manager: MicroappManager | undefined;
  private stopSweeping: (() => void) | undefined;

  constructor(
    private readonly spec: DaemonSpec,
    private readonly store: Part<Store>,
    private readonly http: Part<HealthServer | undefined>,
    private readonly registries: DaemonRegistries,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const { spec, registries, logger } = this;
    const store = this.store.value;
    this.stopSweeping = keepAuditBounded(store.audit, auditRetentionFromEnv(spec.env), logger);
    if (spec.env.NEXO_MICROAPP_ADMIN_AUDIT_DB)
      logger.warn(
        { audit: store.path },
        "NEXO_MICROAPP_ADMIN_AUDIT_DB is not read: the admin audit log lives in the daemon's database",
      );
    let manager: MicroappManager | undefined;
    const frame = new AdminFrame({
      services: {
        audit: store.audit,
        memory: store.memory,
        providers: registries.providers.global,
        secrets: { stateDir: spec.stateDir, env: spec.source?.env ?? spec.env },
        operatorToken: daemonOperatorToken(spec.stateDir, this.http),
        notify: (method, params) => manager?.notify(method, params) ?? [],
      },
      env: spec.env,
      logger,
    });
    manager = new MicroappManager({
      definitions: spec.microapps ?? [],
      stateRoot: join(spec.stateDir, "extensions"),
      env: spec.env,
      registries: { tools: registries.tools, hooks: registries.hooks },
      origin: originFromSessions(store, () => registries.agents),
      serve: (identity, peer) => frame.serve(identity, peer),
      logger,
    });
    this.manager = manager;
    // One microapp's failure never rejects here: it shows in the microapp's status instead.
    await manager.start();
  }

  async stop(reason: string): Promise<void> {
    this.stopSweeping?.();
    await this.manager?.stop(reason);
  }

  /** The host of a running (or restarting) microapp, by id. */
  host(id: string): MicroappHost | undefined {
    return this.manager?.host(id);
  }

  status(): MicroappStatus[] {
    return this.manager?.status() ?? [];
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
function daemonOperatorToken(stateDir: string, http: Part<HealthServer | undefined>): OperatorToken {
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
