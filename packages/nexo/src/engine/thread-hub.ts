/**
 * A session's event fan-out. The turn publishes every event here and never waits: turns belong to
 * the server, so a client that reads slowly, stalls or goes away neither slows nor cancels them.
 * Any number of subscribers read at their own pace, each from its own bounded queue, and the hub
 * keeps the running turn's events so far, so a subscriber that arrives mid-turn can replay them.
 *
 * Overflow policy, per subscriber: while it is behind, consecutive deltas of one item (text,
 * reasoning, a tool's output or arguments) are merged into one queued delta — nothing is lost and
 * memory grows at most by the text itself. A subscriber still more than `maxQueuedEvents` events or
 * `maxQueuedBytes` bytes behind is detached: its queue is dropped and it receives one `lagged`
 * event, then its stream ends; it resyncs from the store (and `replay`). The running turn's log is
 * merged the same way and dropped when the turn ends.
 */
import type { TurnEvent } from "./events.js";
import type { ContentBlock } from "./types.js";

/** The last event a subscriber gets when it fell too far behind and was detached. */
export interface LaggedEvent {
  type: "lagged";
  /** Events it had waiting when it was detached (merged deltas counted once); later ones are not counted. */
  dropped: number;
}

export type HubEvent = TurnEvent | LaggedEvent;

/** An event published while a turn runs, between its `turn_start` and its `turn_end`. */
export type MidTurnEvent = Exclude<TurnEvent, { type: "turn_start" | "turn_end" }>;

export interface SubscribeOptions {
  /** Receive the running turn's events so far (merged) before the live ones. */
  replay?: boolean;
  /** Only this turn's events; the subscription ends after its `turn_end`. Subscribe before it starts. */
  turnId?: string;
  /** Detach when more events than this are waiting. Default 4096. */
  maxQueuedEvents?: number;
  /** Detach when more than about this many bytes are waiting. Default 8 MiB. */
  maxQueuedBytes?: number;
}

export const DEFAULT_MAX_QUEUED_EVENTS = 4096;
export const DEFAULT_MAX_QUEUED_BYTES = 8 * 1024 * 1024;

/**
 * Whether `later` continues `earlier`: deltas of the same kind and the same item (text, reasoning)
 * or call (a tool's output or arguments) merge; no other event does. Compared field by field: it
 * runs for every event published, so it builds no key strings.
 */
function continues(earlier: HubEvent, later: HubEvent): boolean {
  if (earlier.type !== later.type) return false;
  switch (later.type) {
    case "text_delta":
    case "reasoning_delta":
      return (earlier as { itemId: string }).itemId === later.itemId;
    case "tool_output_delta":
    case "tool_args_delta":
      return (earlier as { callId: string }).callId === later.callId;
    default:
      return false;
  }
}

/** `later` appended to `earlier`, both deltas with the same key. `into` is mutated when given. */
function merge(earlier: TurnEvent, later: TurnEvent, into?: TurnEvent): TurnEvent {
  const target = (into ?? { ...earlier }) as TurnEvent & { text?: string; delta?: string };
  if (later.type === "tool_args_delta") target.delta = (target.delta ?? "") + later.delta;
  else target.text = (target.text ?? "") + (later as { text: string }).text;
  return target;
}

/** About how many bytes a message's content holds: text as its length, other blocks as JSON. */
function contentSize(blocks: readonly ContentBlock[]): number {
  let size = 0;
  for (const block of blocks)
    size += block.type === "text" ? block.text.length : JSON.stringify(block).length;
  return size;
}

/** About how many bytes an event holds, for the queue's budget. */
function sizeOf(event: HubEvent): number {
  switch (event.type) {
    case "text_delta":
    case "reasoning_delta":
    case "tool_output_delta":
    case "message_end":
    case "reasoning_end":
      return event.text.length + 64;
    case "tool_args_delta":
      return event.delta.length + 64;
    case "tool_result":
      return (
        event.output.length +
        (event.detail?.kind === "file_change" ? (event.detail.diff?.length ?? 0) : 0) +
        256
      );
    case "tool_requested":
      return (JSON.stringify(event.args)?.length ?? 0) + event.description.length + 256;
    case "turn_start":
      return contentSize(event.input.content) + 64;
    default:
      return 128;
  }
}

/** Raw events the log takes before it merges its tail: bounds its growth between merges. */
const LOG_MERGE_EVERY = 256;

/** A hub's readers when it has none (never changed: the hub replaces its array, see `subscribers`). */
const NO_SUBSCRIBERS: readonly Subscription[] = Object.freeze([]);

