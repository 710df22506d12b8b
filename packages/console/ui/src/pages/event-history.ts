/**
 * An agent's stored events as the Live view holds them: the newest page (read on open, on another
 * agent and on every resync) and the pages before it the operator asked for with "Load earlier",
 * each read with `agent_events/list`'s `before` cursor (the previous page's `next_before`).
 *
 * Everything read for the agent is kept and merged by stream and seq, so a resync after new events
 * pushed the newest page forward leaves no gap behind it, and a page that overlaps what is held
 * (or what arrived live meanwhile) adds each event once. Only the first newest page sets where
 * "earlier" starts: every event after that cursor has been held since, whatever came later.
 *
 * One conversation picked, "earlier" is that conversation's: its seqs count 1, 2, 3… per stream, so
 * the page before its oldest held seq S is `agent_events/read` from `S - 1 - HISTORY_PAGE` (the
 * stream's own index), which an agent-wide page of a busy agent would rarely reach.
 */
import { useEffect, useState } from "preact/hooks";
import { rpc } from "../api.js";
import type { AgentEvent } from "../live.js";
import { mergeEvents } from "./events.js";

/** Events per read, the newest page and each earlier one. */
export const HISTORY_PAGE = 200;

interface Held {
  agent: string | undefined;
  events: AgentEvent[];
  /** Where the next earlier page starts; undefined once the oldest stored event is held. */
  before: string | undefined;
  /** The first newest page came back: `before` is known. */
  started: boolean;
  /** Conversations read back to their first stored event. */
  complete: ReadonlySet<string>;
}

/** One conversation, by the oldest seq of it the view shows. */
export interface Conversation {
  session: string;
  oldestSeq: number;
}

export interface EventHistory {
  events: readonly AgentEvent[];
  /** Whether older events are stored than those held: the agent's, or one conversation's. */
  hasEarlier: (conversation?: Conversation) => boolean;
  /** Reads the page before the held events (the agent's, or one conversation's) and adds it. */
  loadEarlier: (conversation?: Conversation) => Promise<void>;
  error: unknown;
}

const nothing = (agent: string | undefined): Held => ({
  agent,
  events: [],
  before: undefined,
  started: false,
  complete: new Set(),
});

export function useEventHistory(agent: string | undefined, resync: number): EventHistory {
  const [held, setHeld] = useState<Held>(() => nothing(agent));
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    // Another agent: its events only, from its newest page.
    setHeld((h) => (h.agent === agent ? h : nothing(agent)));
    setError(undefined);
    if (agent === undefined) return;
    let current = true;
    rpc("agent_events/list", { agent_id: agent, limit: HISTORY_PAGE }).then(
      (page) => {
        if (!current) return;
        setHeld((h) =>
          h.agent !== agent
            ? h
            : {
                agent,
                events: mergeEvents(h.events, page.events as AgentEvent[]),
                before: h.started ? h.before : page.next_before,
                started: true,
                complete: h.complete,
              },
        );
      },
      (failure: unknown) => {
        if (current) setError(failure);
      },
    );
    return () => {
      current = false;
    };
  }, [agent, resync]);

  const loadEarlier = async (conversation?: Conversation) => {
    if (conversation !== undefined) return loadEarlierIn(conversation);
    const { agent: of, before } = held;
    if (of === undefined || before === undefined) return;
    const page = await rpc("agent_events/list", { agent_id: of, limit: HISTORY_PAGE, before });
    // Added only where it was asked: not to another agent's events, and not twice.
    setHeld((h) =>
      h.agent !== of || h.before !== before
        ? h
        : { ...h, events: mergeEvents(page.events as AgentEvent[], h.events), before: page.next_before },
    );
  };

  const loadEarlierIn = async ({ session, oldestSeq }: Conversation) => {
    const of = held.agent;
    if (of === undefined || oldestSeq <= 1) return;
    const since = Math.max(0, oldestSeq - 1 - HISTORY_PAGE);
    const page = await rpc("agent_events/read", {
      agent_id: of,
      session_id: session,
      since_seq: since,
      limit: oldestSeq - 1 - since,
    });
    const older = (page.events as AgentEvent[]).filter((e) => e.seq < oldestSeq);
    // Seq 1 reached, or nothing older is left (retention deleted it): this conversation is whole.
    const whole = since === 0 || older.length === 0;
    setHeld((h) =>
      h.agent !== of
        ? h
        : {
            ...h,
            events: mergeEvents(older, h.events),
            complete: whole ? new Set(h.complete).add(session) : h.complete,
          },
    );
  };

  const hasEarlier = (conversation?: Conversation) =>
    conversation === undefined
      ? held.before !== undefined
      : conversation.oldestSeq > 1 && !held.complete.has(conversation.session);

  // Until the effect above has run for a newly chosen agent, the held events are the last one's.
  const mine = held.agent === agent;
  return {
    events: mine ? held.events : [],
    hasEarlier: (conversation) => mine && hasEarlier(conversation),
    loadEarlier,
    error,
  };
}
