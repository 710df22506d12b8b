/**
 * The JSON stream protocol (specs/json-stream-protocol.txt): one conversation per process, one JSON
 * object per line on stdin/stdout, each tagged by `type`. It is NOT JSON-RPC — there are no ids and
 * no responses, so events and commands are two discriminated unions rather than a method table.
 *
 * Field names are snake_case as on the wire. Where the reference (aionrs) or its real client
 * (AionUi) departs from the spec, the schema accepts what the client actually sends and declares what
 * the client reads (notes/json-stream-details.md); each such place says so.
 */
import { z } from "zod";
import { lazySchema } from "./lazy.js";

// --- closed sets ----------------------------------------------------------------------------------

/** How much a tool can do, which decides whether it needs approval under each mode. */
export const JsonStreamToolCategorySchema = lazySchema("jsonstream.sets", () =>
  z.enum(["info", "edit", "exec", "mcp"]),
);
export type JsonStreamToolCategory = z.infer<typeof JsonStreamToolCategorySchema>;

/** `default`: all but allow-listed tools ask; `auto_edit`: info+edit run freely; `yolo`: nothing asks. */
export const JsonStreamApprovalModeSchema = lazySchema("jsonstream.sets", () =>
  z.enum(["default", "auto_edit", "yolo"]),
);
export type JsonStreamApprovalMode = z.infer<typeof JsonStreamApprovalModeSchema>;

/** The spec's error codes. The reference only ever emits `engine_error`; we emit the documented set. */
export const JsonStreamErrorCodeSchema = lazySchema("jsonstream.sets", () =>
  z.enum(["provider_error", "tool_error", "config_error", "protocol_error", "internal_error"]),
);
export type JsonStreamErrorCode = z.infer<typeof JsonStreamErrorCodeSchema>;

export const JsonStreamToolStatusSchema = lazySchema("jsonstream.sets", () => z.enum(["success", "error"]));
export type JsonStreamToolStatus = z.infer<typeof JsonStreamToolStatusSchema>;

/** `diff` carries a unified diff (Edit), `image` base64 data; anything else is `text`. */
export const JsonStreamOutputTypeSchema = lazySchema("jsonstream.sets", () =>
  z.enum(["text", "diff", "image"]),
);
export type JsonStreamOutputType = z.infer<typeof JsonStreamOutputTypeSchema>;

/** `always` adds the tool's category to the session allow-list. */
export const JsonStreamApprovalScopeSchema = lazySchema("jsonstream.sets", () => z.enum(["once", "always"]));
export type JsonStreamApprovalScope = z.infer<typeof JsonStreamApprovalScopeSchema>;

/** Whether the current model accepts images; `unknown` until a host or the provider says. */
export const JsonStreamImageInputSchema = lazySchema("jsonstream.sets", () =>
  z.enum(["supported", "unsupported", "unknown"]),
);
export type JsonStreamImageInput = z.infer<typeof JsonStreamImageInputSchema>;

export const JsonStreamThinkingSettingSchema = lazySchema("jsonstream.sets", () =>
  z.enum(["enabled", "disabled"]),
);
export type JsonStreamThinkingSetting = z.infer<typeof JsonStreamThinkingSettingSchema>;
export const JsonStreamCompactionSettingSchema = lazySchema("jsonstream.sets", () =>
  z.enum(["off", "safe", "full"]),
);
export type JsonStreamCompactionSetting = z.infer<typeof JsonStreamCompactionSettingSchema>;
/** Both spellings of streamable HTTP occur in the wild; the reference accepts both. */
export const JsonStreamMcpTransportSchema = lazySchema("jsonstream.sets", () =>
  z.enum(["stdio", "sse", "streamable-http", "streamable_http"]),
);
export type JsonStreamMcpTransport = z.infer<typeof JsonStreamMcpTransportSchema>;

const tokenCount = lazySchema("jsonstream.events", () => z.number().int().nonnegative());

// --- shared shapes --------------------------------------------------------------------------------

/** Account quota window, as AionUi renders it for subscription-backed providers. */
const JsonStreamLimitWindowSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    used_percent: z.number(),
    window_minutes: z.number().optional(),
    resets_at: z.number().optional(),
  }),
);

/**
 * What the agent can do. The spec requires only `tool_approval`, `thinking` and `mcp`; the rest is
 * what the reference adds and AionUi reads (the mode picker, effort levels, the model switcher, the
 * context badge), all optional so a spec-only agent still validates.
 */
export const JsonStreamCapabilitiesSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    tool_approval: z.boolean(),
    thinking: z.boolean(),
    mcp: z.boolean(),
    image_input: JsonStreamImageInputSchema.optional(),
    effort: z.boolean().optional(),
    effort_levels: z.array(z.string()).optional(),
    modes: z.array(JsonStreamApprovalModeSchema).optional(),
    current_mode: JsonStreamApprovalModeSchema.optional(),
    current_model: z.string().optional(),
    available_models: z
      .array(
        z.looseObject({
          id: z.string(),
          display_name: z.string().optional(),
          context_window: z.number().int().positive().optional(),
          effort_levels: z.array(z.string()).optional(),
          default_effort: z.string().optional(),
        }),
      )
      .optional(),
    account_limits: z
      .looseObject({
        plan_type: z.string().optional(),
        limits: z.array(
          z.looseObject({
            limit_id: z.string().optional(),
            limit_name: z.string().optional(),
            primary: JsonStreamLimitWindowSchema.optional(),
            secondary: JsonStreamLimitWindowSchema.optional(),
            credits: z
              .looseObject({
                has_credits: z.boolean(),
                unlimited: z.boolean(),
                balance: z.string().optional(),
              })
              .optional(),
          }),
        ),
      })
      .optional(),
    context_limit: z.number().int().positive().optional(),
    compaction: z
      .looseObject({
        enabled: z.boolean(),
        context_window: z.number().int().nonnegative(),
        output_reserve: z.number().int().nonnegative(),
        autocompact_trigger: z.number().int().nonnegative(),
        emergency_limit: z.number().int().nonnegative(),
      })
      .optional(),
  }),
);
export type JsonStreamCapabilities = z.infer<typeof JsonStreamCapabilitiesSchema>;

/** Cache counters are omitted when zero. */
export const JsonStreamUsageSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    input_tokens: tokenCount,
    output_tokens: tokenCount,
    cache_read_tokens: tokenCount.optional(),
    cache_write_tokens: tokenCount.optional(),
  }),
);
export type JsonStreamUsage = z.infer<typeof JsonStreamUsageSchema>;

export const JsonStreamToolInfoSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    name: z.string().min(1),
    category: JsonStreamToolCategorySchema,
    args: z.record(z.string(), z.unknown()),
    description: z.string(),
  }),
);
export type JsonStreamToolInfo = z.infer<typeof JsonStreamToolInfoSchema>;

// --- events (agent → client, stdout) --------------------------------------------------------------

/** Written once when the agent can take commands; the client waits for it. */
export const JsonStreamReadyEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("ready"),
    version: z.string().min(1),
    /** Absent when sessions are disabled. */
    session_id: z.string().optional(),
    capabilities: JsonStreamCapabilitiesSchema,
  }),
);

export const JsonStreamStreamStartEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("stream_start"),
    msg_id: z.string(),
  }),
);

export const JsonStreamTextDeltaEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("text_delta"),
    text: z.string(),
    msg_id: z.string(),
  }),
);

export const JsonStreamThinkingEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("thinking"),
    text: z.string(),
    msg_id: z.string(),
  }),
);

/** The agent pauses until `tool_approve` or `tool_deny` names this `call_id`. */
export const JsonStreamToolRequestEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("tool_request"),
    msg_id: z.string(),
    call_id: z.string().min(1),
    tool: JsonStreamToolInfoSchema,
  }),
);

export const JsonStreamToolRunningEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("tool_running"),
    msg_id: z.string(),
    call_id: z.string().min(1),
    tool_name: z.string(),
  }),
);

export const JsonStreamToolResultEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("tool_result"),
    msg_id: z.string(),
    call_id: z.string().min(1),
    tool_name: z.string(),
    status: JsonStreamToolStatusSchema,
    output: z.string(),
    output_type: JsonStreamOutputTypeSchema.default("text"),
    /** AionUi renders a diff card from `file_path` when `output_type` is `diff`. */
    metadata: z.looseObject({ file_path: z.string().optional() }).optional(),
  }),
);

export const JsonStreamToolCancelledEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("tool_cancelled"),
    msg_id: z.string(),
    call_id: z.string().min(1),
    reason: z.string(),
  }),
);

export const JsonStreamStreamEndEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("stream_end"),
    msg_id: z.string(),
    usage: JsonStreamUsageSchema.optional(),
  }),
);

