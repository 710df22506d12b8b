/**
 * `nexo chat`'s side of the AppServer protocol: one connection, one current thread, one turn at a
 * time. The chat is an ordinary AppServer client — it speaks the same methods DotCraft's clients do
 * over whatever transport launch.ts opened — so what the terminal shows is exactly what any other
 * client of nexo would get, and the chat needs nothing from nexo's internals.
 *
 * Events of the running turn go to a `ChatView`; approval requests are answered through it.
 */
import { Caller, Dispatcher, JsonRpcPeer, type MessageTransport } from "@nexo/wire";
import {
  type ApprovalDecision,
  type ApprovalRequestParams,
  appServerMethods,
  appServerNotifications,
  appServerServerRequests,
  type Item,
  modelMethods,
  type Turn,
} from "@nexo/wire/schemas/appserver";
import { NEXO_VERSION } from "../version.js";

/** What the terminal (or a test) does with a turn's events. */
export interface ChatView {
  agentDelta(text: string): void;
  reasoningDelta(text: string): void;
  commandOutput(text: string): void;
  itemStarted(item: Item): void;
  itemCompleted(item: Item): void;
  /** Asks the person; resolves with their decision. */
  approve(request: ApprovalRequestParams): Promise<ApprovalDecision>;
}

export type TurnOutcome =
  | { status: "completed"; turn: Turn }
  | { status: "failed"; turn: Turn; error: string }
  | { status: "cancelled"; turn: Turn; reason: string };

export interface ThreadInfo {
  id: string;
  model: string | undefined;
}

/** Any event of another thread (a second client's) is ignored: the chat shows its own thread. */
export class ChatClient {
  private readonly peer: JsonRpcPeer;
  private readonly caller: Caller<typeof appServerMethods>;
  private readonly models: Caller<typeof modelMethods>;
  private thread: ThreadInfo | undefined;
  private running: { turnId: string | undefined; settle: (outcome: TurnOutcome) => void } | undefined;
  /** Terminal events that came before turn/start's reply told us the turn id. */
  private early: TurnOutcome[] = [];

  constructor(
    transport: MessageTransport,
    private readonly view: ChatView,
    private readonly workspace: string,
  ) {
    // Turns can wait on a person for minutes, and a first model call can be slow: no timeout on
    // requests, the connection's close is what ends a wait.
    this.peer = new JsonRpcPeer({ transport, name: "chat", requestTimeoutMs: 0 });
    this.caller = new Caller(this.peer, { requests: appServerMethods });
    this.models = new Caller(this.peer, { requests: modelMethods });
    const dispatch = new Dispatcher(this.peer, {
      requests: appServerServerRequests,
      notifications: appServerNotifications,
    });
    const mine = (threadId: string): boolean => threadId === this.thread?.id;
    /** Passes a thread event to the view when it is this chat's thread. */
    const shown =
      <P extends { threadId: string }>(show: (params: P) => void) =>
      (params: P): void => {
        if (mine(params.threadId)) show(params);
      };
    dispatch.handle("item/approval/request", async (params) => ({
      decision: mine(params.threadId) ? await this.view.approve(params) : "decline",
    }));
    dispatch.handle("item/tool/call", () => ({
      success: false,
      errorMessage: "the chat has no client tools",
    }));
    dispatch.on(
      "item/agentMessage/delta",
      shown((p) => this.view.agentDelta(p.delta)),
    );
    dispatch.on(
      "item/reasoning/delta",
      shown((p) => this.view.reasoningDelta(p.delta)),
    );
    dispatch.on(
      "item/commandExecution/outputDelta",
      shown((p) => this.view.commandOutput(p.delta)),
    );
    dispatch.on(
      "item/started",
      shown((p) => this.view.itemStarted(p.item)),
    );
    dispatch.on(
      "item/completed",
      shown((p) => this.view.itemCompleted(p.item)),
    );
    dispatch.on("turn/completed", ({ turn }) => this.finish({ status: "completed", turn }));
    dispatch.on("turn/failed", ({ turn, error }) => this.finish({ status: "failed", turn, error }));
    dispatch.on("turn/cancelled", ({ turn, reason }) => this.finish({ status: "cancelled", turn, reason }));
  }

