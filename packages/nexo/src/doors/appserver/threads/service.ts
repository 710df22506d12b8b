/**
 * Threads as the AppServer's methods see them, over the one session store: create, find, list,
 * read (rebuilt from the transcript, without loading the agent), change status, rename, roll back,
 * configure — and the live threads that run turns (live-thread.ts), loaded on first use.
 *
 * Records are the engine's sessions (engine/sessions/): a thread is created, listed and opened
 * through the session service, which also keeps its approval grants; what is kept here is the
 * AppServer's own state of a thread (status, history mode, configuration, turn outcomes).
 *
 * The store and the engine are opened lazily (`openStore`, `openSession`), so answering
 * `initialize` never waits for a database or an engine.
 */
import { randomUUID } from "node:crypto";
import type {
  InputPart,
  SessionIdentity,
  Thread,
  ThreadConfiguration,
  ThreadRuntime,
  ThreadStatus,
  ThreadSummary,
} from "@nexo/wire/schemas/appserver";
import type { AgentSession } from "../../../engine/session.js";
import type { ToolHost } from "../../../engine/session-types.js";
import type { SessionService } from "../../../engine/sessions/service.js";
import type { LlmProvider, SubAgentHomes } from "../../../engine/types.js";
import { isoTime } from "../../../iso-time.js";
import type { Logger } from "../../../log.js";
import type { Session, Store } from "../../../store/index.js";
import type { ConnectedAdapter } from "../channel-adapters.js";
import type { AppServerConnection } from "../connection.js";
import { appServerErrors } from "../errors.js";
import { countTurns, rebuildTurns, startsTurn } from "./history.js";
import { materialize } from "./input.js";
import { LiveThread } from "./live-thread.js";
import type { Emit } from "./projection.js";
import {
  type ListFilter,
  listedBy,
  type SubAgentLink,
  type ThreadState,
  threadState,
  toWireSummary,
  toWireThread,
  withThreadState,
  workspaceOf,
} from "./records.js";

export interface OpenSessionRequest {
  record: Session;
  workspace: string;
  /** The engine's session service over the thread store: `open` builds the engine session. */
  sessions: SessionService;
  configuration: ThreadConfiguration | undefined;
  /** Tools that come and go while the thread lives (its channel adapter's): pass as `toolLayers`. */
  toolLayers: ToolHost[];
}

export interface ThreadServiceOptions {
  /** The host's workspace: threads without one work here. */
  workspace: string;
  /** Every thread works in `workspace` whatever its record names (AppServerHostOptions.workspacePinned). */
  workspacePinned?: boolean | undefined;
  logger: Logger;
  /** The agent id threads are filed under. Default "default" (as `nexo agent`). */
  agentId?: string;
  approvalTimeoutMs: number;
  openStore: () => Promise<Store>;
  /** Whether shutdown closes the store (false when it is borrowed, e.g. the daemon's). Default true. */
  closeStore?: boolean;
  /** Builds the engine session of a thread (provider, tools, persistence, approval policy). */
  openSession: (request: OpenSessionRequest) => Promise<AgentSession>;
  /** Applies a thread's configuration (mode, model, approval policy) to its loaded session. */
  configure: (session: AgentSession, configuration: ThreadConfiguration | undefined) => void;
  /** Where `thread/runtimeChanged` goes (every connection). */
  onRuntimeChanged: (threadId: string, runtime: ThreadRuntime) => void;
  /**
   * A sub-agent of a thread's turn got a child thread: `send` reaches that turn's audience (its
   * starter and the thread's subscribers); the rest is for every connection.
   */
  onChildThread?: (parentThreadId: string, child: Thread, send: Emit) => void;
  /** The channel adapter connected for a channel now (its tools are offered to that channel's threads). */
  adapterFor?: (channel: string) => ConnectedAdapter | undefined;
}

const NO_CONNECTIONS: ReadonlySet<AppServerConnection> = new Set();

/** The model that answers: a provider and the model id to ask it for. */
export interface ThreadModel {
  provider: LlmProvider;
  model: string;
}

/** How many threads thread/list looks at, newest first. */
const LIST_LIMIT = 1000;