/**
 * `msg_id` is null (spec §4) or absent (reference) when the error belongs to no turn; AionUi then
 * attributes it to the active turn itself.
 */
export const JsonStreamErrorEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("error"),
    msg_id: z.string().nullable().optional(),
    error: z.looseObject({
      code: JsonStreamErrorCodeSchema,
      message: z.string(),
      retryable: z.boolean(),
    }),
  }),
);

/** An empty `msg_id` marks a system-level notice that AionUi keeps out of turn state. */
export const JsonStreamInfoEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("info"),
    msg_id: z.string(),
    message: z.string(),
  }),
);

/** Answer to `ping`, at any time; AionUi kills the process after three missed pongs. */
export const JsonStreamPongEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({ type: z.literal("pong") }),
);

/** The full capability set again after `set_mode` or `set_config` changed it. */
export const JsonStreamConfigChangedEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("config_changed"),
    capabilities: JsonStreamCapabilitiesSchema,
  }),
);

/** Terminal answer to `add_mcp_server`; the client waits for it per server name. */
export const JsonStreamMcpReadyEventSchema = lazySchema("jsonstream.events", () =>
  z.looseObject({
    type: z.literal("mcp_ready"),
    name: z.string().min(1),
    tools: z.array(z.string()),
  }),
);

export const JsonStreamEventSchema = lazySchema("jsonstream.events", () =>
  z.discriminatedUnion("type", [
    JsonStreamReadyEventSchema,
    JsonStreamStreamStartEventSchema,
    JsonStreamTextDeltaEventSchema,
    JsonStreamThinkingEventSchema,
    JsonStreamToolRequestEventSchema,
    JsonStreamToolRunningEventSchema,
    JsonStreamToolResultEventSchema,
    JsonStreamToolCancelledEventSchema,
    JsonStreamStreamEndEventSchema,
    JsonStreamErrorEventSchema,
    JsonStreamInfoEventSchema,
    JsonStreamPongEventSchema,
    JsonStreamConfigChangedEventSchema,
    JsonStreamMcpReadyEventSchema,
  ]),
);
export type JsonStreamEvent = z.infer<typeof JsonStreamEventSchema>;
export type JsonStreamEventType = JsonStreamEvent["type"];
export type JsonStreamReadyEvent = z.infer<typeof JsonStreamReadyEventSchema>;
export type JsonStreamStreamStartEvent = z.infer<typeof JsonStreamStreamStartEventSchema>;
export type JsonStreamTextDeltaEvent = z.infer<typeof JsonStreamTextDeltaEventSchema>;
export type JsonStreamThinkingEvent = z.infer<typeof JsonStreamThinkingEventSchema>;
export type JsonStreamToolRequestEvent = z.infer<typeof JsonStreamToolRequestEventSchema>;
export type JsonStreamToolRunningEvent = z.infer<typeof JsonStreamToolRunningEventSchema>;
export type JsonStreamToolResultEvent = z.infer<typeof JsonStreamToolResultEventSchema>;
export type JsonStreamToolCancelledEvent = z.infer<typeof JsonStreamToolCancelledEventSchema>;
export type JsonStreamStreamEndEvent = z.infer<typeof JsonStreamStreamEndEventSchema>;
export type JsonStreamErrorEvent = z.infer<typeof JsonStreamErrorEventSchema>;
export type JsonStreamInfoEvent = z.infer<typeof JsonStreamInfoEventSchema>;
export type JsonStreamPongEvent = z.infer<typeof JsonStreamPongEventSchema>;
export type JsonStreamConfigChangedEvent = z.infer<typeof JsonStreamConfigChangedEventSchema>;
export type JsonStreamMcpReadyEvent = z.infer<typeof JsonStreamMcpReadyEventSchema>;

// --- commands (client → agent, stdin) -------------------------------------------------------------

/**
 * A user message. The spec names the text `input`; the reference and AionUi use `content`. Both are
 * accepted and at least one is required — read it with {@link messageCommandText}.
 */
export const JsonStreamMessageCommandSchema = lazySchema("jsonstream.commands", () =>
  z
    .looseObject({
      type: z.literal("message"),
      msg_id: z.string().min(1),
      input: z.string().optional(),
      content: z.string().optional(),
      /** Attached file paths (images, documents). */
      files: z.array(z.string()).default([]),
    })
    .refine((cmd) => cmd.input !== undefined || cmd.content !== undefined, {
      message: "a message needs its text in `input` (spec) or `content` (AionUi)",
      path: ["input"],
    }),
);

