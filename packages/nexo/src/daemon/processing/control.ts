/**
 * Operator takeover of a conversation: pause it (the agent takes no turn; what the person writes is
 * held in the store, bounded, oldest dropped first with an event), answer in the agent's place
 * through the channel (stamped on the transcript as the operator's), and resume (what was held is
 * written to the transcript in order with its original times, plus an optional summary for the
 * agent, which its next turn reads). State lives in the store, so a restart changes nothing.
 *
 * The router asks `holds` once before it runs a turn; every other call comes from an operator
 * (the admin RPC's processing/*).
 */

import type { admin } from "@nexo/wire/schemas";
import { v7 as uuidv7 } from "uuid";
import type { OutboundMessage, OutboundReceipt } from "../../channels/registry.js";
import type { Logger } from "../../log.js";
import { OPERATOR_NOTE_SOURCE, type Store } from "../../store/index.js";
import type { InboundMessage } from "../routing/inbound.js";
import type { SessionKey, TurnGate } from "../routing/router.js";
import { NotPausedError, TakeoverInputError, TakeoverNotImplementedError } from "./errors.js";
import type { Escalations } from "./escalations.js";
import type { TakeoverEvents } from "./events.js";
import { type ConversationScope, keyOfSession, scopeKey, scopeOfSession, sessionKeyOf } from "./scope.js";

/** How many inbound messages one paused conversation holds by default. */
export const DEFAULT_PENDING_CAP = 50;
/** The variable that sets it (0: hold nothing, every message of a paused conversation is dropped). */
export const PENDING_CAP_VARIABLE = "NEXO_PROCESSING_PENDING_QUEUE_CAP";

export interface ProcessingControlDeps {
  store: () => Store;
  /** Sends through the channel plugin serving `kind` (the services facade's channels.send). */
  send(kind: string, message: OutboundMessage): Promise<OutboundReceipt>;
  /** The conversation's session id, its record created when it has none yet. */
  sessionOf(key: SessionKey): string;
  /** These sessions' transcripts changed under their cached engine sessions: reload them. */
  refresh(sessionIds: readonly string[]): void;
  escalations: Escalations;
  events: TakeoverEvents;
  /** Held messages per paused conversation. */
  pendingCap: number;
  logger: Logger;
  now?: () => number;
}

export interface PauseCall {
  scope: admin.ProcessingScope;
  reason?: string | undefined;
  operatorTokenHash: string;
}

export interface ResumeCall {
  scope: admin.ProcessingScope;
  operatorTokenHash: string;
  sessionId?: string | undefined;
  summary?: string | undefined;
}

export interface InterventionCall {
  scope: admin.ProcessingScope;
  action: admin.InterventionAction;
  operatorTokenHash: string;
  sessionId?: string | undefined;
}

const ACTIVE: admin.ProcessingControlState = { state: "agent_active" };

/** The variable's value as a cap; throws for anything but a non-negative integer. */
export function pendingCapFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env[PENDING_CAP_VARIABLE];
  if (raw === undefined || raw === "") return DEFAULT_PENDING_CAP;
  if (!/^\d+$/.test(raw))
    throw new Error(`${PENDING_CAP_VARIABLE}=${JSON.stringify(raw)} must be a non-negative integer`);
  return Number(raw);
}

export class ProcessingControl implements TurnGate {
  private readonly now: () => number;
  /** The paused keys, read from the store once: the router asks on every turn. */
  private paused: Set<string> | undefined;