export class ThreadService {
  readonly agentId: string;
  private sessions: Promise<SessionService> | undefined;
  private readonly live = new Map<string, Promise<LiveThread>>();
  private readonly subscriptions = new Map<string, Set<AppServerConnection>>();

  constructor(private readonly options: ThreadServiceOptions) {
    this.agentId = options.agentId ?? "default";
  }

  get workspace(): string {
    return this.options.workspace;
  }

  private db(): Promise<SessionService> {
    if (!this.sessions) {
      // The engine is loaded with the store, on first use, so `initialize` never waits for it.
      const opening = Promise.all([
        this.options.openStore(),
        import("../../../engine/sessions/service.js"),
      ]).then(([store, { SessionService }]) => new SessionService(store));
      this.sessions = opening;
      // A failure (an unwritable state directory) is reported to the caller and retried next time.
      opening.catch(() => {
        if (this.sessions === opening) this.sessions = undefined;
      });
    }
    return this.sessions;
  }

  /** The thread's row; -32010 when there is none. */
  async record(threadId: string): Promise<Session> {
    const session = (await this.db()).get(threadId);
    if (!session) throw appServerErrors.threadNotFound(threadId);
    return session;
  }

  async create(options: {
    identity: SessionIdentity;
    config?: ThreadConfiguration;
    historyMode?: "server" | "client";
    displayName?: string;
  }): Promise<Thread> {
    const sessions = await this.db();
    const { identity } = options;
    const state: ThreadState = {
      status: "active",
      historyMode: options.historyMode ?? "server",
      ...(options.config ? { configuration: options.config } : {}),
    };
    const record = sessions.create({
      agentId: this.agentId,
      channel: identity.channelName,
      account: identity.userId || null,
      contact: identity.channelContext || null,
      title: options.displayName || null,
      metadata: { workspace: identity.workspacePath || this.options.workspace, appserver: state },
    });
    return toWireThread(record, this.options.workspace);
  }

  async list(filter: Omit<ListFilter, "hostWorkspace">): Promise<ThreadSummary[]> {
    const sessions = await this.db();
    const rows = sessions.list({ agentId: this.agentId, limit: LIST_LIMIT });
    const summaries: ThreadSummary[] = [];
    for (const row of rows) {
      if (!listedBy(row, { ...filter, hostWorkspace: this.options.workspace })) continue;
      const live = await this.peek(row.id);
      summaries.push(
        toWireSummary(
          row,
          this.options.workspace,
          countTurns(sessions.store.transcripts.entries(row.id)),
          live?.runtime,
        ),
      );
    }
    return summaries;
  }

  /** The thread as stored, with its turns if asked; the running turn is shown as it stands. */
  async read(threadId: string, includeTurns: boolean): Promise<Thread> {
    const { store } = await this.db();
    const record = await this.record(threadId);
    const live = await this.peek(threadId);
    let turns: Thread["turns"];
    if (includeTurns) {
      const state = threadState(record);
      turns = rebuildTurns(threadId, store.transcripts.entries(threadId), state.outcomes);
      const running = live?.runningTurn();
      if (running) {
        // The transcript holds the running turn's messages so far; the live view is fuller.
        turns = [...turns.filter((turn) => turn.id !== running.id), running];
      }
    }
    return toWireThread(record, this.options.workspace, {
      ...(live ? { runtime: live.runtime, queuedInputs: live.queuedInputs } : {}),
      ...(turns ? { turns } : {}),
    });
  }

  /** Subscribes `connection` to the thread's events (idempotent; ends when the connection closes). */
  async subscribe(threadId: string, connection: AppServerConnection): Promise<void> {
    await this.record(threadId);
    let set = this.subscriptions.get(threadId);
    if (!set) {
      set = new Set();
      this.subscriptions.set(threadId, set);
    }
    if (set.has(connection)) return;
    set.add(connection);
    connection.onClose(() => this.unsubscribe(threadId, connection));
    (await this.peek(threadId))?.offerPendingApprovals(connection);
  }

  unsubscribe(threadId: string, connection: AppServerConnection): void {
    const set = this.subscriptions.get(threadId);
    set?.delete(connection);
    if (set?.size === 0) this.subscriptions.delete(threadId);
  }

