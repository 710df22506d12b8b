/**
 * Transcripts: the append-only record of every session, searchable with FTS5.
 *
 * Each entry gets the next `seq` of its session inside the INSERT that writes it (MAX(seq) + 1 read
 * by the same statement, under the write lock of an IMMEDIATE transaction), and UNIQUE(session_id,
 * seq) makes a duplicate impossible even if that reasoning were ever wrong: concurrent appends from
 * several connections or processes wait for each other (busy_timeout) instead of racing.
 *
 * Content is redacted before it is written; the plain text indexed for search is derived from the
 * redacted content, so a secret can reach neither the table nor the index.
 *
 * Every appended entry is also a `transcript_appended` agent event (./agent-events.ts), written in
 * the same transaction and published once it committed: whichever door or helper appends, the
 * firehose hears it, and a line that was rolled back was never announced.
 */

import type { Statement, Transaction } from "better-sqlite3";
import type { AgentEventRepository, StoredAgentEvent } from "./agent-events.js";
import {
  type ChatMessage,
  type ContentBlock,
  normalizeContent,
  redactContent,
  searchableText,
} from "./content.js";
import type { Connection } from "./db.js";
import { StoreError } from "./errors.js";
import { allOf, parseQuery, scopeToken } from "./fts-query.js";
import { optionalString, requireId, resolveLimit, timestamp } from "./validate.js";

export type TranscriptRole = "user" | "assistant" | "system";

/**
 * The source of a system entry an operator wrote for the agent (the summary given when a paused
 * conversation resumes): unlike the daemon's own notes, the model reads it.
 */
export const OPERATOR_NOTE_SOURCE = "intervention:summary";
const ROLES: readonly TranscriptRole[] = ["user", "assistant", "system"];

export interface TranscriptEntry {
  /** Unique across the database; also the row's position in the search index. */
  id: number;
  sessionId: string;
  /** 1, 2, 3, … within the session, in append order, without gaps. */
  seq: number;
  role: TranscriptRole;
  content: ContentBlock[];
  /** The searchable text derived from `content`. */
  text: string;
  /** Copied from the session when the entry is written. */
  agentId: string;
  tenantId: string | null;
  /** The channel plugin the message came through, e.g. "telegram". */
  sourcePlugin: string | null;
  /** Who sent it on that channel. */
  senderId: string | null;
  /** The channel's own message id, e.g. for replies and de-duplication. */
  messageId: string | null;
  /** The turn that wrote it (null for entries written before turns were recorded). */
  turnId: string | null;
  createdAt: string;
}

export interface NewTranscriptEntry {
  role: TranscriptRole;
  /** Content blocks, or a string for a single text block. */
  content: string | readonly ContentBlock[];
  sourcePlugin?: string | null;
  senderId?: string | null;
  messageId?: string | null;
  turnId?: string | null;
  createdAt?: Date | string;
}

export interface HistoryOptions {
  /** Only entries after this seq (for paging or catching up). */
  afterSeq?: number;
  /** At most this many entries, counted from the start (or from `afterSeq`). */
  limit?: number;
  /** Only the last `last` entries (rehydrating a long session); combined with afterSeq, the last of those. */
  last?: number;
}

export interface TranscriptSearchOptions {
  sessionId?: string;
  agentId?: string;
  tenantId?: string;
  /**
   * The conversation's channel (its session's): `telegram` matches `telegram` and every
   * `telegram.<instance>`; `telegram.bot1` only that instance.
   */
  channel?: string;
  role?: TranscriptRole;
  /** Only lines written at or after this time (ms since the epoch). */
  sinceMs?: number;
  /** Only lines written before this time (ms since the epoch). */
  untilMs?: number;
  /** Skips this many hits of the ranking (the next page). */
  offset?: number;
  /** Default 20, capped at 1000. */
  limit?: number;
  /** Markers around matched words in `snippet`; «» by default. */
  highlight?: { open: string; close: string };
}

export interface TranscriptHit {
  entry: TranscriptEntry;
  /** A short excerpt around the match, with matched words highlighted. */
  snippet: string;
  /** bm25 score: lower is a better match (FTS5's convention). */
  score: number;
  /** The channel of the entry's session (null when it has none: a thread, the CLI). */
  channel: string | null;
}

export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 1000;
/** Tokens of context in a snippet. */
const SNIPPET_TOKENS = 16;
/** The most matches bm25 ranks for one query (the newest ones); see `search`. */
export const RANK_WINDOW = 10_000;

const ENTRY_COLUMNS =
  "id, session_id, seq, role, agent_id, tenant_id, source_plugin, sender_id, message_id, turn_id, created_at, content, text";

