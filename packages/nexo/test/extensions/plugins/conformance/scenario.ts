/**
 * The conformance scenario format, as a zod schema: what the scripted child does (`child.runs`,
 * one per spawn), how the host is set up (`setup`) and what the host test does and must observe
 * (`host`). docs/plugins.md ("Conformance scenarios") describes every step and expectation.
 *
 * Closed objects on purpose (unlike wire objects): a misspelt step or expectation must be an
 * error naming the file and the path, never a silently skipped check.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { z } from "zod";

/** A value, or a matcher over it (match.mjs); checked when the scenario is played. */
const Matcher = z.unknown();
const Label = z.string().regex(/^[a-z][a-z0-9_]*$/, "labels are lower_snake_case");

// --- the child's steps -------------------------------------------------------------------------

const JsonRpcErrorObject = z.strictObject({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});

/** How the child answers a host request: a result, an error, or nothing at all. */
const ReplyFields = {
  result: z.unknown().optional(),
  error: JsonRpcErrorObject.optional(),
  none: z.literal(true).optional(),
  /** Sent `delay_ms` later, without holding up the next step. */
  delay_ms: z.number().int().nonnegative().optional(),
  /** Streamed first, each as a `<method>.delta {request_id, chunk}` notification. */
  deltas: z.array(z.unknown()).optional(),
};
const Reply = z
  .strictObject(ReplyFields)
  .refine(
    (reply) =>
      [reply.result !== undefined, reply.error !== undefined, reply.none === true].filter(Boolean).length ===
      1,
    { error: "a reply has exactly one of result, error or none" },
  );

const ChildStep = z.discriminatedUnion("do", [
  z.strictObject({
    do: z.literal("handshake"),
    id: z.string().optional(),
    version: z.string().optional(),
    server_version: z.string().optional(),
    tools: z.array(z.unknown()).optional(),
    params: Matcher.optional(),
  }),
  z.strictObject({
    do: z.literal("expect_request"),
    method: z.string().min(1),
    params: Matcher.optional(),
    as: Label.optional(),
    reply: Reply.optional(),
  }),
  z.strictObject({
    do: z.literal("expect_notification"),
    method: z.string().min(1),
    params: Matcher.optional(),
    count: z.number().int().positive().optional(),
  }),
  z
    .strictObject({ do: z.literal("reply"), to: Label, ...ReplyFields })
    .refine(
      (step) =>
        [step.result !== undefined, step.error !== undefined, step.none === true].filter(Boolean).length ===
        1,
      {
        error: "a reply has exactly one of result, error or none",
      },
    ),
  z.strictObject({
    do: z.literal("send_request"),
    method: z.string().min(1),
    params: z.unknown(),
    as: Label,
  }),
  z.strictObject({
    do: z.literal("expect_response"),
    to: Label,
    result: Matcher.optional(),
    error: Matcher.optional(),
    deltas: Matcher.optional(),
    within_ms: z.number().int().positive().optional(),
  }),
  z.strictObject({ do: z.literal("send_notification"), method: z.string().min(1), params: z.unknown() }),
  z
    .strictObject({
      do: z.literal("send_raw"),
      text: z.string().optional(),
      hex: z
        .string()
        .regex(/^[0-9a-fA-F\s]+$/)
        .optional(),
      fill: z
        .strictObject({ byte: z.string().length(1).optional(), count: z.number().int().positive() })
        .optional(),
      /** With `text` holding "{pad}": the marker grows until the line is this many bytes. */
      pad_to_bytes: z.number().int().positive().optional(),
      newline: z.boolean().optional(),
    })
    .refine((step) => [step.text, step.hex, step.fill].filter((v) => v !== undefined).length === 1, {
      error: "send_raw takes exactly one of text, hex or fill",
    })
    .refine((step) => step.pad_to_bytes === undefined || step.text?.includes("{pad}") === true, {
      error: 'pad_to_bytes needs a text with a "{pad}" marker',
    }),
  z.strictObject({ do: z.literal("sleep"), ms: z.number().int().nonnegative() }),
  z.strictObject({ do: z.literal("exit"), code: z.number().int().min(0).max(255) }),
  z.strictObject({
    do: z.literal("kill_self"),
    signal: z.enum(["SIGKILL", "SIGSEGV", "SIGABRT", "SIGTERM"]),
  }),
  z.strictObject({ do: z.literal("hang") }),
  z.strictObject({ do: z.literal("linger") }),
  z.strictObject({ do: z.literal("stop_reading") }),
]);
export type ChildStep = z.infer<typeof ChildStep>;

