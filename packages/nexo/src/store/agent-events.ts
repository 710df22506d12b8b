/**
 * The agent event log: every transcript append, processing state change, dropped pending inbound
 * and escalation, in the order it happened, each with a `seq` that counts per session (its
 * "stream") — the firehose microapps read live and back (admin `agent_events/*`,
 * `nexo/notify/agent_event`). Live and backfill give the same seq because the seq is assigned here,
 * inside the INSERT, and the live push is made from the stored row.
 *
 * The log is append-only and independent of the transcript: a transcript rollback drops entries
 * but never an event, so a seq is never reused and a microapp's `since_seq` stays valid. Only the
 * retention (`prune`) deletes events, the old ones, and never a stream's newest.
 *
 * Transcript appends become events inside the transcript's own write (./transcripts.ts), so no
 * writer can append a line without its event. Other kinds are appended by their owners through
 * `append`. Listeners (the daemon's live push) hear each event after its transaction committed.
 */
import type { admin } from "@nexo/wire/schemas";
import type { Connection } from "./db.js";
import { StoreError } from "./errors.js";
import { redactJson } from "./redact.js";
import { requireId, resolveLimit, toPlainJson } from "./validate.js";

/** An event as stored and pushed: the wire's flattened form, with its stream and seq. */
export type StoredAgentEvent = admin.AgentEvent & {
  kind: string;
  agent_id: string;
  session_id: string;
  seq: number;
  tenant_id: string | null;
};

export interface NewAgentEvent {
  /** `transcript_appended`, `processing_state_changed`, `pending_inbounds_dropped`, `escalation_*`… */
  kind: string;
  agentId: string;
  /**
   * The stream the seq counts in: the session the event belongs to. An event about a scope with no
   * session yet (a paused conversation) uses `scopeStreamId(scope)`.
   */
  sessionId: string;
  tenantId?: string | null;
  /** When it happened, ms since the epoch; default now. */
  atMs?: number;
  /** The kind's own fields (scope, prev_state, …). Redacted before it is written. */
  fields: Record<string, unknown>;
}

export interface AgentEventListFilter {
  agentId: string;
  kind?: string;
  /** Events at or after this time (ms since the epoch). */
  sinceMs?: number;
  tenantId?: string;
  limit?: number;
  /** Only events strictly older than this position in the list's order (the previous page's end). */
  before?: AgentEventPosition;
}

/**
 * Where an event sits in an agent's list: its time, then its row id, which breaks ties between
 * events of the same millisecond and only grows, so a position names exactly one place in the
 * order and paging from it never repeats or skips an event.
 */
export interface AgentEventPosition {
  atMs: number;
  id: number;
}

/** One page of an agent's list: its events, newest first, and where the next (older) page starts. */
export interface AgentEventPage {
  events: StoredAgentEvent[];
  /** The position of this page's oldest event, when older events may follow. */
  next?: AgentEventPosition;
}

export interface AgentEventReadOptions {
  /** Only events after this seq (exclusive). */
  sinceSeq?: number;
  limit?: number;
}

export type AgentEventListener = (event: StoredAgentEvent) => void;

export const DEFAULT_AGENT_EVENTS_READ_LIMIT = 200;
export const MAX_AGENT_EVENTS_LIMIT = 1000;

/**
 * The stream id of a scope that has no session: stable, readable, and never a session id (those
 * are uuids). The processing scope's ids are joined in a fixed order.
 */
export function scopeStreamId(scope: Record<string, unknown>): string {
  const parts = ["agent_id", "channel", "account_id", "contact_id"].map((key) => String(scope[key] ?? ""));
  return `${String(scope.kind ?? "scope")}:${parts.join("/")}`;
}

interface Row {
  id: number;
  session_id: string;
  seq: number;
  kind: string;
  agent_id: string;
  tenant_id: string | null;
  at_ms: number;
  fields: string;
}

const COLUMNS = "id, session_id, seq, kind, agent_id, tenant_id, at_ms, fields";

const INSERT = `
INSERT INTO agent_events (session_id, seq, kind, agent_id, tenant_id, at_ms, fields)
SELECT @session_id, COALESCE((SELECT MAX(seq) FROM agent_events WHERE session_id = @session_id), 0) + 1,
       @kind, @agent_id, @tenant_id, @at_ms, @fields
RETURNING ${COLUMNS}`;

/**
 * The list query for the filters that are set (exported so the store's test plans the very text
 * the store runs). The `before` position is a row value: SQLite walks the agent index
 * (agent_id, at_ms — which carries the row id) from the position backwards, the row id settling
 * events of the same millisecond, so neither a page nor the ORDER BY needs a sort.
 */
