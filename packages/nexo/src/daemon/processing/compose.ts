/**
 * Operator takeover in a daemon: the processing control the router asks before each turn, the
 * escalations, the `escalate` tool every agent gets, and where their events go. Built before the
 * components start; what it needs from them (the store, the sessions) is read when it is used.
 */
import type { OutboundMessage, OutboundReceipt } from "../../channels/registry.js";
import { createEscalateTool } from "../../engine/tools/escalate.js";
import type { ToolRegistry } from "../../engine/tools/registry.js";
import type { Logger } from "../../log.js";
import type { Store } from "../../store/index.js";
import type { DaemonSessions } from "../sessions.js";
import { ProcessingControl, pendingCapFromEnv } from "./control.js";
import { Escalations } from "./escalations.js";
import type { TakeoverEvents } from "./events.js";

export interface Takeover {
  readonly control: ProcessingControl;
  readonly escalations: Escalations;
}

export interface TakeoverDeps {
  store: () => Store;
  /** The router's sessions, once routing runs. */
  sessions: () => DaemonSessions | undefined;
  /** Sends through the channel plugin serving `kind` (the services facade's channels.send). */
  send(kind: string, message: OutboundMessage): Promise<OutboundReceipt>;
  /** The tools every agent shares; `escalate` is registered there. */
  tools: ToolRegistry;
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
}

export function takeoverOf(deps: TakeoverDeps): Takeover {
  const { logger } = deps;
  // The store's agent event log, on the scope's stream; its listeners push them live.
  const events: TakeoverEvents = {
    emit: ({ kind, agent_id: _agent, scope, tenant_id, ...fields }) => {
      deps.store().agentEvents.appendScopeEvent(kind, scope, fields, {
        ...(tenant_id === undefined ? {} : { tenantId: tenant_id }),
      });
    },
  };
  const escalations = new Escalations({ store: deps.store, events, logger });
  const routingSessions = (): DaemonSessions => {
    const sessions = deps.sessions();
    if (sessions === undefined) throw new Error("the daemon's routing is not running");
    return sessions;
  };
  const control = new ProcessingControl({
    store: deps.store,
    send: deps.send,
    sessionOf: (key) => routingSessions().open(key).id,
    refresh: (sessionIds) => deps.sessions()?.forgetRecords(sessionIds),
    escalations,
    events,
    pendingCap: pendingCapFromEnv(deps.env),
    logger,
  });
  deps.tools.register(
    createEscalateTool((ctx, args) => {
      const { entry, created } = escalations.request(ctx.sessionId, args);
      const state = entry.state;
      return { created, requestedAtMs: state.state === "pending" ? state.requested_at_ms : Date.now() };
    }),
  );
  return { control, escalations };
}
