/**
 * The requests the daemon sends a microapp. A microapp answers any method it does not know with
 * -32601, so methods added in later versions are safe to send.
 */
import { z } from "zod";
import { type MethodSchema, method } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";
import { MicroappBindingContextSchema, MicroappInboundRefSchema } from "./context.js";
import { hookNameFromMethod, MicroappHookDecisionSchema, MicroappHookParamsSchema } from "./hooks.js";
import { MicroappToolDefinitionSchema } from "./tools.js";

/** Sent once, right after spawn. */
export const MicroappInitializeParamsSchema = lazySchema("microapp.methods", () =>
  z.looseObject({
    extension_id: z.string().min(1),
    /** A directory the microapp owns for its persistent state. */
    state_dir: z.string().min(1),
    /** `extensions.yaml` `entries.<id>.config`, passed through unread by the daemon. */
    config: z.unknown().optional(),
  }),
);
export type MicroappInitializeParams = z.infer<typeof MicroappInitializeParamsSchema>;

/**
 * A fresh initialize result schema, for schemas built on use and let go (the daemon's handshake
 * envelope, which extends it): extending the kept {@link MicroappInitializeResultSchema} would
 * build it for good, where a daemon reads it only when a microapp starts.
 */
export function microappInitializeResultSchema() {
  return z.looseObject({
    tools: z.array(MicroappToolDefinitionSchema),
    version: z.string().optional(),
    /** Names of the hooks the daemon should call as `hooks/<name>`. */
    hooks: z.array(z.string().min(1)).optional(),
  });
}
export const MicroappInitializeResultSchema = lazySchema("microapp.methods", microappInitializeResultSchema);
export type MicroappInitializeResult = z.infer<typeof MicroappInitializeResultSchema>;

/**
 * Re-asked on every binding refresh. The answer should be byte-identical across calls so the
 * daemon's tool-cache prefix stays warm.
 */
export const MicroappToolsListParamsSchema = lazySchema("microapp.methods", () =>
  z.looseObject({}).optional(),
);
export type MicroappToolsListParams = z.infer<typeof MicroappToolsListParamsSchema>;

/** A fresh tools/list result schema; the daemon's envelope extends it, as the initialize result's. */
export function microappToolsListResultSchema() {
  return z.looseObject({ tools: z.array(MicroappToolDefinitionSchema) });
}
export const MicroappToolsListResultSchema = lazySchema("microapp.methods", microappToolsListResultSchema);
export type MicroappToolsListResult = z.infer<typeof MicroappToolsListResultSchema>;

/** One agent tool call: which tool, the LLM's arguments, and where the call came from. */
export const MicroappToolCallParamsSchema = lazySchema("microapp.methods", () =>
  z.looseObject({
    tool: z.string().min(1),
    args: z.record(z.string(), z.unknown()),
    binding_context: MicroappBindingContextSchema,
    /** Absent for turns no message triggered (heartbeats, schedules). */
    inbound: MicroappInboundRefSchema.optional(),
  }),
);
export type MicroappToolCallParams = z.infer<typeof MicroappToolCallParamsSchema>;

/**
 * MicroappToolCallParamsSchema's check by hand, for the microapp's dispatcher (every tool call;
 * zod's parse of the nested objects was the largest piece of the SDK's own work per call,
 * docs/performance.md). True only for decoded JSON the schema accepts and parses to an equal value:
 * plain objects without an own `__proto__` key (the schema drops it). Anything else goes through
 * the schema.
 */
export function isPlainMicroappToolCallParams(value: unknown): boolean {
  if (!isPlainRecord(value)) return false;
  const { tool, args, binding_context: binding, inbound } = value as Record<string, unknown>;
  return (
    isName(tool) &&
    isPlainRecord(args) &&
    isPlainBindingContext(binding) &&
    (inbound === undefined || isPlainInboundRef(inbound))
  );
}

function isPlainBindingContext(value: unknown): boolean {
  if (!isPlainRecord(value)) return false;
  const { agent_id, channel, account_id, binding_id, binding_index } = value as Record<string, unknown>;
  return (
    isName(agent_id) &&
    (channel === undefined || isName(channel)) &&
    (account_id === undefined || isName(account_id)) &&
    (binding_id === undefined || isName(binding_id)) &&
    (binding_index === undefined || isCount(binding_index))
  );
}

