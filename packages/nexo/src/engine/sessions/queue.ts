/**
 * One session runs one turn at a time: messages for a session wait in its own bounded FIFO while
 * other sessions run concurrently. Overflow policy: a message arriving at a full queue is refused
 * (the caller counts and logs it), so a flood on one conversation can neither grow memory nor
 * delay other conversations.
 */
export class SessionQueue<T> {
  private readonly items: T[] = [];
  private running = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly capacity: number,
    private readonly work: (item: T) => Promise<void>,
  ) {}

  /** Queues `item`; false when the queue is full. */
  offer(item: T): boolean {
    if (this.full) return false;
    this.enqueue(item);
    return true;
  }

  /**
   * Queues `item` whatever the depth: for messages the durable inbox already accepted in an earlier
   * run, whose refusal now would lose them (the inbox's own bound limits how many there are).
   */
  enqueue(item: T): void {
    this.items.push(item);
    if (!this.running) void this.drain();
  }

  get full(): boolean {
    return this.items.length >= this.capacity;
  }

  get depth(): number {
    return this.items.length;
  }

  get busy(): boolean {
    return this.running;
  }

  /** Resolves when nothing is queued or running. */
  idle(): Promise<void> {
    if (!this.running && this.items.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.items.length > 0) {
        const item = this.items.shift()!;
        await this.work(item); // work() handles its own errors
      }
    } finally {
      this.running = false;
      for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }
}
