/**
 * Serving what the daemon sends a microapp, over the wire's method tables: `initialize`,
 * `tools/list`, `tools/call`, `hooks/<name>` and the notifications, each request's params checked
 * by the Dispatcher (-32602 naming the field) before a handler runs. Handlers run as tracked tasks
 * so shutdown can drain them.
 *
 * A tool's outcome maps onto the contract's two kinds of failure: `ToolFailure` is the tool's own
 * failure (`{error}` result, the agent reads it), and so is a call to the daemon that failed and
 * was not caught (a refused capability, a timeout: the agent reads which); an RpcError the handler
 * threw keeps its code; anything else is a bug in the microapp: -32099 with the message, the stack
 * on stderr.
 */
import { mkdir } from "node:fs/promises";
import {
  Dispatcher,
  formatIssues,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  isThenable,
  type JsonRpcPeer,
  MicroappInternalError,
  RpcError,
} from "@nexo/wire";
import { microapp } from "@nexo/wire/schemas";
import type { InflightTasks } from "../inflight.js";
import { AbandonedError, type ChildLifecycle } from "../lifecycle.js";
import { microappLog } from "../log.js";
import { type AdminClient, callFailureText } from "./admin-client.js";
import { type HookHandler, type ToolSpec, toolDefinition } from "./definitions.js";
import { ToolFailure } from "./errors.js";
import type { MicroappLogger } from "./log.js";
import type { MicroappInit, SafeParser } from "./options.js";
import { ToolCallContext } from "./tool-context.js";

type NotificationName = keyof typeof microapp.microappNotifications;

export interface ServeEnv<Config> {
  peer: JsonRpcPeer;
  id: string;
  version: string | undefined;
  configCheck: SafeParser<Config> | undefined;
  onInitialize: ((init: MicroappInit<Config>) => unknown) | undefined;
  tools: ReadonlyMap<string, ToolSpec<never>>;
  hooks: ReadonlyMap<string, HookHandler>;
  listeners: ReadonlyMap<NotificationName, ReadonlySet<(params: never) => unknown>>;
  tasks: InflightTasks;
  lifecycle: ChildLifecycle;
  admin: AdminClient;
  log: MicroappLogger;
  /** The `shutdown` reply is on its way: close the connection once written, then call `stop`. */
  onShutdownAcknowledged(stop: () => void): void;
  finish(): void;
}

export interface ServeState<Config> {
  readonly init: MicroappInit<Config> | undefined;
  /** Starts delivering `method` to its listeners (for a first listener added after run()). */
  listen(method: NotificationName): void;
}

export function serveDaemonRequests<Config>(env: ServeEnv<Config>): ServeState<Config> {
  const { peer, tasks, lifecycle } = env;
  const catalogue = [...env.tools.values()].map(toolDefinition);
  const reply: microapp.MicroappInitializeResult = { tools: catalogue };
  if (env.version !== undefined) reply.version = env.version;
  if (env.hooks.size > 0) reply.hooks = [...env.hooks.keys()];

  let init: MicroappInit<Config> | undefined;
  let initializing = false;
  const refuseWhenStopping = (method: string) => {
    if (lifecycle.stopping) throw new InternalError(`the microapp is shutting down; ${method} refused`);
  };

  const requests = new Dispatcher(peer, { requests: microapp.microappMethods });
  requests.handle("initialize", async (params) => {
    refuseWhenStopping("initialize");
    if (init !== undefined || initializing) throw new InvalidRequestError("initialize was already received");
    initializing = true;
    try {
      // Tracked like every handler, so a shutdown right behind it still lets its answer out.
      init = await tasks.run("initialize", () => initialize(env, params));
      return reply;
    } finally {
      initializing = false;
    }
  });

  // The same array every time, so the daemon's tool-cache prefix sees identical bytes.
  requests.handle("tools/list", () => ({ tools: catalogue }));

  requests.handle("tools/call", (params) => {
    refuseWhenStopping("tools/call");
    if (init === undefined) throw new InvalidRequestError("tools/call before initialize");
    const tool = env.tools.get(params.tool);
    if (tool === undefined) {
      throw new InvalidParamsError(
        `unknown tool ${JSON.stringify(params.tool)}; this microapp has: ${[...env.tools.keys()].join(", ") || "no tools"}`,
      );
    }
    // Named only when a log line or shutdown needs it, as in the plugin SDK.
    const label = () => `tools/call ${params.tool}`;
    // A handler that answers synchronously is answered synchronously: the reply is written in the
    // callback that read the request, with no promise between (docs/performance.md). The outcome
    // is mapped inside the task, so an abandoned call still rejects with the abandonment itself.
    return tasks.call(label, (task) => {
      let output: unknown;
      try {
        output = tool.handler(params.args as never, new ToolCallContext(params, env.admin, env.log, task));
      } catch (error) {
        return toolFailure(label, error);
      }
      return isThenable(output)
        ? Promise.resolve(output).then(toolResult, (error: unknown) => toolFailure(label, error))
        : toolResult(output);
    });
  });

  // Shutdown params are not checked: nothing in them may stop a microapp from shutting down.
  peer.onRequest("shutdown", async () => {
    await lifecycle.stop("shutdown requested");
    env.onShutdownAcknowledged(env.finish);
    return { ok: true };
  });

  serveHooks(env, refuseWhenStopping);

  const notifications = new Dispatcher(peer, { notifications: microapp.microappNotifications });
  const listening = new Set<NotificationName>();
  const listen = (method: NotificationName) => {
    if (listening.has(method)) return;
    listening.add(method);
    notifications.on(method, (params) => {
      if (lifecycle.stopping) {
        microappLog.warning(`${method} during shutdown dropped`);
        return;
      }
      for (const listener of env.listeners.get(method) ?? []) {
        tasks
          .run(method, () => listener(params as never))
          .catch((error: unknown) => {
            if (!(error instanceof AbandonedError)) microappLog.failure(`${method} listener`, error);
          });
      }
    });
  };
  for (const method of env.listeners.keys()) listen(method);

  return {
    get init() {
      return init;
    },
    listen,
  };
}

