/**
 * How every host → child request is served. The wire's Dispatcher checks the params against the
 * contract's method table (-32602 naming the fields) and the result against its schema (-32603: a
 * result that breaks the contract is the plugin's bug; logged, never sent for the host to choke
 * on). Around the handler this file adds what is the SDK's own: refuse work once shutdown has
 * begun, run the handler as a tracked task, and turn what it throws into the reply's error. Typed
 * errors (anything carrying a JSON-RPC code) keep their code; the fallback for other exceptions is
 * the method's to choose (-33403 for tools, as upstream; -32603 elsewhere).
 */
import {
  type Dispatcher,
  formatIssues,
  InternalError,
  isThenable,
  type JsonRpcPeer,
  type ParamsOf,
  type RequestContext,
  type ResultIn,
  type SchemaFailure,
  RpcError as WireRpcError,
} from "@nexo/wire";
import type { plugin } from "@nexo/wire/schemas";
import type { BrokerSender } from "./broker.js";
import { PluginError } from "./errors.js";
import type { InflightTasks, TaskHandle } from "./inflight.js";
import { AbandonedError } from "./lifecycle.js";
import { logHandlerFailure, stderrLogger } from "./log.js";
import type { HandlerContext } from "./options.js";

type Methods = typeof plugin.pluginMethods;
type MethodName = plugin.PluginMethodName;

export interface DispatchEnv {
  readonly peer: JsonRpcPeer;
  readonly dispatcher: Dispatcher<Methods>;
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

export interface ServeSpec<M extends MethodName> {
  method: M;
  /** Names the call in logs (what shutdown abandoned, which handler threw). */
  label(params: ParamsOf<Methods, M>): string;
  handle(
    params: ParamsOf<Methods, M>,
    task: TaskHandle,
    rpc: RequestContext,
  ): ResultIn<Methods, M> | Promise<ResultIn<Methods, M>>;
  /** The reply error for an exception without a JSON-RPC code. Default: -32603. */
  fallbackError?(message: string): WireRpcError;
}

/** A handler's result that breaks the contract is logged where the plugin's author looks: stderr. */
export function logSchemaFailure(failure: SchemaFailure): void {
  if (failure.part !== "result") return;
  stderrLogger.error(
    {},
    `the ${failure.method} handler returned an invalid result: ${formatIssues(failure.issues, "(result)")}`,
  );
}

export function serve<M extends MethodName>(env: DispatchEnv, spec: ServeSpec<M>): void {
  const fallback = spec.fallbackError ?? ((message: string) => new InternalError(message));
  const toError = (error: unknown): WireRpcError => {
    if (error instanceof WireRpcError) return error;
    return fallback(error instanceof Error ? error.message || error.name : String(error));
  };

  const failed = (error: unknown, params: ParamsOf<Methods, M>): never => {
    if (!(error instanceof WireRpcError) && !(error instanceof AbandonedError))
      logHandlerFailure(spec.label(params), error);
    throw toError(error);
  };

  env.dispatcher.handle(spec.method, (params, rpc) => {
    if (env.isStopping()) throw toError(new ShuttingDownError());
    // Named only when a log line or shutdown needs it: building the name per call was hot-path work.
    const label = () => spec.label(params);
    // A handler that answers synchronously is answered synchronously: the peer writes the reply in
    // the callback that read the request, without a promise per layer (docs/performance.md).
    let outcome: ResultIn<Methods, M> | Promise<ResultIn<Methods, M>>;
    try {
      outcome = env.tasks.call(label, (task) => spec.handle(params, task, rpc));
    } catch (error) {
      return failed(error, params);
    }
    return isThenable(outcome) ? outcome.catch((error: unknown) => failed(error, params)) : outcome;
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
