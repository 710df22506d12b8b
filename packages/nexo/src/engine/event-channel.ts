/**
 * A bounded, single-consumer async queue: the turn loop pushes events, a door iterates them.
 * Overflow policy: the producer waits. `push` resolves at once while fewer than `highWater` events
 * are queued and otherwise once the consumer has caught up, so a slow door slows the turn down
 * instead of growing memory without bound.
 */
export class EventChannel<T> implements AsyncIterable<T> {
  private readonly queue: T[] = [];
  private readonly highWater: number;
  private ended = false;
  private failure: unknown;
  private wakeConsumer: (() => void) | undefined;
  private readonly waitingProducers: Array<() => void> = [];

  constructor(highWater = 256) {
    this.highWater = highWater;
  }

  push(item: T): Promise<void> {
    if (this.ended) return Promise.resolve(); // events after the end are dropped by design
    this.queue.push(item);
    this.wake();
    if (this.queue.length < this.highWater) return Promise.resolve();
    return new Promise((resolve) => this.waitingProducers.push(resolve));
  }

  /** No more events; the iterator finishes after draining what is queued. */
  end(): void {
    this.ended = true;
    this.wake();
  }

  /** Ends the stream with an error thrown from the iterator after the queued events. */
  fail(error: unknown): void {
    this.failure = error ?? new Error("event stream failed");
    this.end();
  }

  get size(): number {
    return this.queue.length;
  }

  private wake(): void {
    const wake = this.wakeConsumer;
    this.wakeConsumer = undefined;
    wake?.();
  }

  private releaseProducers(): void {
    while (this.waitingProducers.length > 0 && this.queue.length < this.highWater)
      this.waitingProducers.shift()!();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      while (true) {
        if (this.queue.length > 0) {
          const item = this.queue.shift()!;
          this.releaseProducers();
          yield item;
          continue;
        }
        if (this.ended) {
          if (this.failure !== undefined) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => {
          this.wakeConsumer = resolve;
        });
      }
    } finally {
      // The consumer stopped early: never leave producers waiting forever.
      this.ended = true;
      this.queue.length = 0;
      for (const release of this.waitingProducers.splice(0)) release();
    }
  }
}
