/**
 * The store's schema as an ordered list of migrations. A migration that has shipped is never edited:
 * a change is a new migration at the end, because databases in the field already ran the old one.
 */
import type { Migration } from "./migrations.js";

/** unicode61 with diacritics removed, so "canción" is found by "cancion" and the reverse. */
const TOKENIZER = "unicode61 remove_diacritics 2";

const SESSIONS = `
CREATE TABLE sessions (
  id            TEXT PRIMARY KEY,
  agent_id      TEXT NOT NULL,
  tenant_id     TEXT,
  channel       TEXT,
  account       TEXT,
  contact       TEXT,
  title         TEXT,
  approval_mode TEXT NOT NULL DEFAULT 'default' CHECK (approval_mode IN ('default', 'auto_edit', 'yolo')),
  always_allow  TEXT NOT NULL DEFAULT '[]',
  metadata      TEXT NOT NULL DEFAULT '{}',
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
) STRICT;
CREATE INDEX sessions_by_key ON sessions (agent_id, channel, account, contact, updated_at);
CREATE INDEX sessions_by_agent ON sessions (agent_id, updated_at);
CREATE INDEX sessions_by_updated ON sessions (updated_at);
`;

/**
 * Search filters (session, agent, tenant) live in the index as one `scope` column of tokens —
 * "s<hex>", "a<hex>", "t<hex>", the ids' UTF-8 bytes in hex, so any id becomes exactly one token —
 * so that FTS5 narrows a query by merging doclists instead of joining every match back to its row.
 * It is a generated column: computed from the ids, never stored, never out of step.
 */
const scope = (parts: Record<string, string>) =>
  Object.entries(parts)
    .map(([prefix, column]) => `'${prefix}' || hex(COALESCE(${column}, ''))`)
    .join(" || ' ' || ");

const TRANSCRIPTS = `
CREATE TABLE transcript_entries (
  id            INTEGER PRIMARY KEY,
  session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  seq           INTEGER NOT NULL CHECK (seq > 0),
  role          TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
  agent_id      TEXT NOT NULL,
  tenant_id     TEXT,
  source_plugin TEXT,
  sender_id     TEXT,
  message_id    TEXT,
  created_at    TEXT NOT NULL,
  content       TEXT NOT NULL,
  text          TEXT NOT NULL,
  scope         TEXT GENERATED ALWAYS AS (${scope({ s: "session_id", a: "agent_id", t: "tenant_id" })}) VIRTUAL,
  UNIQUE (session_id, seq)
) STRICT;

CREATE VIRTUAL TABLE transcript_fts USING fts5 (
  text,
  scope,
  content = 'transcript_entries',
  content_rowid = 'id',
  tokenize = '${TOKENIZER}'
);

CREATE TRIGGER transcript_entries_index AFTER INSERT ON transcript_entries BEGIN
  INSERT INTO transcript_fts (rowid, text, scope) VALUES (new.id, new.text, new.scope);
END;

CREATE TRIGGER transcript_entries_unindex AFTER DELETE ON transcript_entries BEGIN
  INSERT INTO transcript_fts (transcript_fts, rowid, text, scope) VALUES ('delete', old.id, old.text, old.scope);
END;

CREATE TRIGGER transcript_entries_append_only BEFORE UPDATE ON transcript_entries BEGIN
  SELECT RAISE (ABORT, 'transcript entries are append-only');
END;
`;

const MEMORIES = `
CREATE TABLE memories (
  pk           INTEGER PRIMARY KEY,
  id           TEXT NOT NULL UNIQUE,
  agent_id     TEXT NOT NULL,
  memory_type  TEXT,
  created_at   TEXT NOT NULL,
  content      TEXT NOT NULL,
  tags         TEXT NOT NULL DEFAULT '[]',
  concept_tags TEXT NOT NULL DEFAULT '[]',
  scope        TEXT GENERATED ALWAYS AS (${scope({ a: "agent_id" })}) VIRTUAL
) STRICT;
CREATE INDEX memories_by_agent ON memories (agent_id, pk);

CREATE VIRTUAL TABLE memory_fts USING fts5 (
  content,
  tags,
  concept_tags,
  scope,
  content = 'memories',
  content_rowid = 'pk',
  tokenize = '${TOKENIZER}'
);

-- How many memories hold each term: recall leaves out words too common to tell memories apart.
CREATE VIRTUAL TABLE memory_terms USING fts5vocab (memory_fts, 'row');

CREATE TRIGGER memories_index AFTER INSERT ON memories BEGIN
  INSERT INTO memory_fts (rowid, content, tags, concept_tags, scope)
  VALUES (new.pk, new.content, new.tags, new.concept_tags, new.scope);
END;

CREATE TRIGGER memories_unindex AFTER DELETE ON memories BEGIN
  INSERT INTO memory_fts (memory_fts, rowid, content, tags, concept_tags, scope)
  VALUES ('delete', old.pk, old.content, old.tags, old.concept_tags, old.scope);
END;
`;

