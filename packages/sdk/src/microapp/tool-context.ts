/**
 * The context a microapp tool handler receives with its arguments, built once per `tools/call`.
 *
 * A class, not an object literal with a `signal` getter: V8 builds each such literal through its
 * runtime as a dictionary-mode object, which the tools/call profile showed among the SDK's largest
 * costs per call (docs/performance.md, microapp tools/call). As in the plugin SDK's ToolContext,
 * the signal is still made only when a handler reads it (the task's AbortController), through an
 * own enumerable accessor defined with one shared descriptor, so the objects keep one fast shape
 * and a handler that spreads its context (`{ ...ctx, extra }`) still passes the signal on. The
 * fields keep the literal's order (`Object.keys(ctx)` reads the same).
 */
import type { microapp } from "@nexo/wire/schemas";
import type { TaskHandle } from "../inflight.js";
import { signalAccessor } from "../signal-accessor.js";
import type { AdminClient } from "./admin-client.js";
import type { ToolContext } from "./definitions.js";
import type { MicroappLogger } from "./log.js";

export class ToolCallContext implements ToolContext {
  readonly tool: string;
  readonly binding: microapp.MicroappBindingContext;
  readonly inbound: microapp.MicroappInboundRef | undefined;
  readonly admin: AdminClient;
  readonly log: MicroappLogger;
  declare readonly signal: AbortSignal;
  readonly #task: TaskHandle;

  constructor(
    params: microapp.MicroappToolCallParams,
    admin: AdminClient,
    log: MicroappLogger,
    task: TaskHandle,
  ) {
    this.tool = params.tool;
    this.binding = params.binding_context;
    this.inbound = params.inbound;
    this.admin = admin;
    this.log = log;
    this.#task = task;
    Object.defineProperty(this, "signal", SIGNAL);
  }

  static signalOf(context: ToolCallContext): AbortSignal {
    return context.#task.signal;
  }
}

const SIGNAL = signalAccessor(ToolCallContext.signalOf);
