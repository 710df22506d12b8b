/**
 * A bounded, single-consumer async queue: the turn loop pushes events, a door iterates them.
 * Overflow policy: the producer waits. `push` resolves at once while fewer than `highWater` events
 * are queued and otherwise once the consumer has caught up, so a slow door slows the turn down
 * instead of growing memory without bound.
 *
 * Hot paths (text deltas) use `offer`, which accepts without creating or awaiting a promise, and
 * the iterator is written by hand rather than as an async generator: per-event promise and
 * generator hops were most of the engine's overhead over bare provider calls (bench/engine).
 */
export class EventChannel<T> implements AsyncIterable<T> {
  private readonly queue: T[] = [];
  private head = 0;
  private readonly highWater: number;
  private ended = false;
  private failure: unknown;
  private waitingConsumer: ((result: IteratorResult<T>) => void) | undefined;
  private failConsumer: ((error: unknown) => void) | undefined;
  private readonly waitingProducers: Array<() => void> = [];

  constructor(highWater = 256) {
    this.highWater = highWater;
  }

  /** Queued events not yet taken by the consumer. */
  get size(): number {
    return this.queue.length - this.head;
  }

  /**
   * Hands `item` over without waiting; returns false when the producer should now wait (the
   * queue reached its high-water mark) — call `room()` then. Events after the end are dropped.
   */
  offer(item: T): boolean {
    if (this.ended) return true;
    const consumer = this.waitingConsumer;
    if (consumer && this.size === 0) {
      this.waitingConsumer = undefined;
      this.failConsumer = undefined;
      consumer({ value: item, done: false });
      return true;
    }
    this.queue.push(item);
    return this.size < this.highWater;
  }

  /** Resolves once the queue is below its high-water mark again. */
  room(): Promise<void> {
    if (this.size < this.highWater || this.ended) return Promise.resolve();
    return new Promise((resolve) => this.waitingProducers.push(resolve));
  }

  push(item: T): Promise<void> {
    return this.offer(item) ? Promise.resolve() : this.room();
  }

  /** No more events; the iterator finishes after draining what is queued. */
  end(): void {
    this.ended = true;
    if (this.size === 0) this.settleConsumer();
  }

  /** Ends the stream with an error thrown from the iterator after the queued events. */
  fail(error: unknown): void {
    this.failure = error ?? new Error("event stream failed");
    this.end();
  }

  private settleConsumer(): void {
    const consumer = this.waitingConsumer;
    const fail = this.failConsumer;
    this.waitingConsumer = undefined;
    this.failConsumer = undefined;
    if (!consumer) return;
    if (this.failure !== undefined) fail?.(this.failure);
    else consumer({ value: undefined, done: true });
  }

  private take(): T {
    const item = this.queue[this.head]!;
    this.queue[this.head] = undefined as T;
    this.head++;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    while (this.waitingProducers.length > 0 && this.size < this.highWater) this.waitingProducers.shift()!();
    return item;
  }

  /** The consumer stopped early: never leave producers waiting forever. */
  private abandon(): void {
    this.ended = true;
    this.queue.length = 0;
    this.head = 0;
    for (const release of this.waitingProducers.splice(0)) release();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: (): Promise<IteratorResult<T>> => {
        if (this.size > 0) return Promise.resolve({ value: this.take(), done: false });
        if (this.ended) {
          if (this.failure !== undefined) {
            const failure = this.failure;
            this.failure = undefined;
            return Promise.reject(failure);
          }
          return Promise.resolve({ value: undefined, done: true });
        }
        return new Promise((resolve, reject) => {
          this.waitingConsumer = resolve;
          this.failConsumer = reject;
        });
      },
      return: (): Promise<IteratorResult<T>> => {
        this.abandon();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