  constructor(private readonly deps: ProcessingControlDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The router's check: true when the conversation is paused and the message was held (or dropped at cap 0). */
  holds(key: SessionKey, inbound: InboundMessage): boolean {
    const id = keyOfSession(key);
    if (!this.pausedKeys().has(id)) return false;
    const store = this.deps.store();
    const { held, dropped } = store.processing.hold(
      id,
      {
        body: inbound.text,
        senderId: inbound.senderId ?? inbound.contact,
        messageId: inbound.messageId,
        sourcePlugin: key.channel,
        receivedAtMs: this.now(),
      },
      this.deps.pendingCap,
    );
    if (!held) return false;
    this.deps.logger.info(
      { agentId: key.agentId, channel: key.channel, contact: key.contact },
      "message held: an operator paused this conversation",
    );
    if (dropped > 0) {
      this.deps.logger.warn(
        {
          agentId: key.agentId,
          channel: key.channel,
          contact: key.contact,
          dropped,
          cap: this.deps.pendingCap,
        },
        "held messages dropped: the paused conversation's buffer is full",
      );
      this.deps.events.emit({
        kind: "pending_inbounds_dropped",
        agent_id: key.agentId,
        scope: scopeOfSession(key),
        dropped,
        at_ms: this.now(),
        tenant_id: this.tenantOf(key.agentId, key),
      });
    }
    return true;
  }

  state(scope: admin.ProcessingScope): admin.ProcessingControlState {
    const pause = this.deps.store().processing.pause(scopeKey(conversation(scope)));
    return pause === undefined ? ACTIVE : pausedState(pause);
  }

  /**
   * Pauses the conversation (idempotent: `changed` false when it already was). A pending
   * escalation of the scope is resolved as an operator takeover first; failing to do so is logged
   * and never blocks the pause.
   */
  pause(call: PauseCall): { changed: boolean; correlationId: string } {
    const scope = conversation(call.scope);
    const key = scopeKey(scope);
    try {
      this.deps.escalations.resolve(scope, { kind: "operator_takeover" });
    } catch (error) {
      this.deps.logger.warn(
        { scope, err: (error as Error).message },
        "a pending escalation could not be resolved on pause; pausing anyway",
      );
    }
    const record = {
      scopeKey: key,
      agentId: scope.agent_id,
      scope,
      pausedAtMs: this.now(),
      operatorTokenHash: call.operatorTokenHash,
      reason: call.reason,
    };
    const changed = this.deps.store().processing.insertPause(record);
    if (changed) {
      this.pausedKeys().add(key);
      this.deps.logger.info({ scope, reason: call.reason }, "conversation paused by an operator");
      this.stateChanged(scope, ACTIVE, pausedState(record));
    }
    return { changed, correlationId: uuidv7() };
  }

  /**
   * Resumes the conversation: what was held is written to its transcript as the person's messages,
   * in order, with the times they arrived; the summary, when given, as a note for the agent on
   * `sessionId`. The agent reads both on its next turn. Bad input is refused before anything
   * changes; `changed` false when the scope was not paused.
   */
  resume(call: ResumeCall): {
    changed: boolean;
    correlationId: string;
    drained: number;
    transcriptStamped: boolean | undefined;
  } {
    const scope = conversation(call.scope);
    const key = scopeKey(scope);
    const store = this.deps.store();
    const summary = call.summary?.trim();
    if (summary !== undefined) this.sessionOfScope(scope, call.sessionId);
    const correlationId = uuidv7();
    const paused = store.processing.pause(key);
    if (paused === undefined)
      return { changed: false, correlationId, drained: 0, transcriptStamped: undefined };
    const conversationSession = this.deps.sessionOf(sessionKeyOf(scope));
    const ended = store.transaction(() => {
      const result = store.processing.endPause(key);
      if (result !== undefined && result.pending.length > 0)
        store.transcripts.appendMany(
          conversationSession,
          result.pending.map((held) => ({
            role: "user" as const,
            content: held.body,
            sourcePlugin: held.sourcePlugin,
            senderId: held.senderId ?? null,
            messageId: held.messageId ?? null,
            createdAt: new Date(held.receivedAtMs),
          })),
        );
      return result;
    });
    this.pausedKeys().delete(key);
    if (ended === undefined)
      return { changed: false, correlationId, drained: 0, transcriptStamped: undefined };
    let transcriptStamped: boolean | undefined;
    if (summary !== undefined && call.sessionId !== undefined) {
      transcriptStamped = this.stamp(call.sessionId, {
        role: "system",
        content: `[operator_summary] ${summary}`,
        sourcePlugin: OPERATOR_NOTE_SOURCE,
        senderId: `operator:${call.operatorTokenHash}`,
      });
    }
    this.deps.refresh(
      call.sessionId === undefined ? [conversationSession] : [conversationSession, call.sessionId],
    );
    this.deps.logger.info(
      { scope, drained: ended.pending.length },
      "conversation resumed: the agent answers again",
    );
    this.stateChanged(scope, pausedState(ended.pause), ACTIVE);
    return { changed: true, correlationId, drained: ended.pending.length, transcriptStamped };
  }

  /**
   * Sends the operator's reply to the person through the channel, then stamps it on the
   * conversation's transcript as the operator's (an assistant line from `intervention:<channel>`),
   * so the agent knows what was said when it resumes. Only on a paused conversation.
   */
  async intervene(call: InterventionCall): Promise<{ correlationId: string; transcriptStamped: boolean }> {
    const scope = conversation(call.scope);
    const action = call.action;
    if (action.kind !== "reply")
      throw new TakeoverNotImplementedError(
        `not_implemented: intervention action "${action.kind}" is not served; only "reply" is`,
      );
    if (action.msg_kind !== "text")
      throw new TakeoverNotImplementedError(
        `not_implemented: reply msg_kind "${action.msg_kind}" is not served; only "text" is`,
      );
    if (
      action.channel !== scope.channel ||
      action.account_id !== scope.account_id ||
      action.to !== scope.contact_id
    )
      throw new TakeoverInputError(
        "action_outside_scope",
        "the reply's channel, account_id and to must be the paused conversation's channel, account_id and contact_id",
      );
    if (this.deps.store().processing.pause(scopeKey(scope)) === undefined) throw new NotPausedError();
    const sessionId = this.sessionOfScope(scope, call.sessionId);
    const { kind, instance } = splitChannel(scope.channel);
    const receipt = await this.deps.send(kind, {
      kind: "text",
      to: action.to,
      body: action.body,
      ...(instance === undefined ? {} : { instance }),
    });
    const transcriptStamped = this.stamp(sessionId, {
      role: "assistant",
      content: action.body,
      sourcePlugin: `intervention:${scope.channel}`,
      senderId: `operator:${call.operatorTokenHash}`,
      messageId: receipt.messageId,
    });
    this.deps.refresh([sessionId]);
    return { correlationId: uuidv7(), transcriptStamped };
  }

  /** Every paused conversation (for the operator and the restart test). */
  pausedScopes(): ConversationScope[] {
    return this.deps
      .store()
      .processing.pauses()
      .map((pause) => pause.scope as ConversationScope);
  }

  private pausedKeys(): Set<string> {
    this.paused ??= new Set(
      this.deps
        .store()
        .processing.pauses()
        .map((pause) => pause.scopeKey),
    );
    return this.paused;
  }

  /**
   * The session to stamp on: `sessionId` when given (it must be one of the scope's agent's), else
   * the conversation's own (created when it has none yet).
   */
  private sessionOfScope(scope: ConversationScope, sessionId: string | undefined): string {
    if (sessionId === undefined) return this.deps.sessionOf(sessionKeyOf(scope));
    const session = this.deps.store().sessions.get(sessionId);
    if (session === undefined || session.agentId !== scope.agent_id)
      throw new TakeoverInputError(
        "unknown_session",
        `session ${sessionId} is not a session of agent ${scope.agent_id}`,
      );
    return sessionId;
  }

  /** Appends one line; false (logged) when the store refused it. */
  private stamp(sessionId: string, entry: Parameters<Store["transcripts"]["append"]>[1]): boolean {
    try {
      this.deps.store().transcripts.append(sessionId, entry);
      return true;
    } catch (error) {
      this.deps.logger.error(
        { sessionId, err: (error as Error).message },
        "the operator's line could not be stamped on the transcript",
      );
      return false;
    }
  }

  private stateChanged(
    scope: ConversationScope,
    prev: admin.ProcessingControlState,
    next: admin.ProcessingControlState,
  ): void {
    this.deps.events.emit({
      kind: "processing_state_changed",
      agent_id: scope.agent_id,
      scope,
      prev_state: prev,
      new_state: next,
      at_ms: this.now(),
      tenant_id: this.tenantOf(scope.agent_id, sessionKeyOf(scope)),
    });
  }

  /** The tenant of the conversation's session, when it has one. */
  private tenantOf(agentId: string, key: SessionKey): string | null {
    const session = this.deps.store().sessions.findByKey({
      agentId,
      channel: key.channel,
      account: key.account ?? null,
      contact: key.contact,
    });
    return session?.tenantId ?? null;
  }
}

/** Only conversations are served end to end; the other scope kinds are valid wire, not yet served. */
function conversation(scope: admin.ProcessingScope): ConversationScope {
  if (scope.kind !== "conversation")
    throw new TakeoverNotImplementedError(
      `not_implemented: scope kind "${scope.kind}" is not served; only "conversation" is`,
    );
  return scope;
}

function pausedState(pause: {
  scope: unknown;
  pausedAtMs: number;
  operatorTokenHash: string;
  reason: string | undefined;
}): admin.ProcessingControlState {
  return {
    state: "paused_by_operator",
    scope: pause.scope as admin.ProcessingScope,
    paused_at_ms: pause.pausedAtMs,
    operator_token_hash: pause.operatorTokenHash,
    ...(pause.reason === undefined ? {} : { reason: pause.reason }),
  };
}

/** `<kind>` or `<kind>.<instance>`. */
function splitChannel(channel: string): { kind: string; instance: string | undefined } {
  const dot = channel.indexOf(".");
  return dot < 0
    ? { kind: channel, instance: undefined }
    : { kind: channel.slice(0, dot), instance: channel.slice(dot + 1) };
}