/** Aborts the current turn (idle: ends the session). */
export const JsonStreamStopCommandSchema = lazySchema("jsonstream.commands", () =>
  z.looseObject({ type: z.literal("stop") }),
);

export const JsonStreamToolApproveCommandSchema = lazySchema("jsonstream.commands", () =>
  z.looseObject({
    type: z.literal("tool_approve"),
    call_id: z.string().min(1),
    scope: JsonStreamApprovalScopeSchema.default("once"),
  }),
);

export const JsonStreamToolDenyCommandSchema = lazySchema("jsonstream.commands", () =>
  z.looseObject({
    type: z.literal("tool_deny"),
    call_id: z.string().min(1),
    /** Fed back to the model as the tool's result. */
    reason: z.string().default(""),
  }),
);

/** Prior context for a resumed conversation; AionUi also sends its preset assistant rules this way. */
export const JsonStreamInitHistoryCommandSchema = lazySchema("jsonstream.commands", () =>
  z.looseObject({
    type: z.literal("init_history"),
    text: z.string(),
  }),
);

export const JsonStreamSetModeCommandSchema = lazySchema("jsonstream.commands", () =>
  z.looseObject({
    type: z.literal("set_mode"),
    mode: JsonStreamApprovalModeSchema,
  }),
);

export const JsonStreamPingCommandSchema = lazySchema("jsonstream.commands", () =>
  z.looseObject({ type: z.literal("ping") }),
);

/** Changes model settings mid-session; every field is optional and only the given ones change. */
export const JsonStreamSetConfigCommandSchema = lazySchema("jsonstream.commands", () =>
  z.looseObject({
    type: z.literal("set_config"),
    model: z.string().min(1).optional(),
    image_input: JsonStreamImageInputSchema.optional(),
    thinking: JsonStreamThinkingSettingSchema.optional(),
    thinking_budget: z.number().int().positive().optional(),
    /** An empty string clears the effort level. */
    effort: z.string().optional(),
    compaction: JsonStreamCompactionSettingSchema.optional(),
  }),
);

/** Only honoured before the first other command; answered with `mcp_ready` (or `error`). */
export const JsonStreamAddMcpServerCommandSchema = lazySchema("jsonstream.commands", () =>
  z.looseObject({
    type: z.literal("add_mcp_server"),
    name: z.string().min(1),
    transport: JsonStreamMcpTransportSchema,
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    url: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
  }),
);

export const JsonStreamCommandSchema = lazySchema("jsonstream.commands", () =>
  z.discriminatedUnion("type", [
    JsonStreamMessageCommandSchema,
    JsonStreamStopCommandSchema,
    JsonStreamToolApproveCommandSchema,
    JsonStreamToolDenyCommandSchema,
    JsonStreamInitHistoryCommandSchema,
    JsonStreamSetModeCommandSchema,
    JsonStreamPingCommandSchema,
    JsonStreamSetConfigCommandSchema,
    JsonStreamAddMcpServerCommandSchema,
  ]),
);
export type JsonStreamCommand = z.infer<typeof JsonStreamCommandSchema>;
export type JsonStreamCommandType = JsonStreamCommand["type"];
export type JsonStreamMessageCommand = z.infer<typeof JsonStreamMessageCommandSchema>;
export type JsonStreamStopCommand = z.infer<typeof JsonStreamStopCommandSchema>;
export type JsonStreamToolApproveCommand = z.infer<typeof JsonStreamToolApproveCommandSchema>;
export type JsonStreamToolDenyCommand = z.infer<typeof JsonStreamToolDenyCommandSchema>;
export type JsonStreamInitHistoryCommand = z.infer<typeof JsonStreamInitHistoryCommandSchema>;
export type JsonStreamSetModeCommand = z.infer<typeof JsonStreamSetModeCommandSchema>;
export type JsonStreamPingCommand = z.infer<typeof JsonStreamPingCommandSchema>;
export type JsonStreamSetConfigCommand = z.infer<typeof JsonStreamSetConfigCommandSchema>;
export type JsonStreamAddMcpServerCommand = z.infer<typeof JsonStreamAddMcpServerCommandSchema>;

/** The user's text of a parsed `message` command, whichever field carried it (`input` wins). */
export function messageCommandText(command: JsonStreamMessageCommand): string {
  return command.input ?? command.content ?? "";
}