/**
 * "Always" approvals used to be stored as bare categories (`["edit"]`); they are now grants of
 * several kinds (src/permissions.ts). A stored category keeps meaning what it meant: that category.
 */
const APPROVAL_GRANTS = `
UPDATE sessions
SET always_allow = (
  SELECT json_group_array(json_object('kind', 'category', 'category', value))
  FROM json_each(sessions.always_allow)
)
WHERE always_allow <> '[]';
`;

/** The files outside the workspace a session's user attached, which Read may open (issue 10.4). */
const READABLE_FILES = `ALTER TABLE sessions ADD COLUMN readable_files TEXT NOT NULL DEFAULT '[]';`;

/**
 * The turn each transcript entry belongs to (issue 11.3), so a conversation can be rebuilt turn by
 * turn. Entries written before have none.
 */
const TRANSCRIPT_TURNS = `ALTER TABLE transcript_entries ADD COLUMN turn_id TEXT;`;

/**
 * One row per admin call a microapp made (store/audit.ts). `started_at_ms` orders the tail and the
 * retention sweep; the other indices serve the tail's filters.
 */
const MICROAPP_ADMIN_AUDIT = `
CREATE TABLE microapp_admin_audit (
  id            INTEGER PRIMARY KEY,
  microapp_id   TEXT NOT NULL,
  method        TEXT NOT NULL,
  capability    TEXT NOT NULL,
  args_hash     TEXT NOT NULL,
  started_at_ms INTEGER NOT NULL,
  result        TEXT NOT NULL CHECK (result IN ('ok', 'error', 'denied')),
  error_code    INTEGER,
  duration_ms   INTEGER NOT NULL CHECK (duration_ms >= 0),
  tenant_id     TEXT
) STRICT;
CREATE INDEX microapp_admin_audit_by_time ON microapp_admin_audit (started_at_ms);
CREATE INDEX microapp_admin_audit_by_microapp ON microapp_admin_audit (microapp_id, started_at_ms);
CREATE INDEX microapp_admin_audit_by_method ON microapp_admin_audit (method, started_at_ms);
CREATE INDEX microapp_admin_audit_by_tenant ON microapp_admin_audit (tenant_id, started_at_ms);
`;

/**
 * The agent event log (store/agent-events.ts): `seq` counts per stream (a session, or a scope
 * without one), assigned by the INSERT; append-only so a seq is never reused.
 */
const AGENT_EVENTS = `
CREATE TABLE agent_events (
  id         INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  seq        INTEGER NOT NULL CHECK (seq > 0),
  kind       TEXT NOT NULL,
  agent_id   TEXT NOT NULL,
  tenant_id  TEXT,
  at_ms      INTEGER NOT NULL,
  fields     TEXT NOT NULL,
  UNIQUE (session_id, seq)
) STRICT;
CREATE INDEX agent_events_by_agent ON agent_events (agent_id, at_ms);

CREATE TRIGGER agent_events_append_only BEFORE UPDATE ON agent_events BEGIN
  SELECT RAISE (ABORT, 'agent events are append-only');
END;
`;

/**
 * Operator takeover (store/processing.ts): the paused conversations, the inbound messages held
 * while they are paused (oldest first by id), and the escalations agents raised — at most one
 * pending per scope, resolved ones kept as history.
 */