interface EntryRow {
  id: number;
  session_id: string;
  seq: number;
  role: TranscriptRole;
  content: string;
  text: string;
  agent_id: string;
  tenant_id: string | null;
  source_plugin: string | null;
  sender_id: string | null;
  message_id: string | null;
  turn_id: string | null;
  created_at: string;
}

const toEntry = (row: EntryRow): TranscriptEntry => ({
  id: row.id,
  sessionId: row.session_id,
  seq: row.seq,
  role: row.role,
  content: JSON.parse(row.content) as ContentBlock[],
  text: row.text,
  agentId: row.agent_id,
  tenantId: row.tenant_id,
  sourcePlugin: row.source_plugin,
  senderId: row.sender_id,
  messageId: row.message_id,
  turnId: row.turn_id,
  createdAt: row.created_at,
});

const INSERT = `
INSERT INTO transcript_entries (session_id, seq, role, content, text, agent_id, tenant_id,
                                source_plugin, sender_id, message_id, turn_id, created_at)
SELECT s.id,
       COALESCE((SELECT MAX(seq) FROM transcript_entries WHERE session_id = s.id), 0) + 1,
       @role, @content, @text, s.agent_id, s.tenant_id, @source_plugin, @sender_id, @message_id, @turn_id,
       @created_at
FROM sessions s WHERE s.id = @session_id
RETURNING id, seq, agent_id, tenant_id`;

/** An entry checked and redacted, ready for the INSERT, with the blocks its content encodes. */
interface PreparedEntry {
  row: Omit<EntryRow, "id" | "seq" | "agent_id" | "tenant_id">;
  blocks: ContentBlock[];
}

const TOUCH_SESSION = "UPDATE sessions SET updated_at = MAX(updated_at, @at) WHERE id = @session_id";

export class TranscriptRepository {
  readonly #db: Connection;
  readonly #now: () => Date;
  readonly #events: AgentEventRepository | undefined;

  /** Prepared once: re-preparing per append was a tenth of the daemon's CPU under load. */
  #append:
    | Transaction<
        (sessionId: string, rows: readonly PreparedEntry[], events: StoredAgentEvent[]) => TranscriptEntry[]
      >
    | undefined;
  /** `entries` runs at every session load: its two reads are prepared once. */
  #lastEntries: Statement<unknown[]> | undefined;
  #entriesFrom: Statement<unknown[]> | undefined;

  constructor(db: Connection, now: () => Date, events?: AgentEventRepository) {
    this.#db = db;
    this.#now = now;
    this.#events = events;
  }

  /** Appends one entry and returns it as stored (redacted, with its seq). */
  append(sessionId: string, entry: NewTranscriptEntry): TranscriptEntry {
    return this.appendMany(sessionId, [entry])[0]!;
  }