function isPlainInboundRef(value: unknown): boolean {
  if (!isPlainRecord(value)) return false;
  const { kind, from, ts_ms, session_id } = value as Record<string, unknown>;
  return (
    isName(kind) &&
    (from === undefined || typeof from === "string") &&
    (ts_ms === undefined || isCount(ts_ms)) &&
    (session_id === undefined || isName(session_id))
  );
}

/** An object with Object.prototype as its prototype and no own `__proto__` key. */
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    Object.getPrototypeOf(value) === Object.prototype &&
    !Object.hasOwn(value, "__proto__")
  );
}

/** `z.string().min(1)`. */
function isName(value: unknown): boolean {
  return typeof value === "string" && value.length > 0;
}

/** `z.number().int().nonnegative()`. */
function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/**
 * `{output}` on success (any JSON; the LLM sees it stringified) or `{error}` when the tool itself
 * failed. A JSON-RPC error is reserved for protocol-level faults.
 */
export const MicroappToolCallResultSchema = lazySchema("microapp.methods", () =>
  z
    .looseObject({
      output: z.unknown().optional(),
      error: z.string().optional(),
    })
    .superRefine((result, ctx) => {
      const hasOutput = Object.hasOwn(result, "output");
      const hasError = result.error !== undefined;
      if (hasOutput === hasError) {
        ctx.addIssue({
          code: "custom",
          path: hasOutput ? ["error"] : ["output"],
          message: "a tools/call result carries exactly one of output (success) or error (tool failure)",
        });
      }
    }),
);
export type MicroappToolCallResult = z.infer<typeof MicroappToolCallResultSchema>;

/**
 * MicroappToolCallResultSchema's check by hand, for the daemon's check of every tools/call reply:
 * true only for decoded JSON the schema accepts and parses to an equal value (a plain object with
 * exactly one of `output` and a string `error`). Anything else goes through the schema.
 */
export function isPlainMicroappToolCallResult(value: unknown): boolean {
  if (!isPlainRecord(value)) return false;
  const error = (value as { error?: unknown }).error;
  if (error !== undefined && typeof error !== "string") return false;
  return Object.hasOwn(value, "output") !== (error !== undefined);
}

/** Sent once before SIGTERM; the daemon SIGKILLs 10 s later regardless. Answer within 5 s. */
export const MicroappShutdownParamsSchema = lazySchema("microapp.methods", () =>
  z.looseObject({}).optional(),
);
export type MicroappShutdownParams = z.infer<typeof MicroappShutdownParamsSchema>;

export const MicroappShutdownResultSchema = lazySchema("microapp.methods", () =>
  z.looseObject({ ok: z.boolean() }),
);
export type MicroappShutdownResult = z.infer<typeof MicroappShutdownResultSchema>;

/** Every daemon → microapp request except hooks, whose method names are open-ended. */
export const microappMethods = {
  initialize: method(MicroappInitializeParamsSchema, MicroappInitializeResultSchema),
  "tools/list": method(MicroappToolsListParamsSchema, MicroappToolsListResultSchema),
  "tools/call": method(
    MicroappToolCallParamsSchema,
    MicroappToolCallResultSchema,
    isPlainMicroappToolCallParams,
    isPlainMicroappToolCallResult,
  ),
  shutdown: method(MicroappShutdownParamsSchema, MicroappShutdownResultSchema),
} as const;
export type MicroappMethodName = keyof typeof microappMethods;

/** The schemas of any `hooks/<name>` request. */
export const microappHookMethod = method(MicroappHookParamsSchema, MicroappHookDecisionSchema);

/** The schemas of a daemon → microapp method, `hooks/<name>` included; undefined if unknown. */
export function microappMethodSchema(name: string): MethodSchema | undefined {
  if (Object.hasOwn(microappMethods, name)) return microappMethods[name as MicroappMethodName];
  return hookNameFromMethod(name) === undefined ? undefined : microappHookMethod;
}
