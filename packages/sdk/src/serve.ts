/**
 * How every host → child request is served: refuse it once shutdown has begun, validate its params
 * against the contract's schema (-32602 with the offending fields), run the handler as a tracked
 * task, and turn what it throws into the reply's error. Typed errors (anything carrying a JSON-RPC
 * code) keep their code; the fallback for other exceptions is the method's to choose (-33403 for
 * tools, as upstream; -32603 elsewhere).
 */
import {
  InternalError,
  InvalidParamsError,
  type JsonRpcPeer,
  type RequestContext,
  RpcError as WireRpcError,
} from "@nexo/wire";
import type { BrokerSender } from "./broker.js";
import { PluginError } from "./errors.js";
import type { InflightTasks, TaskHandle } from "./inflight.js";
import { AbandonedError } from "./lifecycle.js";
import { logHandlerFailure, stderrLogger } from "./log.js";
import type { HandlerContext } from "./options.js";

/** The structural part of a zod schema the SDK relies on, so it needs no zod import of its own. */
export interface SafeParser<T> {
  safeParse(value: unknown):
    | { success: true; data: T }
    | {
        success: false;
        error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> };
      };
}

export interface DispatchEnv {
  readonly peer: JsonRpcPeer;
  readonly tasks: InflightTasks;
  readonly broker: BrokerSender;
  readonly pluginId: string;
  isStopping(): boolean;
}

/** Work refused because shutdown has begun. Expected, so not logged as a handler failure. */
export class ShuttingDownError extends PluginError {
  constructor() {
    super("the plugin is shutting down");
    this.name = "ShuttingDownError";
  }
}

export interface ServeSpec<P> {
  method: string;
  params: SafeParser<P>;
  /** Names the call in logs (what shutdown abandoned, which handler threw). */
  label(params: P): string;
  handle(params: P, task: TaskHandle, rpc: RequestContext): unknown;
  /** The reply error for an exception without a JSON-RPC code. Default: -32603. */
  fallbackError?(message: string): WireRpcError;
}

export function describeIssues(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
): string {
  return issues
    .map((issue) => `${issue.path.map(String).join(".") || "(params)"}: ${issue.message}`)
    .join("; ");
}

function issueData(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>) {
  return {
    issues: issues.map((issue) => ({
      path: issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment))),
      message: issue.message,
    })),
  };
}

export function serve<P>(env: DispatchEnv, spec: ServeSpec<P>): void {
  const fallback = spec.fallbackError ?? ((message: string) => new InternalError(message));
  const toError = (error: unknown): WireRpcError => {
    if (error instanceof WireRpcError) return error;
    return fallback(error instanceof Error ? error.message || error.name : String(error));
  };

  env.peer.onRequest(spec.method, (raw, rpc) => {
    if (env.isStopping()) throw toError(new ShuttingDownError());
    const parsed = spec.params.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues;
      throw new InvalidParamsError(
        `invalid ${spec.method} params: ${describeIssues(issues)}`,
        issueData(issues),
      );
    }
    const params = parsed.data;
    const label = spec.label(params);
    return env.tasks
      .run(label, (task) => spec.handle(params, task, rpc))
      .catch((error: unknown) => {
        if (!(error instanceof WireRpcError) && !(error instanceof AbandonedError))
          logHandlerFailure(label, error);
        throw toError(error);
      });
  });
}

/** The context of a nexo-specific handler; the signal is created only if the handler reads it. */
export function handlerContext(env: DispatchEnv, task: TaskHandle): HandlerContext {
  return {
    broker: env.broker,
    pluginId: env.pluginId,
    get signal() {
      return task.signal;
    },
  };
}

/**
 * Checks a handler's result against the contract's schema; the result is sent as the handler
 * returned it (unknown fields kept, no defaults injected). A mismatch is the plugin's bug, so it
 * is logged and answered -32603 rather than sent for the host to choke on.
 */
export function checkResult<T>(method: string, schema: SafeParser<unknown>, value: T): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return value;
  const message = `the ${method} handler returned an invalid result: ${describeIssues(parsed.error.issues)}`;
  stderrLogger.error({}, message);
  throw new InternalError(message, issueData(parsed.error.issues));
}
