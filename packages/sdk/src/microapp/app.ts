/**
 * Microapp: a microapp's whole side of the contract over stdio.
 *
 *   const app = new Microapp({ id: "notes", version: "0.1.0" });
 *   app.tool({ name: "notes_add", inputSchema: {...}, handler: async (args, ctx) => ({ saved: true }) });
 *   app.hook("before_message", (params) => ({ vote: "allow" }));
 *   app.on("agents/updated", ({ agent_ids }) => { ... });
 *   await app.run();
 *
 * Tools, hooks and their names are checked where they are defined (MicroappDefinitionError);
 * `run()` serves the daemon — initialize, tools/list, tools/call, hooks/<name>, notifications,
 * shutdown — while `app.admin` and `app.dispatch` call it. Methods this SDK does not know are
 * answered -32601, as the contract asks for forward compatibility.
 *
 * Stopping (a `shutdown` request, stdin EOF, SIGTERM/SIGINT) follows ../lifecycle.ts: new work
 * refused, in-flight handlers drained and `onShutdown` run within `shutdownDrainTimeoutMs` each,
 * `{ok: true}` written, then the process exits (`exitOnStop`).
 */

import {
  ConnectionClosedError,
  type Disposer,
  JsonRpcPeer,
  type ParamsOf,
  type RequestOptions,
} from "@nexo/wire";
import { admin, microapp } from "@nexo/wire/schemas";
import { v7 as uuidv7 } from "uuid";
import { PeerLink } from "../host-link.js";
import { InflightTasks } from "../inflight.js";
import { ChildLifecycle, positiveInteger } from "../lifecycle.js";
import { microappLog } from "../log.js";
import { createFrameOutput, installStdoutGuard } from "../stdout-guard.js";
import { MAX_FRAME_BYTES } from "../wire.js";
import {
  type AdminClient,
  createOutboundCalls,
  type Dispatch,
  type DispatchParams,
  type DispatchResult,
} from "./admin-client.js";
import {
  checkExtensionId,
  checkHook,
  checkToolSpec,
  type HookHandler,
  type ToolSpec,
} from "./definitions.js";
import { MicroappDefinitionError } from "./errors.js";
import { log, type MicroappLogger } from "./log.js";
import {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_MICROAPP_DRAIN_TIMEOUT_MS,
  type MicroappInit,
  type MicroappOptions,
} from "./options.js";
import { type ServeState, serveDaemonRequests } from "./serve.js";

type NotificationTable = typeof microapp.microappNotifications;
export type MicroappNotification = keyof NotificationTable;
/** A notification's params, checked against its schema. */
export type NotificationParams<M extends MicroappNotification> = ParamsOf<NotificationTable, M>;
export type NotificationHandler<M extends MicroappNotification> = (
  params: NotificationParams<M>,
) => void | Promise<void>;

export class Microapp<Config = unknown> {
  /** The extension id every tool name starts with. */
  readonly id: string;
  /** Every `nexo/admin/*` method, typed from the method table: `app.admin.agents.list()`. */
  readonly admin: AdminClient;
  /** Lines on stderr prefixed [INFO] / [WARN] / [ERROR]. */
  readonly log: MicroappLogger = log;

  private readonly options: MicroappOptions<Config>;
  private readonly link = new PeerLink("the microapp");
  private readonly send: Dispatch;
  private readonly tools = new Map<string, ToolSpec<never>>();
  private readonly hooks = new Map<string, HookHandler>();
  private readonly listeners = new Map<MicroappNotification, Set<(params: never) => unknown>>();
  private readonly tasks = new InflightTasks();
  private readonly lifecycle: ChildLifecycle;
  private readonly drainTimeoutMs: number;
  private state: ServeState<Config> | undefined;
  private started = false;

  constructor(options: MicroappOptions<Config>) {
    if (options === null || typeof options !== "object") {
      throw new MicroappDefinitionError("new Microapp needs an options object with at least `id`");
    }
    checkExtensionId(options.id);
    this.options = options;
    this.id = options.id;
    this.drainTimeoutMs = positiveInteger(
      "shutdownDrainTimeoutMs",
      options.shutdownDrainTimeoutMs,
      DEFAULT_MICROAPP_DRAIN_TIMEOUT_MS,
    );
    const outbound = createOutboundCalls(this.link);
    this.admin = outbound.admin;
    this.send = outbound.dispatch;
    this.lifecycle = new ChildLifecycle({
      kind: "microapp",
      tasks: this.tasks,
      drainTimeoutMs: this.drainTimeoutMs,
      log: microappLog,
      onShutdown: options.onShutdown,
      // Calls to the daemon made by draining handlers are still answered; nothing to fail early.
      abandonOwnCalls: () => {},
    });
    if (options.enableStdoutGuard !== false) installStdoutGuard();
  }

