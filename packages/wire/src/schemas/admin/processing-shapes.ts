/**
 * The discriminated shapes of operator takeover (Phase 82.13), shared by processing/*,
 * escalations/* and the agent-event firehose: what is paused (scope), what the operator does
 * (action), and the per-scope control state.
 *
 * Only the `conversation` scope and the `reply` action are served end to end today; the other
 * variants are valid on the wire and the daemon answers them with -32601 not_implemented, so a
 * caller can probe the surface without the daemon pretending to support it.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { EpochMsSchema, NonEmptyStringSchema, OperatorTokenHashSchema } from "./common.js";

export const ConversationScopeSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    kind: z.literal("conversation"),
    agent_id: NonEmptyStringSchema,
    channel: NonEmptyStringSchema,
    account_id: NonEmptyStringSchema,
    /** The counterparty (e.g. a WhatsApp jid). */
    contact_id: NonEmptyStringSchema,
    /** Set when the conversation arrived through an MCP channel server (e.g. `slack`). */
    mcp_channel_source: z.string().min(1).optional(),
  }),
);

/** Reserved: one agent on one channel binding. */
export const AgentBindingScopeSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    kind: z.literal("agent_binding"),
    agent_id: NonEmptyStringSchema,
    channel: NonEmptyStringSchema,
    account_id: NonEmptyStringSchema,
  }),
);

/** Reserved: a whole agent. */
export const AgentScopeSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    kind: z.literal("agent"),
    agent_id: NonEmptyStringSchema,
  }),
);

/** Reserved: an event-subscriber agent's subject pattern. */
export const EventStreamScopeSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    kind: z.literal("event_stream"),
    agent_id: NonEmptyStringSchema,
    subject_pattern: NonEmptyStringSchema,
  }),
);

/** Reserved: a batch agent's queue. */
export const BatchQueueScopeSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    kind: z.literal("batch_queue"),
    agent_id: NonEmptyStringSchema,
    queue_name: NonEmptyStringSchema,
  }),
);

/** Forward-compat slot: caller-defined scope kind and id. */
export const CustomScopeSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    kind: z.literal("custom"),
    agent_id: NonEmptyStringSchema,
    scope_kind: NonEmptyStringSchema,
    scope_id: NonEmptyStringSchema,
  }),
);

export const ProcessingScopeSchema = lazySchema("admin.processing-shapes", () =>
  z.discriminatedUnion("kind", [
    ConversationScopeSchema,
    AgentBindingScopeSchema,
    AgentScopeSchema,
    EventStreamScopeSchema,
    BatchQueueScopeSchema,
    CustomScopeSchema,
  ]),
);
export type ProcessingScope = z.infer<typeof ProcessingScopeSchema>;
export type ProcessingScopeKind = ProcessingScope["kind"];

/** Send a message to the contact in the operator's name. */
export const ReplyActionSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    kind: z.literal("reply"),
    channel: NonEmptyStringSchema,
    account_id: NonEmptyStringSchema,
    to: NonEmptyStringSchema,
    body: z.string(),
    /** `text`, `template` or `media`. */
    msg_kind: NonEmptyStringSchema,
    attachments: z.array(z.unknown()).optional(),
    reply_to_msg_id: z.string().min(1).optional(),
  }),
);

/** Reserved: skip a queued work item. */
export const SkipItemActionSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    kind: z.literal("skip_item"),
    item_id: NonEmptyStringSchema,
    reason: z.string(),
  }),
);

/** Reserved: replace an agent output. */
export const OverrideOutputActionSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    kind: z.literal("override_output"),
    value: z.unknown(),
  }),
);

/** Reserved: inject a synthetic input. */
export const InjectInputActionSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    kind: z.literal("inject_input"),
    content: z.unknown(),
  }),
);

/** Forward-compat slot; the sub-kind lives in `action_kind` because `kind` is the outer tag. */
export const CustomActionSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    kind: z.literal("custom"),
    action_kind: NonEmptyStringSchema,
    payload: z.unknown(),
  }),
);

export const InterventionActionSchema = lazySchema("admin.processing-shapes", () =>
  z.discriminatedUnion("kind", [
    ReplyActionSchema,
    SkipItemActionSchema,
    OverrideOutputActionSchema,
    InjectInputActionSchema,
    CustomActionSchema,
  ]),
);
export type InterventionAction = z.infer<typeof InterventionActionSchema>;

export const AgentActiveStateSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({ state: z.literal("agent_active") }),
);

export const PausedByOperatorStateSchema = lazySchema("admin.processing-shapes", () =>
  z.looseObject({
    state: z.literal("paused_by_operator"),
    scope: ProcessingScopeSchema,
    paused_at_ms: EpochMsSchema,
    operator_token_hash: OperatorTokenHashSchema,
    reason: z.string().optional(),
  }),
);

/** Every scope starts (and returns to) `agent_active`. */
export const ProcessingControlStateSchema = lazySchema("admin.processing-shapes", () =>
  z.discriminatedUnion("state", [AgentActiveStateSchema, PausedByOperatorStateSchema]),
);
export type ProcessingControlState = z.infer<typeof ProcessingControlStateSchema>;