  isSubscribed(threadId: string, connection: AppServerConnection): boolean {
    return this.subscriptions.get(threadId)?.has(connection) ?? false;
  }

  /** The live thread, loading its agent (history included) on first use. */
  async open(threadId: string): Promise<LiveThread> {
    let live = this.live.get(threadId);
    if (!live) {
      live = this.load(threadId);
      this.live.set(threadId, live);
      live.catch(() => this.live.delete(threadId));
    }
    return live;
  }

  /** The live thread if it is loaded, without loading it. */
  private peek(threadId: string): Promise<LiveThread | undefined> {
    return this.live.get(threadId)?.catch(() => undefined) ?? Promise.resolve(undefined);
  }

  private async load(threadId: string): Promise<LiveThread> {
    const sessions = await this.db();
    const { store } = sessions;
    const record = await this.record(threadId);
    const entries = store.transcripts.entries(threadId);
    const workspace = workspaceOf(record, this.options.workspace);
    const configuration = threadState(record).configuration;
    let live: LiveThread | undefined;
    const toolLayers: ToolHost[] = [];
    const { adapterFor } = this.options;
    if (adapterFor !== undefined && record.channel !== null) {
      // Loaded with the first thread (the engine's tool registry), not at start-up.
      const { ChannelTools } = await import("./channel-tools.js");
      toolLayers.push(
        new ChannelTools({
          threadId,
          channel: record.channel,
          channelContext: record.contact ?? undefined,
          adapterFor,
          turn: () => live?.turnContext(),
          logger: this.options.logger,
        }),
      );
    }
    const session = await this.options.openSession({
      record,
      workspace,
      sessions,
      configuration,
      toolLayers,
    });
    this.options.configure(session, configuration);
    // Spawn sub-agents get child threads: sessions of this store linked to this thread.
    session.config.subAgents = (start) => this.createChild(store, start);
    live = new LiveThread({
      id: threadId,
      session,
      workspace,
      subscribers: () => this.subscriptions.get(threadId) ?? NO_CONNECTIONS,
      turnCount: countTurns(entries),
      logger: this.options.logger,
      approvalTimeoutMs: this.options.approvalTimeoutMs,
      configuration: () => {
        const row = store.sessions.get(threadId);
        return row ? threadState(row).configuration : undefined;
      },
      materialize: (parts: readonly InputPart[]) => materialize(parts, workspace),
      onRuntimeChanged: (runtime) => this.options.onRuntimeChanged(threadId, runtime),
      onSubAgent: (event, send) => {
        const row = store.sessions.get(event.sessionId);
        const link = row === undefined ? undefined : threadState(row).subAgent;
        if (row === undefined || link === undefined) return;
        this.options.onChildThread?.(link.parentThreadId, toWireThread(row, this.options.workspace), send);
      },
      onOutcome: (turnId, outcome) => {
        const row = store.sessions.get(threadId);
        if (!row) return;
        const outcomes = { ...threadState(row).outcomes, [turnId]: outcome };
        store.sessions.update(threadId, { metadata: withThreadState(row, { outcomes }) });
      },
    });
    return live;
  }

  /**
   * The model a request about `threadId` goes to: the thread's own (its session's provider, with
   * the thread's configuration applied). Without a thread, the model a new thread of this server
   * would get, read off an engine session built for a record that is never stored — nothing is
   * listed, persisted or left loaded.
   */
  async modelOf(threadId?: string): Promise<ThreadModel> {
    let session: AgentSession;
    if (threadId !== undefined) {
      session = (await this.open(threadId)).session;
    } else {
      const sessions = await this.db();
      const now = isoTime();
      const record: Session = {
        id: `ephemeral-${randomUUID()}`,
        agentId: this.agentId,
        tenantId: null,
        channel: null,
        account: null,
        contact: null,
        title: null,
        approvalMode: "default",
        alwaysAllow: [],
        readableFiles: [],
        metadata: {},
        createdAt: now,
        updatedAt: now,
      };
      session = await this.options.openSession({
        record,
        workspace: this.options.workspace,
        sessions,
        configuration: undefined,
        toolLayers: [],
      });
    }
    return { provider: session.config.provider, model: session.config.model };
  }