export function agentEventsListSql(
  filter: Pick<AgentEventListFilter, "kind" | "tenantId" | "before">,
): string {
  const clauses = ["agent_id = @agent_id", "at_ms >= @since_ms"];
  if (filter.kind !== undefined) clauses.push("kind = @kind");
  if (filter.tenantId !== undefined) clauses.push("tenant_id = @tenant_id");
  if (filter.before !== undefined) clauses.push("(at_ms, id) < (@before_at_ms, @before_id)");
  return `SELECT ${COLUMNS} FROM agent_events WHERE ${clauses.join(" AND ")} ORDER BY at_ms DESC, id DESC LIMIT @limit`;
}

function toEvent(row: Row): StoredAgentEvent {
  const fields = JSON.parse(row.fields) as Record<string, unknown>;
  return {
    ...fields,
    kind: row.kind,
    agent_id: row.agent_id,
    session_id: row.session_id,
    seq: row.seq,
    tenant_id: row.tenant_id,
  } as StoredAgentEvent;
}

export class AgentEventRepository {
  readonly #db: Connection;
  readonly #listeners = new Set<AgentEventListener>();
  /** Events published inside a transaction, held until the outermost one commits. */
  #uncommitted: StoredAgentEvent[] = [];
  #insert: ReturnType<Connection["prepare"]> | undefined;

  constructor(db: Connection) {
    this.#db = db;
  }

  /** Appends one event (its seq is the stream's next) and tells the listeners. */
  append(event: NewAgentEvent): StoredAgentEvent {
    const stored = this.#db.transaction(() => this.insert(event)).immediate();
    this.publish([stored]);
    return stored;
  }

  /**
   * Appends an event about a conversation scope (processing_state_changed, pending_inbounds_dropped,
   * escalation_requested / escalation_resolved): its stream is the scope's (`scopeStreamId`), so
   * one scope's pauses, drops and escalations are read back in order with one `read`, whichever
   * sessions the conversation had. `fields` are the kind's own (`prev_state`, `dropped`, …); the
   * scope is added.
   */
  appendScopeEvent(
    kind: string,
    scope: { kind: string; agent_id: string } & Record<string, unknown>,
    fields: Record<string, unknown>,
    options: { tenantId?: string | null; atMs?: number } = {},
  ): StoredAgentEvent {
    return this.append({
      kind,
      agentId: requireId("scope.agent_id", scope.agent_id),
      sessionId: scopeStreamId(scope),
      ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
      ...(options.atMs === undefined ? {} : { atMs: options.atMs }),
      fields: { ...fields, scope },
    });
  }

  /**
   * Writes the event inside the caller's transaction, without telling anyone: the caller publishes
   * once its transaction committed (the transcript does, so a rolled-back line has no event).
   * `redacted`: the fields were redacted by the caller already (a transcript line's body).
   */
  insert(event: NewAgentEvent, options: { redacted?: boolean } = {}): StoredAgentEvent {
    this.#insert ??= this.#db.prepare(INSERT);
    const row = this.#insert.get(this.#row(event, options.redacted === true)) as Row;
    return toEvent(row);
  }

  /**
   * Hands committed events to the listeners; a listener that throws does not stop the others.
   * Called inside a transaction (a transcript append nested in `Store.transaction`), the events
   * wait for it: the store publishes them once the outermost transaction committed
   * (`publishCommitted`) and drops them if it rolled back (`dropUncommitted`), so a listener never
   * hears of a row another reader cannot see yet, or never will.
   */
  publish(events: readonly StoredAgentEvent[]): void {
    if (this.#db.inTransaction) {
      this.#uncommitted.push(...events);
      return;
    }
    this.#deliver([...this.#uncommitted.splice(0), ...events]);
  }

  /** The outermost transaction committed: its events go out. */
  publishCommitted(): void {
    if (!this.#db.inTransaction) this.#deliver(this.#uncommitted.splice(0));
  }

  /** The outermost transaction rolled back: its events never happened. */
  dropUncommitted(): void {
    this.#uncommitted.length = 0;
  }

  /**
   * Deletes the events older than `beforeMs` (ms since the epoch), oldest first, at most `batch`
   * per call so a large backlog never holds the write lock for long; returns how many went. The
   * newest event of each stream is kept whatever its age, so a seq is never reused: the stream's
   * next event still counts on from it.
   */
  prune(beforeMs: number, batch = 10_000): number {
    if (!Number.isInteger(beforeMs))
      throw new StoreError("invalid_argument", `beforeMs must be an integer, got ${String(beforeMs)}`);
    return this.#db
      .prepare(
        `DELETE FROM agent_events WHERE id IN (
           SELECT old.id FROM agent_events AS old
           WHERE old.at_ms < ? AND EXISTS (
             SELECT 1 FROM agent_events AS newer WHERE newer.session_id = old.session_id AND newer.seq > old.seq)
           ORDER BY old.id LIMIT ?)`,
      )
      .run(beforeMs, batch).changes;
  }

  #deliver(events: readonly StoredAgentEvent[]): void {
    for (const event of events)
      for (const listener of this.#listeners) {
        try {
          listener(event);
        } catch {
          // A broken listener must never fail the write that already committed.
        }
      }
  }