const TERMINAL = new Set(["hang", "linger", "stop_reading", "exit", "kill_self"]);

const ChildRun = z
  .strictObject({ steps: z.array(ChildStep).min(1) })
  .refine((run) => run.steps.slice(0, -1).every((step) => !TERMINAL.has(step.do)), {
    error: "hang, linger, stop_reading, exit and kill_self may only be the last step of a run",
  });

// --- the host's setup --------------------------------------------------------------------------

const ProviderSetup = z.strictObject({
  /** Streamed as text deltas, in order. */
  chunks: z.array(z.string()).optional(),
  usage: z.strictObject({ input_tokens: z.number().int(), output_tokens: z.number().int() }).optional(),
  stop: z.enum(["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]).optional(),
  delay_ms: z.number().int().nonnegative().optional(),
  /** Answer with tool calls and no text. */
  tool_calls_only: z.boolean().optional(),
  /** Fail with this error after any chunks. */
  error: z.string().optional(),
});
export type ProviderSetup = z.infer<typeof ProviderSetup>;

const GrantList = z.union([z.literal("*"), z.array(z.string())]);

const Setup = z.strictObject({
  /** Added to the daemon's environment (NEXO_PLUGIN_*_TIMEOUT_MS, …). */
  env: z.record(z.string(), z.string()).optional(),
  grants: z
    .strictObject({ memory_agents: GrantList.optional(), llm_providers: GrantList.optional() })
    .optional(),
  /** Long-term memory behind memory.recall; absent means "not configured". */
  memory: z
    .strictObject({
      entries: z.array(
        z.strictObject({ agent_id: z.string(), content: z.string(), tags: z.array(z.string()).optional() }),
      ),
      fail: z.string().optional(),
    })
    .optional(),
  /** LLM providers behind llm.complete, by name; absent means "not configured". */
  providers: z.record(z.string(), ProviderSetup).optional(),
  /** How long the host waits for the shutdown acknowledgement. */
  shutdown_timeout_ms: z.number().int().positive().optional(),
  /** How long the host lets the child exit after the acknowledgement before SIGKILL (default 1000). */
  exit_grace_ms: z.number().int().positive().optional(),
});
export type Setup = z.infer<typeof Setup>;

// --- the host's actions ------------------------------------------------------------------------

/** Fields every call may carry: its expected outcome, its duration, and running in the background. */
const CallFields = {
  expect: Matcher.optional(),
  elapsed_ms: Matcher.optional(),
  background: z.boolean().optional(),
  as: Label.optional(),
};
const ChatMessage = z.strictObject({ role: z.enum(["user", "assistant"]), content: z.string() });
const HookPoint = z.enum(["before_message", "before_tool", "after_tool", "before_reply"]);

const HostAction = z.discriminatedUnion("do", [
  z.strictObject({ do: z.literal("start"), expect: Matcher.optional(), elapsed_ms: Matcher.optional() }),
  z.strictObject({
    do: z.literal("stop"),
    expect: Matcher.optional(),
    elapsed_ms: Matcher.optional(),
  }),
  z.strictObject({
    do: z.literal("invoke_tool"),
    tool: z.string(),
    args: z.unknown(),
    agent_id: z.string().optional(),
    via: z.enum(["host", "registry"]).optional(),
    ...CallFields,
  }),
  z.strictObject({
    do: z.literal("channel_start"),
    kind: z.string(),
    instance: z.string().nullable().optional(),
    ...CallFields,
  }),
  z.strictObject({ do: z.literal("channel_stop"), kind: z.string(), ...CallFields }),
  z.strictObject({
    do: z.literal("channel_send"),
    kind: z.string(),
    msg: z.record(z.string(), z.unknown()),
    ...CallFields,
  }),
  z.strictObject({
    do: z.literal("llm_chat"),
    provider: z.string(),
    model: z.string(),
    messages: z.array(ChatMessage).min(1),
    system: z.string().optional(),
    max_tokens: z.number().int().positive().optional(),
    stream: z.boolean(),
    ...CallFields,
  }),
  z.strictObject({
    do: z.literal("hook"),
    point: HookPoint,
    payload: z.record(z.string(), z.unknown()),
    agent_id: z.string().optional(),
    session_id: z.string().optional(),
    ...CallFields,
  }),
  z.strictObject({
    do: z.literal("vector_upsert"),
    backend: z.string(),
    collection: z.string(),
    records: z.array(z.record(z.string(), z.unknown())),
    ...CallFields,
  }),
  z.strictObject({
    do: z.literal("vector_search"),
    backend: z.string(),
    collection: z.string(),
    query: z.record(z.string(), z.unknown()),
    ...CallFields,
  }),
  z.strictObject({
    do: z.literal("vector_delete"),
    backend: z.string(),
    collection: z.string(),
    ids: z.array(z.string()),
    ...CallFields,
  }),
  z.strictObject({
    do: z.literal("publish"),
    topic: z.string(),
    source: z.string().optional(),
    session_id: z.string().optional(),
    payload: z.record(z.string(), z.unknown()).optional(),
    /** Instead of `payload`: `{text: "x" × payload_bytes}`. */
    payload_bytes: z.number().int().positive().optional(),
    count: z.number().int().positive().optional(),
  }),
  z.strictObject({
    do: z.literal("await"),
    as: Label,
    expect: Matcher.optional(),
    elapsed_ms: Matcher.optional(),
  }),
  z.strictObject({ do: z.literal("sleep"), ms: z.number().int().nonnegative() }),
  z.strictObject({ do: z.literal("expect"), state: Matcher }),
  z.strictObject({
    do: z.literal("wait_for"),
    state: Matcher,
    timeout_ms: z.number().int().positive().optional(),
  }),
  z.strictObject({
    do: z.literal("expect_log"),
    level: z.enum(["debug", "info", "warn", "error"]).optional(),
    message: Matcher.optional(),
    fields: Matcher.optional(),
    count: Matcher.optional(),
  }),
]);
export type HostAction = z.infer<typeof HostAction>;

// --- the scenario ------------------------------------------------------------------------------

export const ScenarioSchema = z.strictObject({
  /** The file's name without `.json`. */
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
  title: z.string().min(1),
  /** The contract sections the scenario exercises, e.g. ["§5.t"]. */
  covers: z.array(z.string()).min(1),
  /**
   * A divergence of this host that is known and not yet fixed: the scenario still runs, and its
   * failure is reported without failing the suite (node:test `todo`). Remove it with the fix.
   */
  known_issue: z.string().min(1).optional(),
  /** The plugin's `nexo-plugin.toml` as JSON, without `[plugin.entrypoint]` (the runner adds it). */
  manifest: z.strictObject({
    plugin: z.looseObject({ id: z.string(), version: z.string() }).refine((p) => !("entrypoint" in p), {
      error: "the runner writes [plugin.entrypoint]; leave it out",
    }),
  }),
  setup: Setup.optional(),
  child: z.strictObject({ runs: z.array(ChildRun).min(1) }),
  host: z.array(HostAction).min(1),
});
export type Scenario = z.infer<typeof ScenarioSchema>;

/** A scenario file that does not follow the format. */
export class ScenarioFormatError extends Error {
  readonly file: string;
  constructor(file: string, problems: string[]) {
    super(`${file}: not a valid conformance scenario:\n  ${problems.join("\n  ")}`);
    this.name = "ScenarioFormatError";
    this.file = file;
  }
}

export function loadScenario(file: string): Scenario {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ScenarioFormatError(file, [`not JSON: ${(error as Error).message}`]);
  }
  const parsed = ScenarioSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ScenarioFormatError(
      file,
      parsed.error.issues.map((issue) => `${issue.path.map(String).join(".") || "(file)"}: ${issue.message}`),
    );
  }
  if (`${parsed.data.name}.json` !== basename(file)) {
    throw new ScenarioFormatError(file, [`name "${parsed.data.name}" does not match the file name`]);
  }
  return parsed.data;
}
