/** Storage: the only module that opens the database. See docs/storage.md. */

export {
  type AgentEventListener,
  type AgentEventListFilter,
  type AgentEventPage,
  type AgentEventPosition,
  type AgentEventReadOptions,
  AgentEventRepository,
  agentEventsListSql,
  DEFAULT_AGENT_EVENTS_READ_LIMIT,
  MAX_AGENT_EVENTS_LIMIT,
  type NewAgentEvent,
  type StoredAgentEvent,
  scopeStreamId,
} from "./agent-events.js";
export {
  AuditRepository,
  type AuditRetention,
  type AuditRow,
  type AuditTail,
  type AuditTailFilter,
  MAX_AUDIT_TAIL_LIMIT,
} from "./audit.js";
export { conceptTags, normalizeConceptTag, stem } from "./concepts.js";
export {
  type ChatMessage,
  type ContentBlock,
  type ImageBlock,
  normalizeContent,
  redactContent,
  searchableText,
  type TextBlock,
  type ThinkingBlock,
  type ToolResultBlock,
  type ToolUseBlock,
} from "./content.js";
export { type ConnectionOptions, DEFAULT_BUSY_TIMEOUT_MS, IN_MEMORY } from "./db.js";
export { isStoreError, StoreError, type StoreErrorCode } from "./errors.js";
export {
  type EscalationFilter,
  type EscalationRecord,
  EscalationRepository,
  type NewEscalation,
} from "./escalations.js";
export { parseQuery, type SearchTerm } from "./fts-query.js";
export {
  DEFAULT_INBOX_DEDUP_RETENTION_MS,
  DEFAULT_INBOX_MAX_PENDING,
  type InboxAcceptance,
  InboxFullError,
  type InboxMessage,
  type InboxOptions,
  InboxRepository,
  type PendingInboxMessage,
} from "./inbox.js";
export {
  DEFAULT_RECALL_LIMIT,
  MAX_RECALL_LIMIT,
  type MemoryEntry,
  MemoryRepository,
  type NewMemory,
  type RecallHit,
  type RecallOptions,
} from "./memory.js";
export {
  type AppliedMigration,
  type Migration,
  type MigrationReport,
  type MigrationStep,
  migrate,
} from "./migrations.js";
export {
  type NewPendingInbound,
  type PauseRecord,
  type PendingInbound,
  ProcessingRepository,
} from "./processing.js";
export {
  luhnValid,
  REDACTION_LABELS,
  type RedactedValue,
  type RedactionCounts,
  type RedactionLabel,
  type RedactionResult,
  redact,
  redactJson,
  scrubSecrets,
} from "./redact.js";
export { MIGRATIONS } from "./schema.js";
export {
  type NewSession,
  type Session,
  type SessionChanges,
  type SessionFilter,
  type SessionKey,
  type SessionListOptions,
  SessionRepository,
} from "./sessions.js";
export { Store, type StoreOptions } from "./store.js";
export {
  DEFAULT_SEARCH_LIMIT,
  type HistoryOptions,
  MAX_SEARCH_LIMIT,
  type NewTranscriptEntry,
  OPERATOR_NOTE_SOURCE,
  RANK_WINDOW,
  type TranscriptEntry,
  type TranscriptHit,
  TranscriptRepository,
  type TranscriptRole,
  type TranscriptSearchOptions,
} from "./transcripts.js";