  /** Hears every event appended from now on; returns the unsubscribe. */
  subscribe(listener: AgentEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** One stream's events after `sinceSeq`, oldest first; an unknown stream has none. */
  read(sessionId: string, options: AgentEventReadOptions = {}): StoredAgentEvent[] {
    requireId("sessionId", sessionId);
    const sinceSeq = options.sinceSeq ?? 0;
    if (!Number.isInteger(sinceSeq) || sinceSeq < 0)
      throw new StoreError(
        "invalid_argument",
        `sinceSeq must be a non-negative integer, got ${String(sinceSeq)}`,
      );
    const limit = resolveLimit(options.limit, DEFAULT_AGENT_EVENTS_READ_LIMIT, MAX_AGENT_EVENTS_LIMIT);
    const rows = this.#db
      .prepare(`SELECT ${COLUMNS} FROM agent_events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`)
      .all(sessionId, sinceSeq, limit) as Row[];
    return rows.map(toEvent);
  }

  /**
   * One page of an agent's events, newest first, from `filter.before` back: `next` is where the
   * following page starts, present when there are older events (one row more than the page is
   * read to know, never a count).
   */
  page(filter: AgentEventListFilter): AgentEventPage {
    const limit = resolveLimit(filter.limit, MAX_AGENT_EVENTS_LIMIT, MAX_AGENT_EVENTS_LIMIT);
    const rows = this.#select(filter, limit + 1);
    const events = rows.slice(0, limit);
    const last = events.at(-1);
    return {
      events: events.map(toEvent),
      ...(rows.length > limit && last !== undefined ? { next: { atMs: last.at_ms, id: last.id } } : {}),
    };
  }

  #select(filter: AgentEventListFilter, limit: number): Row[] {
    requireId("agentId", filter.agentId);
    const before = filter.before;
    if (before !== undefined)
      for (const [name, value] of [
        ["before.atMs", before.atMs],
        ["before.id", before.id],
      ] as const)
        if (!Number.isSafeInteger(value) || value < 0)
          throw new StoreError(
            "invalid_argument",
            `${name} must be a non-negative integer, got ${String(value)}`,
          );
    return this.#db.prepare(agentEventsListSql(filter)).all({
      agent_id: filter.agentId,
      since_ms: filter.sinceMs ?? 0,
      kind: filter.kind ?? null,
      tenant_id: filter.tenantId ?? null,
      before_at_ms: before?.atMs ?? null,
      before_id: before?.id ?? null,
      limit,
    }) as Row[];
  }

  /** The stream's last seq (0 when it has none). */
  lastSeq(sessionId: string): number {
    const row = this.#db
      .prepare("SELECT COALESCE(MAX(seq), 0) AS n FROM agent_events WHERE session_id = ?")
      .get(requireId("sessionId", sessionId)) as { n: number };
    return row.n;
  }

  #row(event: NewAgentEvent, redacted: boolean): Omit<Row, "id" | "seq"> {
    if (event === null || typeof event !== "object")
      throw new StoreError("invalid_argument", "agent event must be an object");
    const kind = requireId("kind", event.kind);
    const atMs = event.atMs ?? Date.now();
    if (!Number.isInteger(atMs) || atMs < 0)
      throw new StoreError("invalid_argument", `atMs must be a non-negative integer, got ${String(atMs)}`);
    const fields = toPlainJson("fields", event.fields ?? {});
    if (fields === null || typeof fields !== "object" || Array.isArray(fields))
      throw new StoreError("invalid_argument", "fields must be an object");
    // The row's own columns win over same-named fields, so a caller cannot forge a seq or a stream.
    const { kind: _k, agent_id: _a, session_id: _s, seq: _q, tenant_id: _t, ...rest } = fields;
    // The scope is ids (who the conversation is with), kept as the sessions table keeps them so
    // events pair up by scope; every other field may carry text and is redacted.
    const { scope, ...text } = rest;
    const safe = redacted ? text : redactJson(text).value;
    return {
      session_id: requireId("sessionId", event.sessionId),
      kind,
      agent_id: requireId("agentId", event.agentId),
      tenant_id: event.tenantId ?? null,
      at_ms: atMs,
      fields: JSON.stringify(scope === undefined ? safe : { scope, ...safe }),
    };
  }
}
