/**
 * Where replies wait for their recipient. Each contact has a mailbox: replies go straight to the
 * contact's open event streams if there are any, else to one waiting long-poll, else into a
 * bounded queue that the next fetch or stream empties.
 *
 * A contact is "known" once it has posted a message or opened a fetch or a stream: only known
 * contacts can be sent to, the way a chat service refuses a user id it has never seen (-33003).
 * A full queue is the channel's rate limit (-33004): a recipient who never fetches cannot make
 * the plugin's memory grow without bound.
 */
import type { DeliveredMessage } from "./messages.js";

/** Hands a message to a listener; false when the listener is gone (the message is not taken). */
export type Listener = (message: DeliveredMessage) => boolean;

export class UnknownRecipientError extends Error {
  constructor(readonly recipient: string) {
    super(`no loopback client has used the contact id "${recipient}"`);
    this.name = "UnknownRecipientError";
  }
}

export class OutboxFullError extends Error {
  constructor(
    readonly recipient: string,
    readonly limit: number,
  ) {
    super(`the outbox of "${recipient}" already holds ${limit} unfetched messages`);
    this.name = "OutboxFullError";
  }
}

/** A long-poll in progress. */
interface Waiter {
  /** Whether the client is still connected to receive what `settle` hands it. */
  isConnected: () => boolean;
  /** Ends the wait with these messages (stops the timer, forgets the abort signal). */
  settle: (messages: DeliveredMessage[]) => void;
}

class Mailbox {
  readonly queue: DeliveredMessage[] = [];
  readonly streams = new Set<Listener>();
  readonly waiters: Waiter[] = [];
}

export class PostOffice {
  private readonly boxes = new Map<string, Mailbox>();
  private closed = false;

  constructor(private readonly limit: number) {}

  /** Makes `contact` known (it posted, or it is listening). */
  touch(contact: string): void {
    this.box(contact);
  }

  knows(contact: string): boolean {
    return this.boxes.has(contact);
  }

  /** Messages waiting in `contact`'s queue. */
  queued(contact: string): number {
    return this.boxes.get(contact)?.queue.length ?? 0;
  }

  /** Throws UnknownRecipientError or OutboxFullError; otherwise the message is on its way. */
  deliver(message: DeliveredMessage): void {
    const box = this.boxes.get(message.to);
    if (box === undefined || this.closed) throw new UnknownRecipientError(message.to);
    let streamed = false;
    for (const stream of box.streams) {
      if (stream(message)) streamed = true;
      else box.streams.delete(stream);
    }
    if (streamed) return;
    while (box.waiters.length > 0) {
      const waiter = box.waiters.shift()!;
      if (waiter.isConnected()) {
        waiter.settle([message]);
        return;
      }
      waiter.settle([]);
    }
    if (box.queue.length >= this.limit) throw new OutboxFullError(message.to, this.limit);
    box.queue.push(message);
  }

  /**
   * What is queued for `contact`, at once; if nothing is, waits up to `waitMs` for the next
   * message. `isConnected` tells whether the client is still there to receive a message that
   * arrives while waiting (if not, the message goes to the next listener or the queue). Resolves
   * with [] on timeout, on `signal` and on close.
   */
  fetch(
    contact: string,
    waitMs: number,
    isConnected: () => boolean,
    signal: AbortSignal,
  ): Promise<DeliveredMessage[]> {
    const box = this.box(contact);
    if (box.queue.length > 0 || waitMs === 0 || this.closed || signal.aborted) {
      return Promise.resolve(box.queue.splice(0));
    }
    return new Promise((resolve) => {
      const giveUp = () => {
        const index = box.waiters.indexOf(waiter);
        if (index !== -1) box.waiters.splice(index, 1);
        waiter.settle([]);
      };
      const timer = setTimeout(giveUp, waitMs);
      const waiter: Waiter = {
        isConnected,
        settle: (messages) => {
          clearTimeout(timer);
          signal.removeEventListener("abort", giveUp);
          resolve(messages);
        },
      };
      signal.addEventListener("abort", giveUp, { once: true });
      box.waiters.push(waiter);
    });
  }

  /** Sends `contact`'s queue to `listener` now and every later message as it comes. */
  subscribe(contact: string, listener: Listener): () => void {
    const box = this.box(contact);
    while (box.queue.length > 0 && listener(box.queue[0]!)) box.queue.shift();
    box.streams.add(listener);
    return () => box.streams.delete(listener);
  }

  /** Ends every wait with []; later deliveries fail as if nobody were known. */
  close(): void {
    this.closed = true;
    for (const box of this.boxes.values()) {
      for (const waiter of box.waiters.splice(0)) waiter.settle([]);
      box.streams.clear();
    }
  }

  private box(contact: string): Mailbox {
    let box = this.boxes.get(contact);
    if (box === undefined) {
      box = new Mailbox();
      this.boxes.set(contact, box);
    }
    return box;
  }
}
