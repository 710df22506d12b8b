/**
 * An agent's stored events as the Live view holds them: the newest page (read on open, on another
 * agent and on every resync) and the pages before it the operator asked for with "Load earlier",
 * each read with `agent_events/list`'s `before` cursor (the previous page's `next_before`).
 *
 * Everything read for the agent is kept and merged by stream and seq, so a resync after new events
 * pushed the newest page forward leaves no gap behind it, and a page that overlaps what is held
 * (or what arrived live meanwhile) adds each event once. Only the first newest page sets where
 * "earlier" starts: every event after that cursor has been held since, whatever came later.
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
}

export interface EventHistory {
  events: readonly AgentEvent[];
  /** Whether older events are stored than those held. */
  hasEarlier: boolean;
  /** Reads the page before the held events and adds it. */
  loadEarlier: () => Promise<void>;
  error: unknown;
}

const nothing = (agent: string | undefined): Held => ({
  agent,
  events: [],
  before: undefined,
  started: false,
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

  const loadEarlier = async () => {
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

  // Until the effect above has run for a newly chosen agent, the held events are the last one's.
  const mine = held.agent === agent;
  return {
    events: mine ? held.events : [],
    hasEarlier: mine && held.before !== undefined,
    loadEarlier,
    error,
  };
}
