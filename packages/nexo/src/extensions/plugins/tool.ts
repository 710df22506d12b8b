/**
 * Plugin tools (plugin contract §4.1.1, §5.t): one engine `Tool` per advertised tool, each call
 * one `tool.invoke {plugin_id, tool_name, args, agent_id}` within the tool timeout (60 s,
 * NEXO_PLUGIN_TOOL_TIMEOUT_MS). The host's catalog checks come first: a tool the running plugin
 * does not advertise gets -33401 and arguments its schema refuses get -33402, neither reaching
 * the child. Every failure becomes an error output the model can read, with the code in metadata.
 *
 * Category `exec`: a plugin tool can do anything its process can, so it is approved like a command.
 */
import {
  ConnectionClosedError,
  hasLongString,
  JsonRpcCode,
  JsonText,
  RequestCancelledError,
  type RequestOptions,
  RpcError,
  TimeoutError,
  ToolCode,
  ToolUnavailableError,
} from "@nexo/wire";
import * as plugin from "@nexo/wire/schemas/plugin";
import type { ToolRegistry } from "../../engine/tools/registry.js";
import type { Tool, ToolContext, ToolOutput } from "../../engine/types.js";
import { keepCatalogToolsRegistered } from "../catalog-tools.js";
import type { SupervisorLogger } from "../supervisor.js";
import type { CatalogTool } from "./catalog.js";
import { PluginUnavailableError } from "./errors.js";
import type { PluginHost } from "./host.js";

export interface InvokeToolOptions {
  /** The agent on whose behalf the tool runs; sent as `agent_id` (null when there is none). */
  agentId?: string | null;
  signal?: AbortSignal;
  /** Default: the host's tool timeout. */
  timeoutMs?: number;
}

/**
 * One validated `tool.invoke`. Resolves with the plugin's result (any JSON); rejects with the
 * typed tool errors (-33401..-33405 from the host's checks or the child), the peer's
 * TimeoutError / ConnectionClosedError, or PluginUnavailableError.
 */
export function invokePluginTool(
  host: PluginHost,
  toolName: string,
  args: unknown,
  options: InvokeToolOptions = {},
): Promise<unknown> {
  // Not `async`: every call of every plugin tool passes here, and the peer's promise is returned as
  // is instead of being wrapped in another one; a refusal still arrives as a rejection.
  try {
    const session = host.session;
    if (session === undefined) throw new PluginUnavailableError(host.id, host.state);
    session.catalog.check(toolName, args);
    // Built field by field: a conditional spread takes V8's slow path on every call.
    const requestOptions: RequestOptions = { timeoutMs: options.timeoutMs ?? host.timeouts.toolMs };
    if (options.signal) requestOptions.signal = options.signal;
    return host.request(
      "tool.invoke",
      toolInvokeParams(host.id, toolName, args, options.agentId ?? null),
      requestOptions,
    );
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * tool.invoke's params, as the JSON text JSON.stringify gives for them where that is safe: the peer
 * splices it into the request frame, so of the frame only the arguments are serialized per call
 * (the envelope and the three fixed members were ~0.5 µs of the host's ~10 µs a call;
 * docs/performance.md, eleventh pass). Arguments carrying a long string stay an object, for the
 * writer's byte assembler (@nexo/wire long-strings.ts), and so do arguments with a `toJSON` of
 * their own (JSON.stringify would call it with another key).
 */
export function toolInvokeParams(
  pluginId: string,
  toolName: string,
  args: unknown,
  agentId: string | null,
): plugin.ToolInvokeParams | JsonText {
  if (
    typeof args !== "object" ||
    args === null ||
    typeof (args as { toJSON?: unknown }).toJSON === "function" ||
    hasLongString(args)
  ) {
    return { plugin_id: pluginId, tool_name: toolName, args, agent_id: agentId };
  }
  const agent = agentId === null ? "null" : JSON.stringify(agentId);
  return new JsonText(`${paramsHead(pluginId, toolName)}${JSON.stringify(args)},"agent_id":${agent}}`);
}

/** `{"plugin_id":…,"tool_name":…,"args":`, kept for the last tool (calls repeat a tool). */
function paramsHead(pluginId: string, toolName: string): string {
  if (lastHead?.pluginId !== pluginId || lastHead.toolName !== toolName) {
    const text = `{"plugin_id":${JSON.stringify(pluginId)},"tool_name":${JSON.stringify(toolName)},"args":`;
    lastHead = { pluginId, toolName, text };
  }
  return lastHead.text;
}
let lastHead: { pluginId: string; toolName: string; text: string } | undefined;

export class PluginTool implements Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly category = "exec" as const;
  readonly source = "plugin" as const;
  /** The plugin offering it. */
  readonly origin: string;
  private readonly host: PluginHost;

  constructor(host: PluginHost, def: CatalogTool) {
    this.host = host;
    this.origin = host.id;
    this.name = def.name;
    this.description = def.description;
    // The SDKs advertise `{}` for "any arguments"; the engine's registry wants an object schema,
    // and a model's tool arguments are always an object, so `{}` means the same thing here.
    this.inputSchema =
      def.inputSchema.type === undefined ? { type: "object", ...def.inputSchema } : def.inputSchema;
  }

  describe(): string {
    return `${this.name} (plugin ${this.host.id})`;
  }

  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
    // Inline arrows, no named closure per call: under a loader that keeps function names
    // (tsx, esbuild's keepNames) each named closure costs an Object.defineProperty per call.
    return invokePluginTool(this.host, this.name, args, { agentId: ctx.agentId, signal: ctx.signal }).then(
      (result) => this.outputOf(result),
      (error: unknown) => toolErrorOutput(this.host.id, this.name, error),
    );
  }

  private outputOf(result: unknown): ToolOutput {
    try {
      return toolOutputOf(result);
    } catch (error) {
      return toolErrorOutput(this.host.id, this.name, error);
    }
  }
}

