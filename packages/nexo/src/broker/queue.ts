/**
 * A bounded FIFO with its own delivery loop: the producer never waits, the consumer takes one
 * item at a time and is awaited before the next. When the queue is full, new items are dropped
 * (and counted); what is already queued keeps its place, so a consumer that catches up sees a
 * gap, never a reordering.
 *
 * This is what keeps one slow subscriber from blocking a publisher or any other subscriber:
 * each subscriber owns a queue and a loop, and the publisher only calls `offer`.
 */

export interface DeliveryQueueOptions<T> {
  /** How many items may wait (the one being delivered is not counted). At least 1. */
  depth: number;
  deliver: (item: T) => void | Promise<void>;
  /** Told of every `deliver` that throws or rejects; the loop goes on with the next item. */
  onDeliveryError: (error: unknown, item: T) => void;
  /** Told of every dropped item, with the queue's drop count so far. */
  onDrop?: (item: T, dropped: number) => void;
  /** Told whenever the loop has emptied the queue and is going idle. */
  onIdle?: () => void;
}

/**
 * A loop that only ever finds a synchronous consumer would run in one go for up to `depth` items
 * without letting timers or sockets in; it yields to the event loop this often.
 */
const YIELD_EVERY = 256;

export class DeliveryQueue<T> {
  readonly depth: number;
  private readonly options: DeliveryQueueOptions<T>;
  /** Items live in `items[head..]`; the consumed prefix is cut off now and then, not per item. */
  private items: (T | undefined)[] = [];
  private head = 0;
  private running = false;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];
  private droppedCount = 0;
  private deliveredCount = 0;
  private failedCount = 0;

  constructor(options: DeliveryQueueOptions<T>) {
    if (!Number.isSafeInteger(options.depth) || options.depth < 1) {
      throw new RangeError(`queue depth must be a positive integer, got ${options.depth}`);
    }
    this.depth = options.depth;
    this.options = options;
  }

  /** Items waiting now. */
  get size(): number {
    return this.items.length - this.head;
  }
  get dropped(): number {
    return this.droppedCount;
  }
  /** Calls of `deliver` started. */
  get delivered(): number {
    return this.deliveredCount;
  }
  /** Calls of `deliver` that threw or rejected. */
  get failed(): number {
    return this.failedCount;
  }
  /** True when nothing is queued and nothing is being delivered. */
  get idle(): boolean {
    return !this.running && this.size === 0;
  }

  /**
   * Queues `item` for delivery; never calls `deliver` itself. Returns false when the item was
   * dropped: the queue is full (counted) or stopped (not counted: no one is listening).
   */
  offer(item: T): boolean {
    if (this.stopped) return false;
    if (this.size >= this.depth) {
      this.droppedCount++;
      this.options.onDrop?.(item, this.droppedCount);
      return false;
    }
    this.items.push(item);
    if (!this.running) {
      this.running = true;
      // Deliver later, never inside offer: a publisher must not run a subscriber's code.
      queueMicrotask(() => void this.run());
    }
    return true;
  }

  /** Discards what is queued and delivers nothing more; a delivery in progress runs to its end. */
  stop(): void {
    this.stopped = true;
    this.items = [];
    this.head = 0;
    if (!this.running) this.wakeIdleWaiters();
  }

  /**
   * Settles with true once the queue is empty and no delivery is running, or with false after
   * `timeoutMs` if it has not got there.
   */
  whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.idle) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.idleWaiters.push(waiter);
    });
  }

  private take(): T {
    const item = this.items[this.head] as T;
    this.items[this.head] = undefined;
    this.head++;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  private async run(): Promise<void> {
    let sinceYield = 0;
    try {
      while (!this.stopped && this.size > 0) {
        const item = this.take();
        this.deliveredCount++;
        try {
          const result = this.options.deliver(item);
          if (result !== undefined && typeof (result as Promise<void>).then === "function") await result;
        } catch (error) {
          this.failedCount++;
          this.report(error, item);
        }
        if (++sinceYield >= YIELD_EVERY) {
          sinceYield = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
    } finally {
      this.running = false;
      if (!this.stopped) this.options.onIdle?.();
      this.wakeIdleWaiters();
    }
  }

  /** An error callback that throws must not kill the loop and strand the queue. */
  private report(error: unknown, item: T): void {
    try {
      this.options.onDeliveryError(error, item);
    } catch {
      // Nothing sensible is left to tell; the next item is what matters.
    }
  }

  private wakeIdleWaiters(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter();
  }
}