  /**
   * Titles of this server's most recently active threads in `workspace` (archived ones left out).
   * With the workspace pinned every thread works in it, whatever path its client named at start.
   */
  async recentTitles(workspace: string, limit: number): Promise<string[]> {
    const sessions = await this.db();
    const wanted = workspace.toLowerCase();
    const pinned = this.options.workspacePinned === true;
    const titles: string[] = [];
    for (const row of sessions.list({ agentId: this.agentId, limit: LIST_LIMIT })) {
      if (titles.length >= limit) break;
      if (row.title === null || row.title.trim() === "") continue;
      if (!pinned && workspaceOf(row, this.options.workspace).toLowerCase() !== wanted) continue;
      if (threadState(row).status === "archived") continue;
      titles.push(row.title.trim());
    }
    return titles;
  }

  /**
   * The child thread of a sub-agent about to start: a session of the store in the parent's place
   * (channel, user, context, workspace), titled by its task, linked to its parent, the turn and
   * call that spawn it and the root of the tree. Its transcript is written as the sub-agent runs.
   */
  private createChild(store: Store, start: Parameters<SubAgentHomes>[0]): string | undefined {
    const parent = store.sessions.get(start.parentSessionId);
    if (parent === undefined) return undefined;
    const parentLink = threadState(parent).subAgent;
    const nickname = start.description?.trim();
    const subAgent: SubAgentLink = {
      parentThreadId: parent.id,
      parentTurnId: start.turnId,
      spawnCallId: start.callId,
      rootThreadId: parentLink?.rootThreadId ?? parent.id,
      depth: start.depth,
      ...(nickname ? { agentNickname: nickname } : {}),
    };
    const state: ThreadState = { status: "active", historyMode: "server", subAgent };
    const child = store.sessions.create({
      parentId: parent.id,
      agentId: parent.agentId,
      tenantId: parent.tenantId,
      channel: parent.channel,
      account: parent.account,
      contact: parent.contact,
      title: (nickname || start.task.replace(/\s+/g, " ").trim()).slice(0, 80),
      metadata: { workspace: workspaceOf(parent, this.options.workspace), appserver: state },
    });
    return child.id;
  }

  /** The child threads of `parentThreadId` with their links, newest first; closed ones only when asked. */
  async children(
    parentThreadId: string,
    includeClosed: boolean,
  ): Promise<Array<{ thread: Thread; link: SubAgentLink }>> {
    const { store } = await this.db();
    await this.record(parentThreadId);
    const found: Array<{ thread: Thread; link: SubAgentLink }> = [];
    // By the store's parent index: every child, not only those among the newest threads.
    for (const row of store.sessions.children(parentThreadId)) {
      const link = threadState(row).subAgent;
      if (link?.parentThreadId !== parentThreadId) continue;
      if (link.closed && !includeClosed) continue;
      found.push({ thread: toWireThread(row, this.options.workspace), link });
    }
    return found;
  }

  /** Every thread below `threadId` in its sub-agent tree, children before their own children. */
  async descendants(threadId: string): Promise<string[]> {
    const all: string[] = [];
    const queue = [threadId];
    while (queue.length > 0) {
      const next = queue.shift()!;
      for (const { thread } of await this.children(next, true)) {
        all.push(thread.id);
        queue.push(thread.id);
      }
    }
    return all;
  }

  /**
   * Closes or reopens the edge from `parentThreadId` to its child (`subagent/close|resume`);
   * -32010 when the child is not that thread's child. Returns the link as it now stands.
   */
  async setChildClosed(
    parentThreadId: string,
    childThreadId: string,
    closed: boolean,
  ): Promise<SubAgentLink> {
    const { store } = await this.db();
    await this.record(parentThreadId);
    const child = store.sessions.get(childThreadId);
    const link = child === undefined ? undefined : threadState(child).subAgent;
    if (child === undefined || link === undefined || link.parentThreadId !== parentThreadId)
      throw appServerErrors.invalidParams(
        `thread '${childThreadId}' is not a sub-agent thread of '${parentThreadId}'`,
      );
    const updated: SubAgentLink = { ...link, closed };
    if (link.closed !== closed)
      store.sessions.update(childThreadId, { metadata: withThreadState(child, { subAgent: updated }) });
    if (closed) {
      const live = await this.peek(childThreadId);
      if (live?.running) live.interrupt(live.running.projector.turn.id, "the sub-agent thread was closed");
    }
    return updated;
  }

