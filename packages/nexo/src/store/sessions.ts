/**
 * Sessions: one conversation of one agent, with where it happens (channel, account, contact), a
 * title, free metadata, and the state a resumed conversation should find again: its approval mode
 * and grants, and the files outside the workspace the user attached (which Read may open).
 *
 * Channel, account and contact are routing keys (a chat id, a bot account, a phone-number JID) and
 * are stored as given so that `findByKey` can match them exactly; the title and the metadata are
 * free text and are redacted like everything else written.
 */
import { isAbsolute } from "node:path";
import type { Statement } from "better-sqlite3";
import { v7 as uuidv7 } from "uuid";
import { z } from "zod";
import { isoTime } from "../iso-time.js";
import {
  APPROVAL_MODES,
  type ApprovalGrant,
  ApprovalGrantSchema,
  type ApprovalMode,
  ApprovalModeSchema,
  sameGrant,
} from "../permissions.js";
import type { Connection } from "./db.js";
import { StoreError } from "./errors.js";
import { redact, redactJson } from "./redact.js";
import { firstIssue, optionalString, requireId, resolveLimit, timestamp, toPlainJson } from "./validate.js";

const GrantsSchema = z.array(ApprovalGrantSchema);
/** Absolute paths without NUL bytes, the only ones a real path can be. */
const ReadableFilesSchema = z.array(
  z
    .string()
    .refine((path) => isAbsolute(path) && !path.includes("\0"), { error: "must be an absolute path" }),
);

export interface Session {
  id: string;
  agentId: string;
  tenantId: string | null;
  /** The door or channel plugin, e.g. "telegram", "json-stream". */
  channel: string | null;
  /** The account or instance on that channel, e.g. a bot id. */
  account: string | null;
  /** The other party, e.g. a chat id or a sender id. */
  contact: string | null;
  title: string | null;
  approvalMode: ApprovalMode;
  /** What approvals with scope "always" granted in this session. */
  alwaysAllow: ApprovalGrant[];
  /**
   * Real paths of files outside the workspace the user attached in this session, which Read may
   * open. Stored as given (exact paths are what is matched), like the routing keys.
   */
  readableFiles: string[];
  metadata: Record<string, unknown>;
  createdAt: string;
  /** Bumped by every change and every transcript append, so "latest" means "last active". */
  updatedAt: string;
}

export interface NewSession {
  /** A caller-chosen id (`--session-id`); a UUIDv7 when absent. Taken ids are refused. */
  id?: string;
  agentId: string;
  tenantId?: string | null;
  channel?: string | null;
  account?: string | null;
  contact?: string | null;
  title?: string | null;
  approvalMode?: ApprovalMode;
  metadata?: Record<string, unknown>;
  createdAt?: Date | string;
  /** The session whose sub-agent this session is (`children` finds it); it must exist. */
  parentId?: string | null;
}

export interface SessionKey {
  agentId: string;
  channel?: string | null;
  account?: string | null;
  contact?: string | null;
}

export interface SessionFilter {
  agentId?: string;
  tenantId?: string;
}

export interface SessionListOptions extends SessionFilter {
  limit?: number;
  offset?: number;
}

export interface SessionChanges {
  title?: string | null;
  metadata?: Record<string, unknown>;
  approvalMode?: ApprovalMode;
  alwaysAllow?: readonly ApprovalGrant[];
  readableFiles?: readonly string[];
}

export const DEFAULT_SESSION_LIST_LIMIT = 50;
export const MAX_SESSION_LIST_LIMIT = 1000;

interface SessionRow {
  id: string;
  agent_id: string;
  tenant_id: string | null;
  channel: string | null;
  account: string | null;
  contact: string | null;
  title: string | null;
  approval_mode: string;
  always_allow: string;
  readable_files: string;
  metadata: string;
  created_at: string;
  updated_at: string;
  parent_id?: string | null;
}

