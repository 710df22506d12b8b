/**
 * Receipts for inbound channel messages: how a plugin's acknowledged publish
 * (`broker.publish_acked`) learns what the router did with the message it published.
 *
 * The bridge (extensions/plugins/bridge.ts) asks `wait(eventId)` before it publishes the event on
 * the broker; the router (daemon/routing) reports `settle(eventId, outcome)` once it has written
 * the message to the durable inbox, or refused it. The message still travels over the broker like
 * any other, so the router stays the one place that reads and persists inbound messages, and every
 * other subscriber still sees it. Nobody waiting for an id (a plain `broker.publish`, an event from
 * another process on a shared NATS server) makes `settle` a no-op.
 */

/** What the router did with one inbound message. */
export type InboundOutcome =
  /** Queued for its turn; `durable` when the inbox holds it (it survives a SIGKILL from now on). */
  | { status: "queued"; durable: boolean }
  /** The inbox already held the same channel message: no second turn runs. */
  | { status: "duplicate" }
  | {
      status: "refused";
      reason: "invalid_message" | "not_routed" | "queue_full" | "inbox_full";
      /** For humans: why, without anything the channel's user should not see. */
      detail: string;
    }
  /** Nobody reported in time (no router running, the broker dropped or is slow to deliver). */
  | { status: "unacknowledged"; detail: string };

export const DEFAULT_RECEIPT_TIMEOUT_MS = 10_000;

export class InboundReceipts {
  /** Waiters by event id, oldest first (a plugin may publish the same id twice). */
  private readonly waiting = new Map<string, Array<(outcome: InboundOutcome) => void>>();
  private routers = 0;

  /** Called by the router when it starts taking messages; the returned function when it stops. */
  attachRouter(): () => void {
    this.routers += 1;
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      this.routers -= 1;
    };
  }

  /** Whether a router takes messages now (else `wait` answers "unacknowledged" at once). */
  get routing(): boolean {
    return this.routers > 0;
  }

  /** Receipts being waited for now. */
  get pending(): number {
    let count = 0;
    for (const list of this.waiting.values()) count += list.length;
    return count;
  }

  /**
   * The outcome of the message with this event id. Call it BEFORE publishing the event, so a
   * router that handles it at once is heard. Never rejects.
   */
  wait(eventId: string, timeoutMs = DEFAULT_RECEIPT_TIMEOUT_MS): Promise<InboundOutcome> {
    if (!this.routing) {
      return Promise.resolve({ status: "unacknowledged", detail: "the daemon is not routing messages now" });
    }
    return new Promise((resolve) => {
      const list = this.waiting.get(eventId) ?? [];
      this.waiting.set(eventId, list);
      const settle = (outcome: InboundOutcome) => {
        clearTimeout(timer);
        resolve(outcome);
      };
      const timer = setTimeout(() => {
        this.remove(eventId, settle);
        resolve({ status: "unacknowledged", detail: `the router did not report within ${timeoutMs} ms` });
      }, timeoutMs);
      timer.unref();
      list.push(settle);
    });
  }

  /**
   * Reports the outcome of one delivery of `eventId` to its oldest waiter, if any (the bridge also
   * settles its own wait when the broker refused the event, so it is not left to time out).
   */
  settle(eventId: string, outcome: InboundOutcome): void {
    const list = this.waiting.get(eventId);
    const first = list?.shift();
    if (list?.length === 0) this.waiting.delete(eventId);
    first?.(outcome);
  }

  private remove(eventId: string, waiter: (outcome: InboundOutcome) => void): void {
    const list = this.waiting.get(eventId);
    if (list === undefined) return;
    const index = list.indexOf(waiter);
    if (index !== -1) list.splice(index, 1);
    if (list.length === 0) this.waiting.delete(eventId);
  }
}