export class ThreadHub {
  /**
   * Replaced, never changed in place, when a reader comes or goes: `publish` walks the array it
   * started with by index (a Set's iterator is an object per event), and a reader that detaches
   * while an event is handed out (its turn ended, it fell behind) cannot disturb that walk.
   */
  private subscribers: readonly Subscription[] = NO_SUBSCRIBERS;
  /**
   * The running turn's events: merged up to `logMerged`, raw after it. Appending raw and merging
   * in batches (or when a reader asks) keeps the per-event cost at one array push: most turns are
   * never replayed.
   */
  private log: TurnEvent[] = [];
  private logMerged = 0;
  private logTurn: string | undefined;
  /** The merged part's last entry is a merged copy only the log holds, so it can grow in place. */
  private logTailOwned = false;

  /**
   * Hands `event` to every subscriber and to the running turn's log. Never waits. The event's
   * `type` and `turnId` are read once here and handed on: events come in a dozen shapes, so every
   * read of a field on one goes through V8's megamorphic cache, and the log and each subscriber
   * would otherwise read both again.
   */
  publish(event: TurnEvent): void {
    const type = event.type;
    const turnId = event.turnId;
    this.record(event, type, turnId);
    const ends = type === "turn_end";
    const subscribers = this.subscribers;
    for (let i = 0; i < subscribers.length; i++) subscribers[i]!.deliver(event, turnId, ends);
  }

  /**
   * `publish` for an event of turn `turnId` that neither starts nor ends it, which is what a running
   * turn publishes most (TurnRun.emit): nothing is read from the event at all.
   */
  publishWithin(event: MidTurnEvent, turnId: string): void {
    if (this.logTurn === turnId) this.append(event);
    const subscribers = this.subscribers;
    for (let i = 0; i < subscribers.length; i++) subscribers[i]!.deliver(event, turnId, false);
  }

  subscribe(options: SubscribeOptions = {}): Subscription {
    const subscription = new Subscription(options, this);
    if (
      options.replay &&
      this.logTurn !== undefined &&
      (!options.turnId || options.turnId === this.logTurn)
    ) {
      this.mergeLog();
      this.logTailOwned = false; // the log's objects are now shared with this subscriber
      for (const event of this.log) subscription.push(event);
    }
    if (!subscription.ended) {
      const subscribers = this.subscribers;
      // Not `[...subscribers, subscription]`: most hubs have no reader when one comes.
      this.subscribers = subscribers.length === 0 ? [subscription] : subscribers.concat(subscription);
    }
    return subscription;
  }

  /** The running turn's events so far (deltas merged), or undefined between turns. */
  current(): { turnId: string; events: readonly TurnEvent[] } | undefined {
    if (this.logTurn === undefined) return undefined;
    this.mergeLog();
    this.logTailOwned = false;
    return { turnId: this.logTurn, events: [...this.log] };
  }

  get subscriberCount(): number {
    return this.subscribers.length;
  }

  /** Ends every subscription (the session is going away). */
  close(): void {
    for (const subscriber of this.subscribers) subscriber.close();
  }

  /** A subscription stops receiving (it ended, was closed or detached for lag). */
  detach(subscription: Subscription): void {
    const subscribers = this.subscribers;
    const at = subscribers.indexOf(subscription);
    if (at === -1) return;
    // A new array (see `subscribers`); the common case, the only reader leaving, allocates nothing.
    this.subscribers = subscribers.length === 1 ? NO_SUBSCRIBERS : subscribers.filter((_, i) => i !== at);
  }

  private record(event: TurnEvent, type: TurnEvent["type"], turnId: string): void {
    if (type === "turn_start") {
      this.log = [];
      this.logMerged = 0;
      this.logTurn = turnId;
      this.logTailOwned = false;
    }
    if (this.logTurn !== turnId) return;
    if (type === "turn_end") {
      this.log = [];
      this.logMerged = 0;
      this.logTurn = undefined;
      return;
    }
    this.append(event);
  }

  /** One more raw event in the running turn's log, merged in batches (see `log`). */
  private append(event: TurnEvent): void {
    this.log.push(event);
    if (this.log.length - this.logMerged >= LOG_MERGE_EVERY) this.mergeLog();
  }

  /** Merges the raw events at the log's end into its merged part (consecutive deltas of one item). */
  private mergeLog(): void {
    const log = this.log;
    let out = this.logMerged;
    for (let i = this.logMerged; i < log.length; i++) {
      const event = log[i]!;
      const tail = out > 0 ? log[out - 1] : undefined;
      if (tail !== undefined && continues(tail, event)) {
        log[out - 1] = merge(tail, event, this.logTailOwned ? tail : undefined);
        this.logTailOwned = true;
        continue;
      }
      log[out++] = event;
      this.logTailOwned = false;
    }
    log.length = out;
    this.logMerged = out;
  }
}

/**
 * One reader of a hub: an async iterable of its events, with a bounded queue (see ThreadHub). It
 * is its own iterator: events go straight to a waiting read, and one object serves every read.
 */