const PROCESSING_CONTROL = `
CREATE TABLE processing_pauses (
  scope_key           TEXT PRIMARY KEY,
  agent_id            TEXT NOT NULL,
  scope               TEXT NOT NULL,
  paused_at_ms        INTEGER NOT NULL,
  operator_token_hash TEXT NOT NULL,
  reason              TEXT
) STRICT;
CREATE TABLE processing_pending (
  id             INTEGER PRIMARY KEY,
  scope_key      TEXT NOT NULL,
  body           TEXT NOT NULL,
  sender_id      TEXT,
  message_id     TEXT,
  source_plugin  TEXT NOT NULL,
  received_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX processing_pending_by_scope ON processing_pending (scope_key, id);
CREATE TABLE escalations (
  id              INTEGER PRIMARY KEY,
  scope_key       TEXT NOT NULL,
  agent_id        TEXT NOT NULL,
  tenant_id       TEXT,
  scope           TEXT NOT NULL,
  summary         TEXT NOT NULL,
  reason          TEXT NOT NULL,
  urgency         TEXT NOT NULL,
  context         TEXT,
  requested_at_ms INTEGER NOT NULL,
  resolved_at_ms  INTEGER,
  resolved_by     TEXT
) STRICT;
CREATE UNIQUE INDEX escalations_one_pending ON escalations (scope_key) WHERE resolved_at_ms IS NULL;
CREATE INDEX escalations_by_agent ON escalations (agent_id, id);
`;

/**
 * The durable inbox (issue 10.19): an inbound channel message is written here before the router
 * queues it, and marked done once its turn has committed the transcript, so a daemon killed in
 * between replays it at the next start. `dedup_key` (the channel's message id, or the broker
 * event's id) makes a message delivered twice run once. `seq` is the arrival order; the partial
 * index keeps "what is still to do, in order" cheap however many done rows are kept for dedup.
 */
const INBOX = `
CREATE TABLE inbox (
  seq            INTEGER PRIMARY KEY,
  dedup_key      TEXT NOT NULL UNIQUE,
  kind           TEXT NOT NULL,
  instance       TEXT,
  contact        TEXT NOT NULL,
  account        TEXT,
  sender_id      TEXT,
  message_id     TEXT,
  text           TEXT NOT NULL,
  received_at_ms INTEGER NOT NULL,
  done_at_ms     INTEGER
) STRICT;
CREATE INDEX inbox_pending ON inbox (seq) WHERE done_at_ms IS NULL;
CREATE INDEX inbox_done ON inbox (done_at_ms) WHERE done_at_ms IS NOT NULL;
`;

/**
 * The reply of an inbox message (issue 10): written when its turn has ended, before it is sent;
 * the row is done only once the channel took the reply. A send that failed (or a kill during it)
 * leaves the reply here, and the next start sends it again instead of losing it.
 */
const INBOX_REPLIES = `
ALTER TABLE inbox ADD COLUMN reply TEXT;
`;

/** The files a channel downloaded for a message (JSON), so a replayed message keeps its pictures. */
const INBOX_ATTACHMENTS = `
ALTER TABLE inbox ADD COLUMN attachments TEXT;
`;

/**
 * A sub-agent's session names the session that spawned it, so a parent's children are one indexed
 * lookup however many sessions the agent has. Deleting the parent leaves the child unlinked. The
 * AppServer's child threads made before this column named their parent only in their metadata
 * (`appserver.subAgent.parentThreadId`); those links are copied over once here.
 */
const SESSION_PARENTS = `
ALTER TABLE sessions ADD COLUMN parent_id TEXT REFERENCES sessions (id) ON DELETE SET NULL;
CREATE INDEX sessions_by_parent ON sessions (parent_id, updated_at);
UPDATE sessions
   SET parent_id = json_extract(metadata, '$.appserver.subAgent.parentThreadId')
 WHERE json_valid(metadata)
   AND json_extract(metadata, '$.appserver.subAgent.parentThreadId') IN (SELECT id FROM sessions);
`;

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "sessions", up: SESSIONS },
  { version: 2, name: "transcripts", up: TRANSCRIPTS },
  { version: 3, name: "memories", up: MEMORIES },
  { version: 4, name: "approval grants", up: APPROVAL_GRANTS },
  { version: 5, name: "readable files", up: READABLE_FILES },
  { version: 6, name: "transcript turn ids", up: TRANSCRIPT_TURNS },
  { version: 7, name: "microapp_admin_audit", up: MICROAPP_ADMIN_AUDIT },
  { version: 8, name: "agent_events", up: AGENT_EVENTS },
  { version: 9, name: "processing control", up: PROCESSING_CONTROL },
  { version: 10, name: "inbox", up: INBOX },
  { version: 11, name: "inbox replies", up: INBOX_REPLIES },
  { version: 12, name: "inbox attachments", up: INBOX_ATTACHMENTS },
  { version: 13, name: "session parents", up: SESSION_PARENTS },
];
