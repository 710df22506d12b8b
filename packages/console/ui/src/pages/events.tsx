/** One agent event as a row: a transcript line, a pause or resume, an escalation. */

import { time } from "../components.js";
import type { AgentEvent } from "../live.js";

/** Events on one page of an event list (the live view, a takeover's conversation). */
export const EVENTS_PAGE = 50;

export function eventKey(event: AgentEvent): string {
  return `${event.session_id}#${event.seq}`;
}

/** Merges stored and live events, each once, oldest first. */
export function mergeEvents(...lists: readonly (readonly AgentEvent[])[]): AgentEvent[] {
  const byKey = new Map<string, AgentEvent>();
  for (const list of lists) for (const event of list) byKey.set(eventKey(event), event);
  return [...byKey.values()].sort((a, b) => eventTime(a) - eventTime(b) || a.seq - b.seq);
}

export function eventTime(event: AgentEvent): number {
  const at = event.sent_at_ms ?? event.at_ms ?? event.requested_at_ms ?? event.resolved_at_ms;
  return typeof at === "number" ? at : 0;
}

export function describeEvent(event: AgentEvent): string {
  switch (event.kind) {
    case "transcript_appended":
      return String(event.body ?? "");
    case "processing_state_changed": {
      const state = (event.new_state as { state?: string } | undefined)?.state;
      return state === "paused_by_operator" ? "paused by the operator" : "the agent answers again";
    }
    case "pending_inbounds_dropped":
      return `${String(event.dropped)} held message(s) dropped (queue full)`;
    case "escalation_requested":
      return `escalation: ${String(event.summary ?? "")} (${String(event.reason ?? "")}, ${String(event.urgency ?? "")})`;
    case "escalation_resolved":
      return `escalation resolved (${JSON.stringify(event.by)})`;
    default:
      return event.kind;
  }
}

export function EventRow({ event, actions }: { event: AgentEvent; actions?: preact.ComponentChildren }) {
  const role = typeof event.role === "string" ? event.role : event.kind.replace(/_/g, " ");
  return (
    <li
      class={`event ${event.kind} ${typeof event.role === "string" ? event.role : ""}`}
      data-seq={event.seq}
      data-key={eventKey(event)}
    >
      <span class="when">{time(eventTime(event))}</span>
      <span class="who">
        {role}
        {typeof event.sender_id === "string" ? ` · ${event.sender_id}` : ""}
      </span>
      <span class="body">{describeEvent(event)}</span>
      {actions}
    </li>
  );
}