async function initialize<Config>(
  env: ServeEnv<Config>,
  params: microapp.MicroappInitializeParams,
): Promise<MicroappInit<Config>> {
  if (params.extension_id !== env.id) {
    throw new InvalidParamsError(
      `this microapp is "${env.id}" (its tools are named ${env.id}_*) but the daemon started it as "${params.extension_id}": the extensions.yaml key must be the microapp's id`,
    );
  }
  let config = params.config as Config;
  if (env.configCheck !== undefined) {
    const checked = env.configCheck.safeParse(params.config);
    if (!checked.success) {
      throw new InvalidParamsError(
        `invalid config for ${env.id}: ${formatIssues(checked.error.issues, "(config)")}`,
      );
    }
    config = checked.data;
  }
  await mkdir(params.state_dir, { recursive: true });
  const init: MicroappInit<Config> = { extensionId: params.extension_id, stateDir: params.state_dir, config };
  if (env.onInitialize !== undefined) {
    try {
      await env.onInitialize(init);
    } catch (error) {
      throw asReplyError("onInitialize", error);
    }
  }
  return init;
}

function serveHooks<Config>(env: ServeEnv<Config>, refuseWhenStopping: (method: string) => void): void {
  if (env.hooks.size === 0) return;
  const table = Object.fromEntries(
    [...env.hooks.keys()].map((name) => [microapp.hookMethodName(name), microapp.microappHookMethod]),
  );
  const dispatcher = new Dispatcher(env.peer, { requests: table });
  for (const [name, handler] of env.hooks) {
    const method = microapp.hookMethodName(name);
    dispatcher.handle(method, (params) => {
      refuseWhenStopping(method);
      return env.tasks.run(method, async (task) => {
        let decision: unknown;
        try {
          decision = await handler(params, {
            hook: name,
            admin: env.admin,
            log: env.log,
            get signal() {
              return task.signal;
            },
          });
        } catch (error) {
          throw asReplyError(method, error);
        }
        if (decision === undefined) return { vote: "abstain" };
        const checked = microapp.MicroappHookDecisionSchema.safeParse(decision);
        if (checked.success) return decision as microapp.MicroappHookDecision;
        const message = `hook ${name} returned an invalid decision: ${formatIssues(checked.error.issues, "(decision)")}`;
        microappLog.warning(message);
        throw new MicroappInternalError(message);
      });
    });
  }
}

/** A tool handler's value as the `tools/call` result; `undefined` is sent as `null`. */
function toolResult(output: unknown): microapp.MicroappToolCallResult {
  return { output: output === undefined ? null : output };
}

/**
 * What a tool handler threw: `ToolFailure` and a call to the daemon that failed and was not caught
 * are the tool's `{error}` (the agent reads why); anything else is the error reply.
 */
function toolFailure(label: () => string, error: unknown): microapp.MicroappToolCallResult {
  if (error instanceof ToolFailure) return { error: error.message || error.name };
  const failedCall = callFailureText(error);
  if (failedCall !== undefined) return { error: failedCall };
  throw asReplyError(label(), error);
}

/**
 * What a handler threw, as the error reply: typed errors keep their code; a failed call to the
 * daemon and bugs become -32099 (a received code means something else on this side's replies).
 */
function asReplyError(what: string, error: unknown): RpcError {
  const failedCall = callFailureText(error);
  if (failedCall !== undefined) return new MicroappInternalError(`${what} failed: ${failedCall}`);
  if (error instanceof RpcError) return error;
  microappLog.failure(what, error);
  const message = error instanceof Error ? error.message || error.name : String(error);
  return new MicroappInternalError(`${what} failed: ${message}`);
}
