/**
 * The agent event firehose: events pushed live as `nexo/notify/agent_event` and queried back with
 * `nexo/admin/agent_events/*` (capability transcripts_read). Events are a tagged union on `kind`
 * that grows without breaking readers, so kinds this version does not know pass through as-is.
 *
 * Bodies are redacted before the event exists; nothing here ever carries a raw transcript line.
 */
import { z } from "zod";
import { lazySchema, sharedFields } from "../lazy.js";
import {
  CountSchema,
  EpochMsSchema,
  NonEmptyStringSchema,
  TenantIdSchema,
  TranscriptRoleSchema,
} from "./common.js";
import { EscalationReasonSchema, EscalationUrgencySchema, ResolvedBySchema } from "./escalations.js";
import { openDiscriminatedUnion } from "./open-union.js";
import { ProcessingControlStateSchema, ProcessingScopeSchema } from "./processing-shapes.js";

/** Owning tenant; `null` on single-tenant deployments. */
const EventTenantSchema = lazySchema("admin.agent-events", () => z.string().nullable().optional());

/**
 * Where a scope event (pause, drop, escalation) sits in the log: its stream is the scope's
 * (`conversation:<agent>/<channel>/<account>/<contact>`), not a session, and `seq` counts there, so
 * `agent_events/read` with that `session_id` replays one conversation's control history.
 */
const scopeStreamFields = sharedFields(() => ({
  session_id: NonEmptyStringSchema.optional(),
  seq: CountSchema.optional(),
}));

/** One transcript line appended; `seq` counts per session, live and backfill agree on it. */
export const TranscriptAppendedEventSchema = lazySchema("admin.agent-events", () =>
  z.looseObject({
    kind: z.literal("transcript_appended"),
    agent_id: NonEmptyStringSchema,
    session_id: NonEmptyStringSchema,
    seq: CountSchema,
    role: TranscriptRoleSchema,
    body: z.string(),
    sent_at_ms: EpochMsSchema,
    sender_id: z.string().optional(),
    /** The channel that produced or received the line (`whatsapp`, `internal`, `intervention:<channel>`…). */
    source_plugin: NonEmptyStringSchema,
    tenant_id: EventTenantSchema,
  }),
);
export type TranscriptAppendedEvent = z.infer<typeof TranscriptAppendedEventSchema>;

/** A scope was paused or resumed (idempotent retries emit nothing). */
export const ProcessingStateChangedEventSchema = lazySchema("admin.agent-events", () =>
  z.looseObject({
    kind: z.literal("processing_state_changed"),
    agent_id: NonEmptyStringSchema,
    ...scopeStreamFields(),
    scope: ProcessingScopeSchema,
    prev_state: ProcessingControlStateSchema,
    new_state: ProcessingControlStateSchema,
    at_ms: EpochMsSchema,
    tenant_id: EventTenantSchema,
  }),
);
export type ProcessingStateChangedEvent = z.infer<typeof ProcessingStateChangedEventSchema>;

/** The pause buffer was full and evicted its oldest inbound(s); the agent will never see them. */
export const PendingInboundsDroppedEventSchema = lazySchema("admin.agent-events", () =>
  z.looseObject({
    kind: z.literal("pending_inbounds_dropped"),
    agent_id: NonEmptyStringSchema,
    ...scopeStreamFields(),
    scope: ProcessingScopeSchema,
    dropped: z.number().int().positive(),
    at_ms: EpochMsSchema,
    tenant_id: EventTenantSchema,
  }),
);
export type PendingInboundsDroppedEvent = z.infer<typeof PendingInboundsDroppedEventSchema>;

export const EscalationRequestedEventSchema = lazySchema("admin.agent-events", () =>
  z.looseObject({
    kind: z.literal("escalation_requested"),
    agent_id: NonEmptyStringSchema,
    ...scopeStreamFields(),
    scope: ProcessingScopeSchema,
    summary: z.string(),
    reason: EscalationReasonSchema,
    urgency: EscalationUrgencySchema,
    requested_at_ms: EpochMsSchema,
    tenant_id: EventTenantSchema,
  }),
);
export type EscalationRequestedEvent = z.infer<typeof EscalationRequestedEventSchema>;

/** Pairs with its escalation_requested through `(agent_id, scope)`. */
export const EscalationResolvedEventSchema = lazySchema("admin.agent-events", () =>
  z.looseObject({
    kind: z.literal("escalation_resolved"),
    agent_id: NonEmptyStringSchema,
    ...scopeStreamFields(),
    scope: ProcessingScopeSchema,
    resolved_at_ms: EpochMsSchema,
    by: ResolvedBySchema,
    tenant_id: EventTenantSchema,
  }),
);
export type EscalationResolvedEvent = z.infer<typeof EscalationResolvedEventSchema>;

/**
 * Lazy as its variants are: building the open union reads each variant's `kind`, which would build
 * all five at import, in every process that loads the admin wire, though only the agent-events
 * methods and the agent_event notification use them.
 */
export const AgentEventSchema = lazySchema("admin.agent-events", () =>
  openDiscriminatedUnion("kind", [
    TranscriptAppendedEventSchema,
    ProcessingStateChangedEventSchema,
    PendingInboundsDroppedEventSchema,
    EscalationRequestedEventSchema,
    EscalationResolvedEventSchema,
  ]),
);
export type AgentEvent = z.infer<typeof AgentEventSchema>;

