/**
 * Tools (plugin contract §4.1.1, §5.t): the catalog types, the invocation a handler receives, the
 * typed errors mapping to -33401..-33405, and the conventional text result.
 *
 * Each error class keeps the upstream constructor and message prefix and extends the matching
 * `@nexo/wire` class, so it is `instanceof` both and the JSON-RPC peer answers with its code and
 * `data` untouched. The SDK's `ToolError` base is matched by brand (see errors.ts), because its
 * subclasses inherit from the wire classes rather than from it.
 */
import {
  ToolCode,
  ToolArgumentInvalidError as WireToolArgumentInvalidError,
  ToolDeniedError as WireToolDeniedError,
  ToolError as WireToolError,
  ToolExecutionFailedError as WireToolExecutionFailedError,
  ToolNotFoundError as WireToolNotFoundError,
  ToolUnavailableError as WireToolUnavailableError,
} from "@nexo/wire";
import type { BrokerSender } from "./broker.js";
import { isSdkToolError, sdkToolErrorClasses } from "./errors.js";

/** A tool the plugin advertises in its `initialize` reply. */
export interface ToolDef {
  name: string;
  description: string;
  /** JSON Schema of the arguments; sent as `input_schema`, `{}` when absent. */
  inputSchema?: Record<string, unknown>;
}

/** One `tool.invoke` request, decoded. */
export interface ToolInvocation {
  /** `params.plugin_id`, or the manifest id when the host left it out. */
  pluginId: string;
  toolName: string;
  /** The arguments as the host sent them (any JSON value); `null` when absent. */
  args: unknown;
  agentId?: string;
}

/** What `onToolWithContext` receives besides the invocation. */
export interface ToolContext {
  broker: BrokerSender;
  pluginId: string;
  /**
   * Aborted when the host goes away or shutdown gives up waiting for this call. Always set by the
   * adapter; optional so contexts built by hand (in tests) still type-check.
   */
  signal?: AbortSignal;
}

export type ToolHandler = (inv: ToolInvocation) => unknown | Promise<unknown>;
export type ToolHandlerWithContext = (inv: ToolInvocation, ctx: ToolContext) => unknown | Promise<unknown>;

/** The wire form of a ToolDef. */
export function toolDefToJson(tool: ToolDef): {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
} {
  return { name: tool.name, description: tool.description, input_schema: tool.inputSchema ?? {} };
}

/** The conventional tool result: one text block and the error flag. */
export function textResult(
  text: string,
  isError = false,
): { content: { type: "text"; text: string }[]; is_error: boolean } {
  return { content: [{ type: "text", text }], is_error: isError };
}

function dataAsRecord(data: unknown): Record<string, unknown> | undefined {
  return data !== null && typeof data === "object" && !Array.isArray(data)
    ? (data as Record<string, unknown>)
    : undefined;
}

/**
 * Base of the tool errors. Thrown as is it answers -33403 (the upstream default); a code of the
 * tool band and a `data` value may be given for cases the subclasses do not cover.
 */
export class ToolError extends WireToolError {
  constructor(message: string, code: number = ToolCode.executionFailed, data?: unknown) {
    super(code, message, data);
    this.name = "ToolError";
  }

  /** The `error.data` sent with the reply, or undefined when there is none. */
  errorData(): Record<string, unknown> | undefined {
    return dataAsRecord(this.data);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class on the right of instanceof, maybe a subclass
    if (this !== ToolError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return isSdkToolError(value);
  }
}

/** -33401: the plugin does not implement this tool. */
export class ToolNotFoundError extends WireToolNotFoundError {
  readonly toolName: string;

  constructor(toolName: string) {
    super(`tool not found: ${toolName}`);
    this.name = "ToolNotFoundError";
    this.toolName = toolName;
  }

  errorData(): Record<string, unknown> | undefined {
    return dataAsRecord(this.data);
  }
}

/** -33402: the arguments are unusable; `details` goes out as `error.data.details`. */
export class ToolArgumentInvalidError extends WireToolArgumentInvalidError {
  constructor(message: string, details?: unknown) {
    super(`invalid argument: ${message}`, details);
    this.name = "ToolArgumentInvalidError";
  }

  errorData(): Record<string, unknown> | undefined {
    return dataAsRecord(this.data);
  }
}

/** -33403: the tool ran and failed. Also what any other exception from a tool handler becomes. */
export class ToolExecutionFailedError extends WireToolExecutionFailedError {
  constructor(message: string) {
    super(`execution failed: ${message}`);
    this.name = "ToolExecutionFailedError";
  }

  errorData(): Record<string, unknown> | undefined {
    return dataAsRecord(this.data);
  }
}

/** -33404: try again later; `retryAfterMs` goes out as `error.data.retry_after_ms`. */
export class ToolUnavailableError extends WireToolUnavailableError {
  constructor(message: string, retryAfterMs?: number) {
    if (retryAfterMs !== undefined && !(Number.isInteger(retryAfterMs) && retryAfterMs >= 0)) {
      throw new RangeError(`retryAfterMs must be a non-negative integer, got ${retryAfterMs}`);
    }
    super(`unavailable: ${message}`, retryAfterMs);
    this.name = "ToolUnavailableError";
  }

  errorData(): Record<string, unknown> | undefined {
    return dataAsRecord(this.data);
  }
}

/** -33405: the caller is not allowed to use this tool. */
export class ToolDeniedError extends WireToolDeniedError {
  constructor(message: string) {
    super(`denied: ${message}`);
    this.name = "ToolDeniedError";
  }

  errorData(): Record<string, unknown> | undefined {
    return dataAsRecord(this.data);
  }
}

sdkToolErrorClasses.push(
  ToolError,
  ToolNotFoundError,
  ToolArgumentInvalidError,
  ToolExecutionFailedError,
  ToolUnavailableError,
  ToolDeniedError,
);
