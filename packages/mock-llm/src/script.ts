/**
 * The mock LLM server's script: a list of canned responses served in order, each a reply (text,
 * thinking, tool calls), an HTTP error, or a connection cut. The format is documented in
 * docs/providers.md. Unlike wire objects, a script is closed: a misspelt key ("tool_call") is an
 * error, because silently ignoring it would make a test pass for the wrong reason.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";

export const MockToolCallSchema = z.strictObject({
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()).default({}),
  /** Defaults to a generated id (toolu_… / call_…). */
  id: z.string().min(1).optional(),
});

export const MockUsageSchema = z.strictObject({
  input_tokens: z.int().min(0).optional(),
  output_tokens: z.int().min(0).optional(),
  cache_read_input_tokens: z.int().min(0).optional(),
  cache_creation_input_tokens: z.int().min(0).optional(),
});

const REPLY_KEYS = ["text", "thinking", "signature", "tool_calls", "stop_reason", "usage"] as const;
const ERROR_KEYS = ["retry_after", "message", "body", "headers"] as const;

export const MockResponseSchema = z
  .strictObject({
    /** Only serve this entry when the last user message contains this text. */
    match: z.string().min(1).optional(),
    /**
     * Only serve this entry when some message of the conversation — any role, any earlier turn,
     * tool calls and results included — contains this text. A client that prepends its own
     * messages or answers a tool call in a later request still finds its entry.
     */
    match_any: z.string().min(1).optional(),
    text: z.string().optional(),
    thinking: z.string().optional(),
    /** Signature of the thinking block (Anthropic); a fixed mock value by default. */
    signature: z.string().optional(),
    tool_calls: z.array(MockToolCallSchema).min(1).optional(),
    stop_reason: z.enum(["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal"]).optional(),
    usage: MockUsageSchema.optional(),
    /** Answer with this HTTP error instead of a reply. */
    status: z.int().min(400).max(599).optional(),
    /** `retry-after` header: seconds, or an HTTP date. */
    retry_after: z.union([z.number().min(0), z.string().min(1)]).optional(),
    /** The error message inside the vendor's error body. */
    message: z.string().optional(),
    /** Replaces the whole error body. */
    body: z.unknown().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** Send this many stream events, then destroy the socket (0: before any response). */
    disconnect_after: z.int().min(0).optional(),
    /** Pause between stream events (or before a non-streamed answer). */
    delay_ms: z.int().min(0).max(600_000).optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.status !== undefined) {
      for (const key of [...REPLY_KEYS, "disconnect_after"] as const) {
        if (entry[key] !== undefined) {
          ctx.addIssue({ code: "custom", path: [key], message: `"${key}" cannot be combined with "status"` });
        }
      }
      return;
    }
    for (const key of ERROR_KEYS) {
      if (entry[key] !== undefined) {
        ctx.addIssue({ code: "custom", path: [key], message: `"${key}" is only meaningful with "status"` });
      }
    }
    const replies =
      entry.text !== undefined || entry.thinking !== undefined || entry.tool_calls !== undefined;
    if (!replies && entry.disconnect_after === undefined) {
      ctx.addIssue({
        code: "custom",
        path: [],
        message: 'a response needs "text", "thinking", "tool_calls", "status" or "disconnect_after"',
      });
    }
  });
export type MockResponse = z.infer<typeof MockResponseSchema>;

/** A script file is either a bare list of responses or `{responses, models?}` (parseMockScript accepts both). */
export const MockScriptSchema = z.strictObject({
  responses: z.array(MockResponseSchema),
  /** Model ids listed by GET /v1/models. */
  models: z.array(z.string().min(1)).optional(),
});
export type MockScript = z.output<typeof MockScriptSchema>;
export type MockScriptInput = z.input<typeof MockScriptSchema> | z.input<typeof MockResponseSchema>[];

export class MockScriptError extends Error {
  override readonly name = "MockScriptError";
}

function describeIssues(error: z.ZodError, bare: boolean): string {
  return error.issues
    .map((issue) => {
      // A bare list was wrapped as {responses}; report paths as the author wrote them.
      const path = bare && issue.path[0] === "responses" ? issue.path.slice(1) : issue.path;
      const where = path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
      return `${where ? where.replace(/^\./, "") : "(script)"}: ${issue.message}`;
    })
    .join("; ");
}

/** Validates a script given as data (from a test or a POST /__reset body). */
export function parseMockScript(value: unknown, source = "script"): MockScript {
  const bare = Array.isArray(value);
  const result = MockScriptSchema.safeParse(bare ? { responses: value } : value);
  if (!result.success) throw new MockScriptError(`${source}: ${describeIssues(result.error, bare)}`);
  return result.data;
}

export async function loadMockScript(file: string): Promise<MockScript> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new MockScriptError(`cannot read ${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new MockScriptError(`${file} is not JSON: ${(error as Error).message}`);
  }
  return parseMockScript(value, file);
}