  /** Resolves when the connection is gone, with the reason. */
  get closed(): Promise<string> {
    return this.peer.closed.then((info) => info.reason ?? "the connection closed");
  }

  get currentThread(): ThreadInfo | undefined {
    return this.thread;
  }

  get turnRunning(): boolean {
    return this.running !== undefined;
  }

  async initialize(): Promise<{ serverName: string; serverVersion: string }> {
    const result = await this.caller.request("initialize", {
      clientInfo: { name: "nexo-chat", title: "nexo chat", version: NEXO_VERSION },
      capabilities: { approvalSupport: true, streamingSupport: true, commandExecutionStreaming: true },
    });
    await this.peer.notify("initialized", {});
    return { serverName: result.serverInfo.name, serverVersion: result.serverInfo.version };
  }

  /** A new thread: the chat's `/new`. */
  async newThread(model?: string): Promise<ThreadInfo> {
    const { thread } = await this.caller.request("thread/start", {
      identity: { channelName: "cli", userId: "local", workspacePath: this.workspace },
      displayName: "nexo chat",
      ...(model === undefined ? {} : { config: { model } }),
    });
    this.thread = { id: thread.id, model: thread.configuration?.model ?? model };
    return this.thread;
  }

  /** Continues a stored thread (`--resume ID`). */
  async resumeThread(threadId: string): Promise<ThreadInfo> {
    const { thread } = await this.caller.request("thread/resume", { threadId });
    this.thread = { id: thread.id, model: thread.configuration?.model };
    return this.thread;
  }

  /** The models the server's configuration names, or undefined when it offers no model catalogue. */
  async offeredModels(): Promise<string[] | undefined> {
    try {
      const result = await this.models.request("model/list", {});
      if (result.success === false) return undefined;
      return (result.models ?? []).map((m) => m.id);
    } catch {
      return undefined;
    }
  }

  async setModel(model: string): Promise<void> {
    const threadId = this.requireThread();
    await this.caller.request("thread/config/update", { threadId, config: { model } });
    if (this.thread) this.thread.model = model;
  }

  /** Runs one turn to its end: completed, failed or cancelled. */
  async turn(text: string): Promise<TurnOutcome> {
    const threadId = this.requireThread();
    if (this.running) throw new Error("a turn is already running");
    this.early = [];
    const outcome = new Promise<TurnOutcome>((settle) => {
      this.running = { turnId: undefined, settle };
    });
    try {
      const { turn } = await this.caller.request("turn/start", {
        threadId,
        input: [{ type: "text", text }],
      });
      const running = this.running as { turnId: string | undefined } | undefined;
      if (running) running.turnId = turn.id;
      const ended = this.early.find((o) => o.turn.id === turn.id);
      if (ended) this.finish(ended);
    } catch (error) {
      this.running = undefined;
      throw error;
    }
    return outcome;
  }

  /** Ctrl-C during a turn: asks the server to stop it; the turn then ends as cancelled. */
  async interrupt(): Promise<void> {
    const threadId = this.thread?.id;
    const turnId = this.running?.turnId;
    if (threadId === undefined || turnId === undefined) return;
    await this.caller.request("turn/interrupt", { threadId, turnId });
  }

  close(): void {
    this.peer.close("the chat ended");
  }

  private finish(outcome: TurnOutcome): void {
    if (outcome.turn.threadId !== this.thread?.id) return;
    const running = this.running;
    if (running === undefined) return;
    // turn/start's reply may come after a very short turn has already ended.
    if (running.turnId === undefined) {
      this.early.push(outcome);
      return;
    }
    if (running.turnId !== outcome.turn.id) return;
    this.running = undefined;
    running.settle(outcome);
  }

  private requireThread(): string {
    if (this.thread === undefined) throw new Error("no thread: start or resume one first");
    return this.thread.id;
  }
}