export class Subscription implements AsyncIterable<HubEvent>, AsyncIterator<HubEvent> {
  private readonly turnId: string | undefined;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  /**
   * Queued events are `queue[head..end)`. The arrays are written by index and rewound when they
   * drain rather than truncated: a reader that keeps up drains them after nearly every event, and
   * setting an array's length is a runtime call each time.
   */
  private readonly queue: (HubEvent | undefined)[] = [];
  /** The size (sizeOf) of each queued entry, so that taking one does not measure it again. */
  private readonly sizes: number[] = [];
  private head = 0;
  private end = 0;
  private bytes = 0;
  private tailOwned = false;
  private done = false;
  private lag: LaggedEvent | undefined;
  private lagDelivered = false;
  private waiting: ((result: IteratorResult<HubEvent>) => void) | undefined;

  constructor(
    options: SubscribeOptions,
    private readonly hub: ThreadHub,
  ) {
    this.turnId = options.turnId;
    this.maxEvents = options.maxQueuedEvents ?? DEFAULT_MAX_QUEUED_EVENTS;
    this.maxBytes = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  }

  /** No more events will be queued (closed, detached for lag, or its turn ended). */
  get ended(): boolean {
    return this.done;
  }

  /** Whether it was detached for falling too far behind. */
  get lagged(): boolean {
    return this.lag !== undefined;
  }

  /** Events waiting to be read. */
  get queued(): number {
    return this.end - this.head;
  }

  /** Queues `event` for this reader, or hands it to a waiting read. */
  push(event: TurnEvent): void {
    this.deliver(event, event.turnId, event.type === "turn_end");
  }

  /**
   * `push` with what it needs of the event already known: its turn and whether it is a `turn_end`
   * (the hub reads them once for every reader, or knows them without reading). @internal
   */
  deliver(event: TurnEvent, turnId: string, ends: boolean): void {
    if (this.done) return;
    if (this.turnId !== undefined && turnId !== this.turnId) return;
    if (ends && this.turnId !== undefined) this.finish();
    const waiting = this.waiting;
    if (waiting !== undefined && this.head === this.end) {
      this.waiting = undefined;
      waiting({ value: event, done: false });
      return;
    }
    this.enqueue(event);
  }

  /** Stops reading: nothing more is queued, and a pending read ends. */
  close(): void {
    this.finish();
    this.clear();
    this.settle();
  }

  next(): Promise<IteratorResult<HubEvent>> {
    if (this.head < this.end) return Promise.resolve({ value: this.take(), done: false });
    if (this.done) {
      if (this.lag && !this.lagDelivered) {
        this.lagDelivered = true;
        return Promise.resolve({ value: this.lag, done: false });
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    const read = new Promise<IteratorResult<HubEvent>>(captureResolve);
    this.waiting = captured;
    captured = undefined;
    return read;
  }

  return(): Promise<IteratorResult<HubEvent>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<HubEvent> {
    return this;
  }

  private enqueue(event: TurnEvent): void {
    const size = sizeOf(event);
    const last = this.end - 1;
    const tail = last >= this.head ? this.queue[last] : undefined;
    if (tail !== undefined && continues(tail, event)) {
      this.queue[last] = merge(tail as TurnEvent, event, this.tailOwned ? (tail as TurnEvent) : undefined);
      this.sizes[last]! += size;
      this.tailOwned = true;
    } else {
      this.queue[this.end] = event;
      this.sizes[this.end] = size;
      this.end++;
      this.tailOwned = false;
    }
    this.bytes += size;
    if (this.queued > this.maxEvents || this.bytes > this.maxBytes) this.fallBehind();
  }

  private fallBehind(): void {
    this.lag = { type: "lagged", dropped: this.queued };
    this.finish();
    this.clear();
  }

  /** Drops what is queued and the arrays' memory (the reader is done with them). */
  private clear(): void {
    this.queue.length = 0;
    this.sizes.length = 0;
    this.head = 0;
    this.end = 0;
    this.bytes = 0;
    this.tailOwned = false;
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.hub.detach(this);
  }

  /** A read that is waiting gets the end (only ever waiting on an empty queue). */
  private settle(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  private take(): HubEvent {
    const head = this.head;
    const event = this.queue[head]!;
    this.queue[head] = undefined;
    this.bytes -= this.sizes[head]!;
    this.head = head + 1;
    if (this.head === this.end) {
      // Drained: rewind (the arrays keep their length, holding nothing).
      this.head = 0;
      this.end = 0;
      this.bytes = 0;
      this.tailOwned = false;
    }
    return event;
  }
}

/**
 * A pending read's resolve function, handed out by `captureResolve`. One plain executor serves
 * every read of every subscription: it runs synchronously inside `new Promise`, so the read takes
 * its resolve function from here right after. (An executor bound to each subscription cost a
 * `bind` per subscription and a bound-function call per read.)
 */
let captured: ((result: IteratorResult<HubEvent>) => void) | undefined;

function captureResolve(resolve: (result: IteratorResult<HubEvent>) => void): void {
  captured = resolve;
}
