/**
 * A thread is a nexo session: the same row in the store, the same transcript, so `nexo agent
 * --json-stream --resume <id>` continues a thread and a json-stream session can be resumed here.
 * This file maps between the two shapes:
 *
 *   session.id          thread id
 *   session.channel     originChannel (the identity's channelName)
 *   session.account     userId
 *   session.contact     channelContext (matched exactly by thread/list)
 *   session.title       displayName
 *   metadata.workspace  workspacePath (the key json-stream sessions use too)
 *   metadata.appserver  {status, historyMode, configuration, metadata, outcomes}
 *
 * `subAgent` marks the thread of a `Spawn` sub-agent (a child thread): its parent thread, the
 * turn and call that spawned it, the root of its tree, its depth, and whether the edge was closed
 * (`subagent/close`). Child threads are listed only when asked (`includeSubAgents`).
 *
 * `outcomes` remembers how turns that did not complete ended (failed, cancelled), keyed by turn id,
 * so a thread read after a restart still shows them as they were.
 */
import type {
  SessionIdentity,
  Thread,
  ThreadConfiguration,
  ThreadStatus,
  ThreadSummary,
  TurnStatus,
} from "@nexo/wire/schemas/appserver";
import type { Session } from "../../../store/index.js";

export interface TurnOutcome {
  status: Exclude<TurnStatus, "running" | "waitingApproval" | "completed">;
  error?: string;
  code?: number;
}

/** A child thread's link to the thread whose sub-agent it is. */
export interface SubAgentLink {
  parentThreadId: string;
  parentTurnId: string;
  spawnCallId: string;
  rootThreadId: string;
  depth: number;
  agentNickname?: string;
  closed?: boolean;
}

export interface ThreadState {
  status: ThreadStatus;
  historyMode: "server" | "client";
  subAgent?: SubAgentLink;
  configuration?: ThreadConfiguration;
  metadata?: Record<string, string>;
  outcomes?: Record<string, TurnOutcome>;
}

/** What a thread row says beyond the session's own columns. */
export function threadState(session: Session): ThreadState {
  const raw = (session.metadata.appserver ?? {}) as Partial<ThreadState>;
  return {
    status: raw.status === "paused" || raw.status === "archived" ? raw.status : "active",
    historyMode: raw.historyMode === "client" ? "client" : "server",
    ...(raw.configuration ? { configuration: raw.configuration } : {}),
    ...(raw.subAgent && typeof raw.subAgent.parentThreadId === "string" ? { subAgent: raw.subAgent } : {}),
    ...(raw.metadata ? { metadata: raw.metadata } : {}),
    ...(raw.outcomes ? { outcomes: raw.outcomes } : {}),
  };
}

/** The session metadata with `state` written into it, everything else kept. */
export function withThreadState(session: Session, state: Partial<ThreadState>): Record<string, unknown> {
  return { ...session.metadata, appserver: { ...threadState(session), ...state } };
}

/** The workspace a session works in: its own, or the host's for sessions that never said. */
export function workspaceOf(session: Session, fallback: string): string {
  const workspace = session.metadata.workspace;
  return typeof workspace === "string" && workspace !== "" ? workspace : fallback;
}

export interface ThreadView {
  runtime?: Thread["runtime"];
  queuedInputs?: Thread["queuedInputs"];
  turns?: Thread["turns"];
}

/** The protocol's `source` of a thread: a user's, or a sub-agent's with its link. */
export function sourceOf(state: ThreadState): Thread["source"] {
  const link = state.subAgent;
  if (link === undefined) return { kind: "user" };
  return {
    kind: "subagent",
    subAgent: {
      parentThreadId: link.parentThreadId,
      parentTurnId: link.parentTurnId,
      spawnCallId: link.spawnCallId,
      rootThreadId: link.rootThreadId,
      depth: link.depth,
      ...(link.agentNickname === undefined ? {} : { agentNickname: link.agentNickname }),
      runtimeType: "nexo",
      supportsSendInput: true,
      supportsResume: true,
      supportsClose: true,
    },
  };
}

export function toWireThread(session: Session, hostWorkspace: string, view: ThreadView = {}): Thread {
  const state = threadState(session);
  return {
    id: session.id,
    workspacePath: workspaceOf(session, hostWorkspace),
    ...(session.account === null ? {} : { userId: session.account }),
    originChannel: session.channel ?? "nexo",
    ...(session.contact === null ? {} : { channelContext: session.contact }),
    ...(session.title === null ? {} : { displayName: session.title }),
    status: state.status,
    source: sourceOf(state),
    createdAt: session.createdAt,
    lastActiveAt: session.updatedAt,
    historyMode: state.historyMode,
    ...(state.configuration ? { configuration: state.configuration } : {}),
    metadata: state.metadata ?? {},
    runtime: view.runtime ?? { running: false, waitingOnApproval: false, waitingOnPlanConfirmation: false },
    queuedInputs: view.queuedInputs ?? [],
    ...(view.turns ? { turns: view.turns } : {}),
  };
}

export function toWireSummary(
  session: Session,
  hostWorkspace: string,
  turnCount: number,
  runtime?: Thread["runtime"],
): ThreadSummary {
  const state = threadState(session);
  return {
    id: session.id,
    ...(session.account === null ? {} : { userId: session.account }),
    workspacePath: workspaceOf(session, hostWorkspace),
    originChannel: session.channel ?? "nexo",
    ...(session.contact === null ? {} : { channelContext: session.contact }),
    ...(session.title === null ? {} : { displayName: session.title }),
    source: sourceOf(state),
    status: state.status,
    createdAt: session.createdAt,
    lastActiveAt: session.updatedAt,
    turnCount,
    ...(runtime ? { runtime } : {}),
    metadata: state.metadata ?? {},
  };
}

export interface ListFilter {
  identity: SessionIdentity;
  hostWorkspace: string;
  includeArchived?: boolean;
  /** Child threads of sub-agents too (Desktop asks for them to draw the tree). */
  includeSubAgents?: boolean;
  crossChannelOrigins?: readonly string[] | null;
  channelName?: string;
}

/**
 * thread/list's rule: the workspace must match (case-insensitively); then either the thread comes
 * from one of `crossChannelOrigins`, or its user matches (when the identity names one) and its
 * channel context matches exactly (absent matching absent).
 */
export function listedBy(session: Session, filter: ListFilter): boolean {
  const { identity, hostWorkspace } = filter;
  const wanted = (identity.workspacePath || hostWorkspace).toLowerCase();
  if (workspaceOf(session, hostWorkspace).toLowerCase() !== wanted) return false;
  const state = threadState(session);
  if (state.status === "archived" && !filter.includeArchived) return false;
  if (state.subAgent !== undefined && !filter.includeSubAgents) return false;
  if (filter.channelName !== undefined && session.channel !== filter.channelName) return false;
  if (session.channel !== null && filter.crossChannelOrigins?.includes(session.channel)) return true;
  if (identity.userId !== undefined && identity.userId !== "" && session.account !== identity.userId) {
    return false;
  }
  return (session.contact ?? undefined) === (identity.channelContext || undefined);
}
