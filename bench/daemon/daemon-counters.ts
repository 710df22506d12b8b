/**
 * The daemon's own account of a load, from two /metrics scrapes: what it routed, what it could not
 * route or dropped, how its turns ended. The client's view (replies received) and the daemon's
 * must agree; a refused message (session queue full) shows as posted − routed, since the router
 * counts it only in its log.
 */
import type { MetricsSnapshot } from "./prometheus.js";

export interface DaemonCounters {
  routed: number;
  unbound: number;
  turns: number;
  /** Turns that ended other than `completed` (error, cancelled, max_turns, blocked). */
  turnsNotCompleted: number;
  brokerDropped: number;
  pluginRestarts: number;
  pluginDroppedEvents: number;
}

export function readCounters(m: MetricsSnapshot): DaemonCounters {
  const turns = m.sum("nexo_turns_total");
  return {
    routed: m.sum("nexo_messages_routed_total"),
    unbound: m.sum("nexo_messages_unbound_total"),
    turns,
    turnsNotCompleted: turns - m.sum("nexo_turns_total", { outcome: "completed" }),
    brokerDropped: m.sum("nexo_broker_dropped_events_total"),
    pluginRestarts: m.sum("nexo_plugin_restarts_total"),
    pluginDroppedEvents: m.sum("nexo_plugin_dropped_events_total"),
  };
}

export function countersSince(before: DaemonCounters, after: DaemonCounters): DaemonCounters {
  const delta = {} as DaemonCounters;
  for (const key of Object.keys(after) as Array<keyof DaemonCounters>) delta[key] = after[key] - before[key];
  return delta;
}

/** The daemon-side problems in a delta, given how many messages the channel accepted. */
export function daemonErrors(delta: DaemonCounters, posted: number): Record<string, number> {
  const errors = {
    refused: posted - delta.routed,
    unbound: delta.unbound,
    turns_not_completed: delta.turnsNotCompleted,
    broker_dropped: delta.brokerDropped,
    plugin_restarts: delta.pluginRestarts,
    plugin_dropped_events: delta.pluginDroppedEvents,
  };
  return Object.fromEntries(Object.entries(errors).filter(([, n]) => n !== 0));
}