const toSession = (row: SessionRow): Session => ({
  id: row.id,
  agentId: row.agent_id,
  tenantId: row.tenant_id,
  channel: row.channel,
  account: row.account,
  contact: row.contact,
  title: row.title,
  approvalMode: stored(row.id, "approval_mode", ApprovalModeSchema, row.approval_mode),
  alwaysAllow: stored(row.id, "always_allow", GrantsSchema, parseJson(row.always_allow)),
  readableFiles: stored(row.id, "readable_files", ReadableFilesSchema, parseJson(row.readable_files)),
  metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A column read back, checked against what this nexo writes there; anything else is `corrupt`. */
function stored<T>(id: string, column: string, schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new StoreError("corrupt", `session ${id}: ${column} holds a value this nexo cannot read`);
  }
  return parsed.data;
}

/** Newest activity first; rowid breaks ties between sessions touched in the same millisecond. */
const NEWEST_FIRST = "ORDER BY updated_at DESC, rowid DESC";

export class SessionRepository {
  readonly #db: Connection;
  readonly #now: () => Date;

  // The statements every message of a channel conversation runs (open, resume), prepared once:
  // preparing parses the SQL each time, which costs more than running it.
  #insertStmt: Statement<unknown[]> | undefined;
  #getStmt: Statement<unknown[]> | undefined;
  #findByKeyStmt: Statement<unknown[]> | undefined;
  #childrenStmt: Statement<unknown[]> | undefined;

  constructor(db: Connection, now: () => Date) {
    this.#db = db;
    this.#now = now;
  }

  create(input: NewSession): Session {
    const id = input.id === undefined ? uuidv7() : requireId("id", input.id);
    const createdAt = timestamp("createdAt", input.createdAt, this.#now);
    const row: SessionRow = {
      id,
      agent_id: requireId("agentId", input.agentId),
      tenant_id: optionalString("tenantId", input.tenantId),
      channel: optionalString("channel", input.channel),
      account: optionalString("account", input.account),
      contact: optionalString("contact", input.contact),
      title: redactTitle(input.title),
      approval_mode: checkMode(input.approvalMode ?? "default"),
      always_allow: "[]",
      readable_files: "[]",
      metadata: redactMetadata(input.metadata ?? {}),
      created_at: createdAt,
      updated_at: createdAt,
      parent_id: optionalString("parentId", input.parentId),
    };
    this.#insertStmt ??= this.#db.prepare(
      `INSERT INTO sessions (id, agent_id, tenant_id, channel, account, contact, title, approval_mode,
                             always_allow, readable_files, metadata, created_at, updated_at, parent_id)
       VALUES (@id, @agent_id, @tenant_id, @channel, @account, @contact, @title, @approval_mode,
               @always_allow, @readable_files, @metadata, @created_at, @updated_at, @parent_id)
       ON CONFLICT (id) DO NOTHING`,
    );
    let result: { changes: number };
    try {
      result = this.#insertStmt.run(row);
    } catch (error) {
      if ((error as { code?: string }).code === "SQLITE_CONSTRAINT_FOREIGNKEY")
        throw new StoreError("not_found", `parent session ${String(row.parent_id)} does not exist`);
      throw error;
    }
    if (result.changes === 0) throw new StoreError("conflict", `session ${id} already exists`);
    return toSession(row);
  }

  get(id: string): Session | undefined {
    this.#getStmt ??= this.#db.prepare("SELECT * FROM sessions WHERE id = ?");
    const row = this.#getStmt.get(requireId("id", id)) as SessionRow | undefined;
    return row === undefined ? undefined : toSession(row);
  }

  /** Like `get`, but a missing session is a StoreError("not_found"). */
  require(id: string): Session {
    const session = this.get(id);
    if (session === undefined) throw new StoreError("not_found", `session ${id} does not exist`);
    return session;
  }

  /** The most recently active session of this agent with this channel, account and contact. */
  findByKey(key: SessionKey): Session | undefined {
    this.#findByKeyStmt ??= this.#db.prepare(
      `SELECT * FROM sessions
       WHERE agent_id = ? AND channel IS ? AND account IS ? AND contact IS ?
       ${NEWEST_FIRST} LIMIT 1`,
    );
    const row = this.#findByKeyStmt.get(
      requireId("agentId", key.agentId),
      optionalString("channel", key.channel),
      optionalString("account", key.account),
      optionalString("contact", key.contact),
    ) as SessionRow | undefined;
    return row === undefined ? undefined : toSession(row);
  }

  /** The most recently active session (what `--resume latest` resumes), optionally of one agent or tenant. */
  latest(filter: SessionFilter = {}): Session | undefined {
    return this.list({ ...filter, limit: 1 })[0];
  }

  /** Sessions, most recently active first. */
  list(options: SessionListOptions = {}): Session[] {
    const limit = resolveLimit(options.limit, DEFAULT_SESSION_LIST_LIMIT, MAX_SESSION_LIST_LIMIT);
    const offset = options.offset ?? 0;
    if (!Number.isInteger(offset) || offset < 0) {
      throw new StoreError(
        "invalid_argument",
        `offset must be a non-negative integer, got ${String(offset)}`,
      );
    }
    const where: string[] = [];
    const params: unknown[] = [];
    if (options.agentId !== undefined) {
      where.push("agent_id = ?");
      params.push(requireId("agentId", options.agentId));
    }
    if (options.tenantId !== undefined) {
      where.push("tenant_id = ?");
      params.push(requireId("tenantId", options.tenantId));
    }
    const rows = this.#db
      .prepare(
        `SELECT * FROM sessions ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
         ${NEWEST_FIRST} LIMIT ? OFFSET ?`,
      )
      .all(...params, limit, offset) as SessionRow[];
    return rows.map(toSession);
  }

  /**
   * The sessions created with `parentId` (a session's sub-agents), most recently active first —
   * every one, by index, however many sessions there are.
   */
  children(parentId: string): Session[] {
    this.#childrenStmt ??= this.#db.prepare(`SELECT * FROM sessions WHERE parent_id = ? ${NEWEST_FIRST}`);
    return (this.#childrenStmt.all(requireId("parentId", parentId)) as SessionRow[]).map(toSession);
  }

  update(id: string, changes: SessionChanges): Session {
    const sets: string[] = [];
    const params: Record<string, unknown> = {
      id: requireId("id", id),
      updated_at: isoTime(this.#now()),
    };
    if (changes.title !== undefined) {
      sets.push("title = @title");
      params.title = redactTitle(changes.title);
    }
    if (changes.metadata !== undefined) {
      sets.push("metadata = @metadata");
      params.metadata = redactMetadata(changes.metadata);
    }
    if (changes.approvalMode !== undefined) {
      sets.push("approval_mode = @approval_mode");
      params.approval_mode = checkMode(changes.approvalMode);
    }
    if (changes.alwaysAllow !== undefined) {
      sets.push("always_allow = @always_allow");
      params.always_allow = JSON.stringify(checkGrants(changes.alwaysAllow));
    }
    if (changes.readableFiles !== undefined) {
      sets.push("readable_files = @readable_files");
      params.readable_files = JSON.stringify(checkReadableFiles(changes.readableFiles));
    }
    const result = this.#db
      .prepare(`UPDATE sessions SET ${[...sets, "updated_at = @updated_at"].join(", ")} WHERE id = @id`)
      .run(params);
    if (result.changes === 0) throw new StoreError("not_found", `session ${id} does not exist`);
    return this.require(id);
  }

  /** Adds a grant to the session's "always" approvals; a grant it already has is not added twice. */
  allowAlways(id: string, grant: ApprovalGrant): Session {
    return this.#db
      .transaction(() => {
        const session = this.require(id);
        if (session.alwaysAllow.some((g) => sameGrant(g, grant))) return session;
        return this.update(id, { alwaysAllow: [...session.alwaysAllow, grant] });
      })
      .immediate();
  }

  /** Deletes a session with its whole transcript (and its search index entries). Returns whether it existed. */
  delete(id: string): boolean {
    return this.#db.prepare("DELETE FROM sessions WHERE id = ?").run(requireId("id", id)).changes > 0;
  }
}

function redactTitle(title: string | null | undefined): string | null {
  const value = optionalString("title", title);
  return value === null ? null : redact(value).text;
}

function redactMetadata(metadata: Record<string, unknown>): string {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) {
    throw new StoreError("invalid_argument", "metadata must be a JSON object");
  }
  return JSON.stringify(redactJson(toPlainJson("metadata", metadata)).value);
}

function checkMode(mode: string): ApprovalMode {
  const parsed = ApprovalModeSchema.safeParse(mode);
  if (!parsed.success) {
    throw new StoreError(
      "invalid_argument",
      `approvalMode must be one of ${APPROVAL_MODES.join(", ")}, got "${mode}"`,
    );
  }
  return parsed.data;
}

function checkReadableFiles(paths: readonly unknown[]): string[] {
  const parsed = ReadableFilesSchema.safeParse(paths);
  if (!parsed.success) {
    throw new StoreError("invalid_argument", firstIssue("readableFiles", parsed.error.issues));
  }
  return [...new Set(parsed.data)];
}

function checkGrants(grants: readonly unknown[]): ApprovalGrant[] {
  const parsed = GrantsSchema.safeParse(grants);
  if (!parsed.success) {
    throw new StoreError("invalid_argument", firstIssue("alwaysAllow", parsed.error.issues));
  }
  const unique: ApprovalGrant[] = [];
  for (const grant of parsed.data) if (!unique.some((g) => sameGrant(g, grant))) unique.push(grant);
  return unique;
}