  /** Defines a tool. Its name must be `<id>_<tool>`; throws MicroappDefinitionError otherwise. */
  tool<Args = Record<string, unknown>>(spec: ToolSpec<Args>): this {
    this.beforeRun("tools");
    checkToolSpec(this.id, spec as ToolSpec<never>, new Set(this.tools.keys()));
    this.tools.set(spec.name, spec as ToolSpec<never>);
    return this;
  }

  /** Registers a hook, announced in the `initialize` reply and served as `hooks/<name>`. */
  hook(name: string, handler: HookHandler): this {
    this.beforeRun("hooks");
    checkHook(name, handler, new Set(this.hooks.keys()));
    this.hooks.set(name, handler);
    return this;
  }

  /**
   * Listens to a daemon notification, its params checked against the schema (bad ones are
   * dropped and logged). The `nexo/notify/*` ones arrive only when the matching capability is
   * granted. Returns the function that stops listening.
   */
  on<M extends MicroappNotification>(method: M, handler: NotificationHandler<M>): Disposer {
    if (!Object.hasOwn(microapp.microappNotifications, method)) {
      throw new MicroappDefinitionError(
        `unknown notification ${JSON.stringify(method)}; known: ${Object.keys(microapp.microappNotifications).join(", ")}`,
      );
    }
    if (typeof handler !== "function")
      throw new MicroappDefinitionError(`${method}: handler must be a function`);
    let set = this.listeners.get(method);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(method, set);
      this.state?.listen(method);
    }
    const entry = handler as (params: never) => unknown;
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  }

  /** Sends a message through a channel plugin (`nexo/dispatch`, capability dispatch_outbound). */
  dispatch(params: DispatchParams, options?: RequestOptions): Promise<DispatchResult> {
    return this.send(params, options);
  }

  /** What `initialize` said, once it has been answered. */
  get initialized(): MicroappInit<Config> | undefined {
    return this.state?.init;
  }

  /**
   * Serves the daemon until shutdown, stdin EOF or a signal; then exits the process (or, with
   * `exitOnStop: false`, resolves). Once only.
   */
  async run(): Promise<void> {
    if (this.started) throw new MicroappDefinitionError("Microapp.run() already invoked");
    this.started = true;
    const { options } = this;
    const output = createFrameOutput();
    const peer = JsonRpcPeer.overStreams({
      input: process.stdin,
      output,
      name: `microapp:${this.id}`,
      ids: () => `${admin.ADMIN_ID_PREFIX}${uuidv7()}`,
      requestTimeoutMs: positiveInteger("callTimeoutMs", options.callTimeoutMs, DEFAULT_CALL_TIMEOUT_MS),
      maxFrameBytes: positiveInteger("maxFrameBytes", options.maxFrameBytes, MAX_FRAME_BYTES),
      maxOutgoingFrameBytes: positiveInteger(
        "maxOutgoingFrameBytes",
        options.maxOutgoingFrameBytes,
        MAX_FRAME_BYTES,
      ),
      strictJson: true,
      malformed: "ignore",
      // Every error this side receives answers its own admin / dispatch call.
      errorProtocol: "admin",
      logger: microappLog,
      endOutputOnClose: false,
      // As the plugin SDK: replies finished in one tick leave in one write, at most 8 per write
      // (docs/performance.md, plugin tool.invoke and microapp tools/call).
      coalesce: true,
      coalesceMaxFrames: 8,
    });
    this.link.peer = peer;
    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });

    this.state = serveDaemonRequests({
      peer,
      id: this.id,
      version: options.version,
      configCheck: options.config,
      onInitialize: options.onInitialize,
      tools: this.tools,
      hooks: this.hooks,
      listeners: this.listeners,
      tasks: this.tasks,
      lifecycle: this.lifecycle,
      admin: this.admin,
      log: this.log,
      onShutdownAcknowledged: (stop) => this.lifecycle.closeAfterReply(peer, output, stop),
      finish: () => finish(),
    });

    await this.lifecycle.serveUntilDone(peer, done, finish, {
      handleSignals: options.handleProcessSignals !== false,
      closedError: (reason) => new ConnectionClosedError(`daemon connection closed: ${reason}`),
    });
    if (options.exitOnStop !== false) process.exit(0);
  }

  private beforeRun(what: string): void {
    if (this.started) {
      throw new MicroappDefinitionError(
        `${what} are defined before run(): the daemon reads the catalogue once and expects it unchanged`,
      );
    }
  }
}
