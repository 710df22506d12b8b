/**
 * Escalations: an agent asks for a human (the `escalate` tool), operators list and resolve them.
 * Each is about a scope — the conversation it was raised in — and at most one is pending per
 * scope. Requests and resolutions are agent events.
 */
import type { admin } from "@nexo/wire/schemas";
import type { Logger } from "../../log.js";
import type { EscalationRecord, Store } from "../../store/index.js";
import type { TakeoverEvents } from "./events.js";
import { anyScopeKey, scopeOfRecord } from "./scope.js";

export interface EscalationRequest {
  summary: string;
  reason: admin.EscalationReason;
  urgency: admin.EscalationUrgency;
  context?: Record<string, unknown>;
}

export interface EscalationsDeps {
  store: () => Store;
  events: TakeoverEvents;
  logger: Logger;
  now?: () => number;
}

export interface EscalationListFilter {
  state: "pending" | "resolved" | "all";
  agentId?: string;
  scopeKind?: string;
  tenantId?: string;
  limit: number;
}

export class Escalations {
  private readonly now: () => number;

  constructor(private readonly deps: EscalationsDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * Raised by an agent in one of its sessions. Returns the pending escalation of the session's
   * scope and whether this call created it (false: one was already pending, left as it was).
   */
  request(sessionId: string, request: EscalationRequest): { entry: admin.EscalationEntry; created: boolean } {
    const store = this.deps.store();
    const session = store.sessions.get(sessionId);
    if (session === undefined) throw new Error(`session ${sessionId} does not exist`);
    const scope = scopeOfRecord(session);
    const { record, created } = store.escalations.request({
      scopeKey: anyScopeKey(scope),
      agentId: session.agentId,
      tenantId: session.tenantId ?? undefined,
      scope,
      summary: request.summary,
      reason: request.reason,
      urgency: request.urgency,
      context: request.context,
      requestedAtMs: this.now(),
    });
    const entry = entryOf(record);
    if (created && entry.state.state === "pending") {
      const { state: _state, ...pending } = entry.state;
      this.deps.events.emit({
        kind: "escalation_requested",
        agent_id: record.agentId,
        ...pending,
        tenant_id: record.tenantId ?? null,
      } as admin.EscalationRequestedEvent);
      this.deps.logger.info(
        { agentId: record.agentId, scope: record.scope, urgency: record.urgency, reason: record.reason },
        "an agent escalated a conversation to a human",
      );
    }
    return { entry, created };
  }

  list(filter: EscalationListFilter): admin.EscalationEntry[] {
    const records = this.deps.store().escalations.list({
      state: filter.state,
      ...(filter.agentId === undefined ? {} : { agentId: filter.agentId }),
      ...(filter.tenantId === undefined ? {} : { tenantId: filter.tenantId }),
      // A scope kind is filtered here: it lives inside the scope's JSON.
      limit: filter.scopeKind === undefined ? filter.limit : Number.MAX_SAFE_INTEGER,
    });
    const wanted =
      filter.scopeKind === undefined
        ? records
        : records.filter((record) => (record.scope as { kind?: string }).kind === filter.scopeKind);
    return wanted.slice(0, filter.limit).map(entryOf);
  }

  /** Settles the scope's pending escalation; false when none was pending. */
  resolve(scope: admin.ProcessingScope, by: admin.ResolvedBy): boolean {
    const record = this.deps.store().escalations.resolve(anyScopeKey(scope), by, this.now());
    if (record === undefined) return false;
    this.deps.events.emit({
      kind: "escalation_resolved",
      agent_id: record.agentId,
      scope: record.scope as admin.ProcessingScope,
      resolved_at_ms: record.resolvedAtMs!,
      by,
      tenant_id: record.tenantId ?? null,
    });
    return true;
  }
}

function entryOf(record: EscalationRecord): admin.EscalationEntry {
  const scope = record.scope as admin.ProcessingScope;
  const state: admin.EscalationState =
    record.resolvedAtMs === undefined
      ? {
          state: "pending",
          scope,
          summary: record.summary,
          reason: record.reason as admin.EscalationReason,
          urgency: record.urgency as admin.EscalationUrgency,
          ...(record.context === undefined ? {} : { context: record.context }),
          requested_at_ms: record.requestedAtMs,
        }
      : {
          state: "resolved",
          scope,
          resolved_at_ms: record.resolvedAtMs,
          by: record.resolvedBy as admin.ResolvedBy,
        };
  return { agent_id: record.agentId, scope, state };
}
