/**
 * Serving `tool.invoke` (plugin contract §5.t) with the upstream SDK's rules: the handler gets a
 * ToolInvocation, typed errors keep their code and `data`, any other exception is -33403
 * "execution failed: …". A result that cannot be sent — NaN, ±Infinity, BigInt, or a frame over
 * the outbound cap — is answered -33403 too, so the host gets an error instead of `null` or a
 * dropped frame followed by a timeout.
 */
import { isThenable, type JsonRpcId, JsonText } from "@nexo/wire";
import type { TaskHandle } from "./inflight.js";
import { type DispatchEnv, serve } from "./serve.js";
import { signalAccessor } from "./signal-accessor.js";
import {
  type ToolContext,
  ToolExecutionFailedError,
  type ToolHandler,
  type ToolHandlerWithContext,
  type ToolInvocation,
} from "./tools.js";
import { toStrictJson } from "./wire.js";

/**
 * The plugin's tool handler as it was given: `onToolWithContext` gets a ToolContext per call,
 * `onTool` takes the invocation alone, so no context is built for it (defining the context's
 * `signal` accessor was the SDK's largest own cost per call; docs/performance.md, tenth pass).
 */
export type ToolHandlers = { withContext: ToolHandlerWithContext } | { plain: ToolHandler };

export function serveTools(env: DispatchEnv, handlers: ToolHandlers, maxOutgoingFrameBytes: number): void {
  serve(env, {
    method: "tool.invoke",
    label: (p) => `tool.invoke ${p.tool_name}`,
    fallbackError: (message) => new ToolExecutionFailedError(message),
    // Not `async`: a handler that returns a value (not a promise) is answered in the same tick,
    // with no promise between the request and the reply's write (docs/performance.md).
    handle: (p, task, rpc) => {
      const invocation: ToolInvocation = {
        pluginId: p.plugin_id ?? env.pluginId,
        toolName: p.tool_name,
        args: p.args ?? null,
      };
      if (typeof p.agent_id === "string") invocation.agentId = p.agent_id;
      const result =
        "withContext" in handlers
          ? handlers.withContext(invocation, new InvocationContext(env, task))
          : handlers.plain(invocation);
      const id = rpc.id;
      return isThenable(result)
        ? result.then((value) => replyOf(value, id, maxOutgoingFrameBytes))
        : replyOf(result, id, maxOutgoingFrameBytes);
    },
  });
}

/**
 * The ToolContext a handler receives. A class: an object literal with a getter is built per call
 * through V8's slow path (a dictionary-mode object), which the tool.invoke profile showed. The
 * signal is still read on demand (its AbortController is made only for a handler that reads it),
 * through an own enumerable accessor, so a handler that spreads its context into a new one
 * (`{ ...ctx, extra }`) passes the signal on; the task stays in a private field, out of copies.
 * One shared descriptor keeps the objects on one fast shape (~0.17 µs a call).
 */
class InvocationContext implements ToolContext {
  readonly broker: ToolContext["broker"];
  readonly pluginId: string;
  declare readonly signal: AbortSignal;
  readonly #task: TaskHandle;

  constructor(env: DispatchEnv, task: TaskHandle) {
    this.broker = env.broker;
    this.pluginId = env.pluginId;
    this.#task = task;
    Object.defineProperty(this, "signal", SIGNAL);
  }

  static signalOf(context: InvocationContext): AbortSignal {
    return context.#task.signal;
  }
}

const SIGNAL = signalAccessor(InvocationContext.signalOf);

// Serialized once, here: the check that it can be sent and the reply frame share the text.
function replyOf(result: unknown, id: JsonRpcId | null, maxFrameBytes: number): JsonText | undefined {
  return result === undefined ? undefined : sendableJson(result, id, maxFrameBytes);
}

/** The result's JSON text, or -33403 when it cannot be sent (unrepresentable, over the frame cap). */
function sendableJson(result: unknown, id: JsonRpcId | null, maxFrameBytes: number): JsonText {
  let json: string;
  try {
    json = toStrictJson(result, "result");
  } catch (error) {
    throw new ToolExecutionFailedError(`the tool's result cannot be sent: ${(error as Error).message}`);
  }
  // UTF-8 needs at most 3 bytes per UTF-16 unit: most results skip the exact count.
  // The reply is `{"jsonrpc":"2.0","id":…,"result":<json>}`; the cap excludes the newline.
  if (
    !Number.isFinite(maxFrameBytes) ||
    (typeof id !== "string" && (json.length + MAX_NUMERIC_ENVELOPE_CHARS) * 3 <= maxFrameBytes)
  ) {
    return new JsonText(json);
  }
  const envelope = Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id, result: 0 }), "utf8") - 1;
  const bytes = Buffer.byteLength(json, "utf8") + envelope;
  if (bytes > maxFrameBytes) {
    throw new ToolExecutionFailedError(
      `the tool's result is ${bytes} bytes on the wire, over the ${maxFrameBytes}-byte frame limit`,
    );
  }
  return new JsonText(json);
}

/**
 * At least the envelope's length for a numeric or null id (the host sends integers): 33 characters
 * of `{"jsonrpc":"2.0","id":`, `,"result":` and `}` plus at most 24 of a number. A string id takes
 * the exact count.
 */
const MAX_NUMERIC_ENVELOPE_CHARS = 64;