  /** Appends several entries in one transaction: all of them get consecutive seqs, or none is written. */
  appendMany(sessionId: string, entries: readonly NewTranscriptEntry[]): TranscriptEntry[] {
    requireId("sessionId", sessionId);
    // Validation and redaction (the slow part) happen before the write lock is taken.
    const rows = entries.map((entry, index) => this.#prepare(sessionId, entry, index));
    if (rows.length === 0) return [];
    const events: StoredAgentEvent[] = [];
    const stored = this.#appendTransaction().immediate(sessionId, rows, events);
    this.#events?.publish(events);
    return stored;
  }

  /**
   * The write of `appendMany`, built once: its statements and the transaction wrapper are reused by
   * every append (each one is a turn's group of messages in a busy daemon).
   */
  #appendTransaction(): Transaction<
    (sessionId: string, rows: readonly PreparedEntry[], events: StoredAgentEvent[]) => TranscriptEntry[]
  > {
    if (this.#append !== undefined) return this.#append;
    const insert = this.#db.prepare(INSERT);
    const touch = this.#db.prepare(TOUCH_SESSION);
    const eventLog = this.#events;
    this.#append = this.#db.transaction(
      (sessionId: string, rows: readonly PreparedEntry[], events: StoredAgentEvent[]) => {
        events.length = 0;
        let newest = "";
        const stored = rows.map(({ row, blocks }) => {
          const result = insert.get(row) as
            | Pick<EntryRow, "id" | "seq" | "agent_id" | "tenant_id">
            | undefined;
          if (result === undefined) throw new StoreError("not_found", `session ${sessionId} does not exist`);
          if (row.created_at > newest) newest = row.created_at;
          // The blocks just written, not a parse of their JSON.
          const entry: TranscriptEntry = {
            id: result.id,
            sessionId,
            seq: result.seq,
            role: row.role,
            content: blocks,
            text: row.text,
            agentId: result.agent_id,
            tenantId: result.tenant_id,
            sourcePlugin: row.source_plugin,
            senderId: row.sender_id,
            messageId: row.message_id,
            turnId: row.turn_id,
            createdAt: row.created_at,
          };
          if (eventLog !== undefined) events.push(eventLog.insert(appendedEvent(entry), { redacted: true }));
          return entry;
        });
        touch.run({ session_id: sessionId, at: newest });
        return stored;
      },
    );
    return this.#append;
  }

  /** The session's entries in seq order. */
  entries(sessionId: string, options: HistoryOptions = {}): TranscriptEntry[] {
    requireId("sessionId", sessionId);
    const afterSeq = options.afterSeq ?? 0;
    if (!Number.isInteger(afterSeq) || afterSeq < 0) {
      throw new StoreError(
        "invalid_argument",
        `afterSeq must be a non-negative integer, got ${String(afterSeq)}`,
      );
    }
    let rows: EntryRow[];
    if (options.last !== undefined) {
      const last = resolveLimit(options.last, 0, Number.MAX_SAFE_INTEGER);
      this.#lastEntries ??= this.#db.prepare(
        `SELECT ${ENTRY_COLUMNS} FROM transcript_entries WHERE session_id = ? AND seq > ? ORDER BY seq DESC LIMIT ?`,
      );
      rows = (this.#lastEntries.all(sessionId, afterSeq, last) as EntryRow[]).reverse();
    } else {
      const limit =
        options.limit === undefined ? -1 : resolveLimit(options.limit, 0, Number.MAX_SAFE_INTEGER);
      this.#entriesFrom ??= this.#db.prepare(
        `SELECT ${ENTRY_COLUMNS} FROM transcript_entries WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
      );
      rows = this.#entriesFrom.all(sessionId, afterSeq, limit) as EntryRow[];
    }
    return rows.map(toEntry);
  }

  /**
   * The conversation as the engine sends it to a model: user and assistant entries in order, one
   * message per entry, tool_use and tool_result blocks included. System entries (notes the daemon
   * kept for itself) are left out, except an operator's notes for the agent (OPERATOR_NOTE_SOURCE),
   * which the model reads as a user message: chat APIs take no system message mid-conversation.
   */
  messages(sessionId: string, options: Pick<HistoryOptions, "last"> = {}): ChatMessage[] {
    return this.entries(sessionId, options)
      .filter((entry) => entry.role !== "system" || entry.sourcePlugin === OPERATOR_NOTE_SOURCE)
      .map((entry) => ({ role: entry.role === "system" ? "user" : entry.role, content: entry.content }));
  }

  /**
   * Drops the session's entries after `keepThroughSeq` (a rollback of its last turns) and returns
   * how many went; their search index entries go with them. Entries are otherwise never changed.
   */
  truncate(sessionId: string, keepThroughSeq: number): number {
    requireId("sessionId", sessionId);
    if (!Number.isInteger(keepThroughSeq) || keepThroughSeq < 0) {
      throw new StoreError(
        "invalid_argument",
        `keepThroughSeq must be a non-negative integer, got ${String(keepThroughSeq)}`,
      );
    }
    return this.#db
      .prepare("DELETE FROM transcript_entries WHERE session_id = ? AND seq > ?")
      .run(sessionId, keepThroughSeq).changes;
  }

  /**
   * Where the user message the channel sent as `messageId` stands in the session's transcript:
   * "absent"; "answered" when an answer of the model's follows it (an assistant message that asks
   * for no tool: the turn's last reply); "unanswered" otherwise — nothing follows it (a turn killed
   * before the model answered), or the turn was cut while it used tools (killed or cancelled
   * between a tool call and the final answer; the next load gives any call left without a result
   * an "interrupted" one, engine/history-repair.ts). A replay after a SIGKILL asks this so it
   * neither stores the message twice nor answers it twice, and finishes a turn cut short.
   */
  messageState(sessionId: string, messageId: string): "absent" | "unanswered" | "answered" {
    const id = requireId("sessionId", sessionId);
    const row = this.#db
      .prepare(
        `SELECT seq FROM transcript_entries WHERE session_id = ? AND role = 'user' AND message_id = ?
         ORDER BY seq DESC LIMIT 1`,
      )
      .get(id, messageId) as { seq: number } | undefined;
    if (row === undefined) return "absent";
    const replies = this.#db
      .prepare(
        "SELECT content FROM transcript_entries WHERE session_id = ? AND seq > ? AND role = 'assistant' ORDER BY seq",
      )
      .all(id, row.seq) as Array<{ content: string }>;
    const final = replies.some(
      ({ content }) => !(JSON.parse(content) as ContentBlock[]).some((block) => block.type === "tool_use"),
    );
    return final ? "answered" : "unanswered";
  }

  /** How many entries the session has (its last seq). */
  count(sessionId: string): number {
    const row = this.#db
      .prepare("SELECT COALESCE(MAX(seq), 0) AS n FROM transcript_entries WHERE session_id = ?")
      .get(requireId("sessionId", sessionId)) as { n: number };
    return row.n;
  }

  /**
   * Full-text search, best match first. Every word of the query must appear (see fts-query.ts for
   * phrases and prefixes); a query with nothing searchable in it finds nothing. When more than
   * RANK_WINDOW entries match, the newest RANK_WINDOW of them are ranked: bm25 costs time for every
   * match it scores, and for a word that common, recent matches are the ones worth showing.
   */
  search(query: string, options: TranscriptSearchOptions = {}): TranscriptHit[] {
    if (typeof query !== "string") throw new StoreError("invalid_argument", "query must be a string");
    const limit = resolveLimit(options.limit, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);
    const terms = parseQuery(query);
    if (terms.length === 0) return [];

    const clauses = [`text : (${allOf(terms)})`];
    if (options.sessionId !== undefined)
      clauses.push(`scope : "${scopeToken("s", requireId("sessionId", options.sessionId))}"`);
    if (options.agentId !== undefined)
      clauses.push(`scope : "${scopeToken("a", requireId("agentId", options.agentId))}"`);
    if (options.tenantId !== undefined)
      clauses.push(`scope : "${scopeToken("t", requireId("tenantId", options.tenantId))}"`);
    const match = clauses.join(" AND ");
    const { joins, where, params } = entryFilters(options);
    const offset = options.offset ?? 0;
    if (!Number.isInteger(offset) || offset < 0)
      throw new StoreError(
        "invalid_argument",
        `offset must be a non-negative integer, got ${String(offset)}`,
      );

    // The newest RANK_WINDOW matches (FTS5 walks the doclist newest first and stops there), ranked;
    // one evaluation of the expression. Only rowids and scores go through the sort; rows are read
    // for the few that are returned.
    const ranked = this.#db
      .prepare(
        `SELECT id, score FROM (
           SELECT transcript_fts.rowid AS id, bm25(transcript_fts, 1.0, 0.0) AS score FROM transcript_fts${joins}
           WHERE transcript_fts MATCH @match${where} ORDER BY transcript_fts.rowid DESC LIMIT @window)
         ORDER BY score, id DESC LIMIT @limit OFFSET @offset`,
      )
      .all({ ...params, match, window: RANK_WINDOW, limit, offset }) as Array<{ id: number; score: number }>;
    if (ranked.length === 0) return [];

    const row = this.#db.prepare(`SELECT ${ENTRY_COLUMNS} FROM transcript_entries WHERE id = ?`);
    const channelOf = this.#db.prepare("SELECT channel FROM sessions WHERE id = ?").pluck();
    const snippets = this.#snippets(
      match,
      ranked.map((r) => r.id),
      terms.some((term) => term.prefix),
      options.highlight ?? { open: "«", close: "»" },
    );
    return ranked.map(({ id, score }) => {
      const entry = toEntry(row.get(id) as EntryRow);
      const channel = (channelOf.get(entry.sessionId) as string | null | undefined) ?? null;
      return { entry, snippet: snippets.get(id) ?? entry.text, score, channel };
    });
  }

  /**
   * Snippets for the returned rows. FTS5 re-evaluates the whole expression for each statement, and
   * for a prefix term that means merging the doclists of every word with that prefix (milliseconds
   * each); so with a prefix the rows are visited in one pass over their rowid range, building a
   * snippet only for the wanted ones, and without one each row is looked up directly.
   *
   * Every rowid is bound as an INTEGER (`sqlInteger`): FTS5 ignores a rowid bound that is a REAL,
   * which is how better-sqlite3 binds a JS number. A range bound as a REAL still answers right
   * (SQLite checks it again) but walks every match of the query, for each row — that was 20 scans
   * of a common word's doclist per search; an equality bound as a REAL answers every match.
   */
  #snippets(
    match: string,
    ids: readonly number[],
    prefix: boolean,
    highlight: { open: string; close: string },
  ): Map<number, string> {
    const snippet = `snippet(transcript_fts, 0, @open, @close, '…', ${SNIPPET_TOKENS})`;
    const params = { match, ...highlight };
    if (prefix) {
      const rows = this.#db
        .prepare(
          `SELECT rowid AS id, CASE WHEN rowid IN (SELECT value FROM json_each(@ids)) THEN ${snippet} END AS snippet
           FROM transcript_fts WHERE transcript_fts MATCH @match AND rowid >= @lo AND rowid <= @hi`,
        )
        .all({
          ...params,
          ids: JSON.stringify(ids),
          lo: sqlInteger(Math.min(...ids)),
          hi: sqlInteger(Math.max(...ids)),
        }) as Array<{ id: number; snippet: string | null }>;
      return new Map(rows.filter((r) => r.snippet !== null).map((r) => [r.id, r.snippet as string]));
    }
    const one = this.#db
      .prepare(`SELECT ${snippet} FROM transcript_fts WHERE transcript_fts MATCH @match AND rowid = @id`)
      .pluck();
    return new Map(ids.map((id) => [id, one.get({ ...params, id: sqlInteger(id) }) as string]));
  }

  #prepare(sessionId: string, entry: NewTranscriptEntry, index: number): PreparedEntry {
    const where = `entries[${index}]`;
    if (entry === null || typeof entry !== "object") {
      throw new StoreError("invalid_argument", `${where} must be an object`);
    }
    if (!ROLES.includes(entry.role)) {
      throw new StoreError(
        "invalid_argument",
        `${where}.role must be one of ${ROLES.join(", ")}, got ${String(entry.role)}`,
      );
    }
    const { blocks } = redactContent(normalizeContent(entry.content));
    const row = {
      session_id: sessionId,
      role: entry.role,
      content: JSON.stringify(blocks),
      text: searchableText(blocks),
      source_plugin: optionalString(`${where}.sourcePlugin`, entry.sourcePlugin),
      sender_id: optionalString(`${where}.senderId`, entry.senderId),
      message_id: optionalString(`${where}.messageId`, entry.messageId),
      turn_id: optionalString(`${where}.turnId`, entry.turnId),
      created_at: timestamp(`${where}.createdAt`, entry.createdAt, this.#now),
    };
    return { row, blocks };
  }
}

/**
 * A rowid as an SQL INTEGER. better-sqlite3 binds a JS number as a REAL, and FTS5 takes a rowid
 * constraint next to MATCH only when its value is an INTEGER (see `#snippets`).
 */
function sqlInteger(id: number): bigint {
  return BigInt(id);
}

/** The `transcript_appended` event of a stored (so already redacted) entry. */
function appendedEvent(entry: TranscriptEntry) {
  const sentAtMs = Date.parse(entry.createdAt);
  return {
    kind: "transcript_appended",
    agentId: entry.agentId,
    sessionId: entry.sessionId,
    tenantId: entry.tenantId,
    atMs: sentAtMs,
    fields: {
      role: entry.role,
      body: entry.text,
      sent_at_ms: sentAtMs,
      ...(entry.senderId === null ? {} : { sender_id: entry.senderId }),
      // The daemon's own lines (no channel) are "internal", as the firehose has always called them.
      source_plugin: entry.sourcePlugin ?? "internal",
    },
  };
}

/**
 * The search's filters on the entry (role, time) and on its session (channel), as joins and
 * conditions added to the FTS query: applied before ranking, so a page is the best matches that
 * pass them, not the best matches thinned out afterwards.
 */
function entryFilters(options: TranscriptSearchOptions): {
  joins: string;
  where: string;
  params: Record<string, string>;
} {
  const conditions: string[] = [];
  const params: Record<string, string> = {};
  if (options.role !== undefined) {
    conditions.push("e.role = @role");
    params.role = options.role;
  }
  if (options.sinceMs !== undefined) {
    conditions.push("e.created_at >= @since");
    params.since = timestamp("sinceMs", new Date(options.sinceMs), () => new Date());
  }
  if (options.untilMs !== undefined) {
    conditions.push("e.created_at < @until");
    params.until = timestamp("untilMs", new Date(options.untilMs), () => new Date());
  }
  if (options.channel !== undefined) {
    // An exact channel, or one of its instances: `kind.instance` (no LIKE: names may hold _ and %).
    conditions.push("(s.channel = @channel OR substr(s.channel, 1, length(@channel) + 1) = @channel || '.')");
    params.channel = requireId("channel", options.channel);
  }
  if (conditions.length === 0) return { joins: "", where: "", params };
  const joins =
    " JOIN transcript_entries e ON e.id = transcript_fts.rowid" +
    (options.channel === undefined ? "" : " JOIN sessions s ON s.id = e.session_id");
  return { joins, where: ` AND ${conditions.join(" AND ")}`, params };
}