/**
 * Registers the running plugin's advertised tools into `registry` and keeps them in step with
 * each new handshake (a restarted plugin may advertise a different catalog). Tools whose schema
 * does not describe an object cannot be offered to a model; they are skipped with a warning.
 * Returns a function that unregisters them all.
 */
export function registerPluginTools(
  host: PluginHost,
  registry: ToolRegistry,
  logger: SupervisorLogger,
): () => void {
  return keepCatalogToolsRegistered(
    {
      kind: "plugin",
      id: host.id,
      current: () => host.session?.catalog.tools.values(),
      toTool: (def) => new PluginTool(host, def),
      subscribe: (sync) => {
        host.on("ready", sync);
        return () => host.off("ready", sync);
      },
    },
    registry,
    logger,
  );
}

/** The conventional `{content: [...], is_error}` result as a tool output; anything else as JSON. */
export function toolOutputOf(result: unknown): ToolOutput {
  let response: plugin.ToolResponse;
  if (isPlainToolResponse(result)) {
    response = { content: result.content, is_error: result.is_error ?? false };
  } else {
    const parsed = plugin.ToolResponseSchema.safeParse(result);
    if (!parsed.success) {
      return { output: typeof result === "string" ? result : (JSON.stringify(result, null, 2) ?? "null") };
    }
    response = parsed.data;
  }
  const { content, is_error: isError } = response;
  const only = content.length === 1 ? (content[0] as Record<string, unknown>) : undefined;
  if (only?.type === "image" && typeof only.data === "string") {
    const mediaType = only.mimeType ?? only.mime_type ?? only.media_type;
    return {
      output: only.data,
      outputType: "image",
      ...(typeof mediaType === "string" ? { metadata: { media_type: mediaType } } : {}),
      ...(isError ? { isError } : {}),
    };
  }
  const text =
    only?.type === "text"
      ? ((only.text as string | undefined) ?? "")
      : content
          .map((block) => (block.type === "text" ? (block.text ?? "") : JSON.stringify(block)))
          .join("\n");
  return isError ? { output: text, isError: true } : { output: text };
}

/**
 * The common case of ToolResponseSchema, checked by hand: it runs on every tool call, where zod's
 * safeParse was a measurable share of the host's CPU (docs/performance.md). It accepts a subset of
 * what the schema accepts; anything it does not recognise goes through the schema as before.
 */
function isPlainToolResponse(
  value: unknown,
): value is { content: plugin.ToolContentBlock[]; is_error?: boolean } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { content, is_error: isError } = value as { content?: unknown; is_error?: unknown };
  if (isError !== undefined && typeof isError !== "boolean") return false;
  if (!Array.isArray(content)) return false;
  for (const block of content as unknown[]) {
    if (typeof block !== "object" || block === null || Array.isArray(block)) return false;
    const { type, text } = block as { type?: unknown; text?: unknown };
    if (typeof type !== "string" || type.length === 0) return false;
    if (text === undefined ? type === "text" : typeof text !== "string") return false;
  }
  return true;
}

const TOOL_ERROR_LABELS: Record<number, string> = {
  [ToolCode.notFound]: "tool not found",
  [ToolCode.argumentInvalid]: "invalid arguments",
  [ToolCode.executionFailed]: "execution failed",
  [ToolCode.unavailable]: "temporarily unavailable",
  [ToolCode.denied]: "denied",
  [JsonRpcCode.methodNotFound]: "the plugin does not implement tool.invoke",
};

/** A failed call as the error output the model sees, with the code and its data in metadata. */
export function toolErrorOutput(pluginId: string, toolName: string, error: unknown): ToolOutput {
  const metadata: Record<string, unknown> = { plugin_id: pluginId };
  let text: string;
  if (error instanceof RpcError) {
    metadata.code = error.code;
    const label = TOOL_ERROR_LABELS[error.code] ?? "plugin error";
    text = `${toolName}: ${label} (${error.code}): ${error.message}`;
    const data = error.data as { details?: unknown } | undefined;
    if (error.code === ToolCode.argumentInvalid && data?.details !== undefined) {
      metadata.details = data.details;
      text += `\nOffending fields: ${JSON.stringify(data.details)}`;
    }
    if (error instanceof ToolUnavailableError && error.retryAfterMs !== undefined) {
      metadata.retry_after_ms = error.retryAfterMs;
      text += `\nRetry after ${error.retryAfterMs} ms.`;
    }
  } else if (error instanceof TimeoutError) {
    metadata.code = "timeout";
    text = `${toolName}: no reply from plugin ${pluginId} within ${error.timeoutMs} ms`;
  } else if (error instanceof ConnectionClosedError) {
    metadata.code = "connection_closed";
    text = `${toolName}: plugin ${pluginId} stopped during the call (${error.reason})`;
  } else if (error instanceof PluginUnavailableError) {
    metadata.code = error.code;
    text = `${toolName}: ${error.message}`;
  } else if (error instanceof RequestCancelledError) {
    metadata.code = "cancelled";
    text = `${toolName} was cancelled`;
  } else {
    text = `${toolName} failed: ${error instanceof Error ? error.message : String(error)}`;
  }
  return { output: text, isError: true, metadata };
}
