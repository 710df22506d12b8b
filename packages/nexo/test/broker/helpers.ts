/**
 * Helpers for the broker tests: waiting on a condition, gates, unique topics, event recorders.
 */
import assert from "node:assert/strict";
import { createEvent } from "../../src/broker/event.js";
import type { BrokerEvent } from "../../src/broker/types.js";

/** Polls `condition` until it holds; fails with `what` after `timeoutMs`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

let topicCounter = 0;
/** A topic prefix no other test uses, so tests sharing a NATS server cannot see each other. */
export function uniquePrefix(): string {
  topicCounter++;
  return `test${process.pid}_${topicCounter}_${Math.random().toString(36).slice(2, 8)}`;
}

export function event(topic: string, payload: Record<string, unknown> = {}): BrokerEvent {
  return createEvent({ topic, source: "test", payload });
}

/** Collects what a subscription receives: the events, and the topics they arrived on. */
export function recorder(): {
  events: BrokerEvent[];
  topics: string[];
  handler: (e: BrokerEvent, t: string) => void;
} {
  const events: BrokerEvent[] = [];
  const topics: string[] = [];
  return {
    events,
    topics,
    handler: (e, t) => {
      events.push(e);
      topics.push(t);
    },
  };
}