export const AGENT_EVENT_KINDS = [
  "transcript_appended",
  "processing_state_changed",
  "pending_inbounds_dropped",
  "escalation_requested",
  "escalation_resolved",
] as const;
export type AgentEventKind = (typeof AGENT_EVENT_KINDS)[number];

/** `agent_events/list` defaults: 30 days back, 500 events, never more than 1000 (clamped). */
export const AGENT_EVENTS_LIST_DEFAULT_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;
export const AGENT_EVENTS_LIST_DEFAULT_LIMIT = 500;
export const AGENT_EVENTS_LIST_MAX_LIMIT = 1000;

/**
 * Where a page of `agent_events/list` ended (a nexo addition): opaque to clients, who only pass a
 * result's `next_before` back as `before`. The daemon writes it as `<at_ms>:<row id>` of the page's
 * oldest event (the handler refuses a number past the exact integers).
 */
export const AgentEventsCursorSchema = lazySchema("admin.agent-events", () =>
  z.string().regex(/^\d{1,16}:\d{1,16}$/, {
    message: "not a cursor of agent_events/list: pass a result's next_before as it came",
  }),
);

export const AgentEventsListParamsSchema = lazySchema("admin.agent-events", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    kind: z.string().min(1).optional(),
    since_ms: EpochMsSchema.optional(),
    limit: CountSchema.optional(),
    /** Cross-tenant queries come back empty rather than revealing that events exist. */
    tenant_id: TenantIdSchema.optional(),
    /** Only events older than this cursor (a previous answer's `next_before`; a nexo addition). */
    before: AgentEventsCursorSchema.optional(),
  }),
);
export type AgentEventsListParams = z.infer<typeof AgentEventsListParamsSchema>;

/**
 * Newest first. `next_before` (a nexo addition) is there when older events may follow: pass it as
 * `before`, with the same other params, for the next page back.
 */
export const AgentEventsListResultSchema = lazySchema("admin.agent-events", () =>
  z.looseObject({ events: z.array(AgentEventSchema), next_before: AgentEventsCursorSchema.optional() }),
);
export type AgentEventsListResult = z.infer<typeof AgentEventsListResultSchema>;

/**
 * One session's events after `since_seq` (exclusive), oldest first. A microapp that missed live
 * frames resyncs with `since_seq` = the last seq it saw. An unknown session yields `events: []`.
 */
export const AgentEventsReadParamsSchema = lazySchema("admin.agent-events", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    session_id: NonEmptyStringSchema,
    since_seq: CountSchema.optional(),
    limit: CountSchema.optional(),
  }),
);
export type AgentEventsReadParams = z.infer<typeof AgentEventsReadParamsSchema>;

export const AgentEventsReadResultSchema = lazySchema("admin.agent-events", () =>
  z.looseObject({ events: z.array(AgentEventSchema) }),
);
export type AgentEventsReadResult = z.infer<typeof AgentEventsReadResultSchema>;

/** The latest time a search filter may name (JavaScript's last representable date). */
const MAX_SEARCH_TIME_MS = 8_640_000_000_000_000;

/**
 * Full-text search over redacted bodies; the query is matched as text, not as FTS syntax.
 * `channel`, `role`, `since_ms`, `until_ms` and `offset` are nexo additions to the spec's params:
 * filters applied by the daemon before ranking, and paging through the ranking.
 */
export const AgentEventsSearchParamsSchema = lazySchema("admin.agent-events", () =>
  z
    .looseObject({
      agent_id: NonEmptyStringSchema,
      query: NonEmptyStringSchema,
      kind: z.string().min(1).optional(),
      limit: CountSchema.optional(),
      /** The conversation's channel: `telegram` also matches `telegram.<instance>`. */
      channel: NonEmptyStringSchema.optional(),
      role: TranscriptRoleSchema.optional(),
      /** Lines written at or after this time. */
      since_ms: EpochMsSchema.max(MAX_SEARCH_TIME_MS).optional(),
      /** Lines written before this time. */
      until_ms: EpochMsSchema.max(MAX_SEARCH_TIME_MS).optional(),
      /** Hits of the ranking to skip: the previous answer's `next_offset`. */
      offset: CountSchema.optional(),
    })
    .refine((p) => p.since_ms === undefined || p.until_ms === undefined || p.since_ms < p.until_ms, {
      message: "since_ms must be before until_ms",
      path: ["until_ms"],
    }),
);
export type AgentEventsSearchParams = z.infer<typeof AgentEventsSearchParamsSchema>;

export const AgentEventSearchHitSchema = lazySchema("admin.agent-events", () =>
  z.looseObject({
    session_id: NonEmptyStringSchema,
    timestamp_ms: EpochMsSchema,
    role: TranscriptRoleSchema,
    source_plugin: z.string(),
    /** Excerpt with the matches marked. */
    snippet: z.string(),
    /** The conversation's channel (nexo addition), when the session has one. */
    channel: z.string().optional(),
  }),
);
export type AgentEventSearchHit = z.infer<typeof AgentEventSearchHitSchema>;

/** Best match first. `next_offset` (a nexo addition) is there when another page may follow. */
export const AgentEventsSearchResultSchema = lazySchema("admin.agent-events", () =>
  z.looseObject({
    hits: z.array(AgentEventSearchHitSchema),
    next_offset: CountSchema.optional(),
  }),
);
export type AgentEventsSearchResult = z.infer<typeof AgentEventsSearchResultSchema>;