  /** Changes the thread's status; returns the previous one. */
  async setStatus(threadId: string, status: ThreadStatus): Promise<ThreadStatus> {
    const { store } = await this.db();
    const record = await this.record(threadId);
    const previous = threadState(record).status;
    if (status !== "active") {
      const live = await this.peek(threadId);
      const running = live?.running;
      if (live && running) live.interrupt(running.projector.turn.id, `the thread was ${status}`);
    }
    if (previous !== status)
      store.sessions.update(threadId, { metadata: withThreadState(record, { status }) });
    return previous;
  }

  async rename(threadId: string, displayName: string): Promise<void> {
    await this.record(threadId);
    (await this.db()).store.sessions.update(threadId, { title: displayName });
  }

  async configure(threadId: string, changes: ThreadConfiguration): Promise<void> {
    const { store } = await this.db();
    const record = await this.record(threadId);
    const configuration = { ...threadState(record).configuration, ...changes };
    store.sessions.update(threadId, { metadata: withThreadState(record, { configuration }) });
    const live = await this.peek(threadId);
    if (live) this.options.configure(live.session, configuration);
  }

  async delete(threadId: string): Promise<void> {
    const { store } = await this.db();
    await this.record(threadId);
    const live = await this.peek(threadId);
    if (live?.running) live.interrupt(live.running.projector.turn.id, "the thread was deleted");
    this.live.delete(threadId);
    this.subscriptions.delete(threadId);
    await live?.idle();
    store.sessions.delete(threadId);
  }

  /**
   * The agent's settings changed (its model, key or skills edited through a management family):
   * idle loaded threads are let go, so the next turn loads a session with the new settings. A
   * thread running a turn or holding queued input keeps its session until it is idle.
   */
  async releaseIdle(): Promise<void> {
    for (const [threadId, pending] of [...this.live]) {
      const live = await pending.catch(() => undefined);
      if (live === undefined || live.running !== undefined || live.queuedInputs.length > 0) continue;
      if (this.live.get(threadId) === pending) this.live.delete(threadId);
    }
  }

  /** Drops the last `numTurns` turns from the history (files on disk stay as they are). */
  async rollback(threadId: string, numTurns: number): Promise<Thread> {
    const { store } = await this.db();
    await this.record(threadId);
    const live = await this.peek(threadId);
    if (live?.running) throw appServerErrors.turnInProgress(threadId, live.running.projector.turn.id);
    const entries = store.transcripts.entries(threadId);
    const starts = entries.filter((entry) => entry.role === "user" && startsTurn(entry.content));
    if (numTurns > starts.length) {
      throw appServerErrors.invalidParams(
        `numTurns is ${numTurns} but thread '${threadId}' has ${starts.length} turn${starts.length === 1 ? "" : "s"}`,
      );
    }
    const firstDropped = starts[starts.length - numTurns]!;
    store.transcripts.truncate(threadId, firstDropped.seq - 1);
    live?.reset(store.transcripts.messages(threadId), starts.length - numTurns);
    return this.read(threadId, true);
  }

  /**
   * The server stops. `cancel` (SIGTERM) cancels running turns; otherwise they may finish (stdin's
   * end). Approvals nobody answered are decided by policy either way. Resolves when every turn has
   * ended and been persisted, or after `graceMs`.
   */
  async shutdown(cancel: boolean, graceMs: number): Promise<void> {
    const threads = (await Promise.all([...this.live.values()].map((p) => p.catch(() => undefined)))).filter(
      (t): t is LiveThread => t !== undefined,
    );
    for (const thread of threads) thread.drain(cancel);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(threads.map((thread) => thread.idle())),
      new Promise((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
    const opened = this.sessions;
    this.sessions = undefined;
    if (opened && this.options.closeStore !== false) (await opened).store.close();
  }
}
