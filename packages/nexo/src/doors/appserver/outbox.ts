/**
 * What a connection sends, in order and bounded. It sits between the connection's JSON-RPC peer and
 * its transport (a stdio pair, a WebSocket), so responses, server→client requests and
 * notifications all pass through one queue and keep the order they were sent in — the order the
 * protocol promises (the `turn/start` response before `turn/started`, before every item event and
 * approval request, `turn/completed` last).
 *
 * Turns are owned by the server and never wait for a client, so a client that reads slowly must not
 * make anything else wait or hold unbounded memory. While the transport accepts writes, messages go
 * straight to it. Once it pushes back (the stdout pipe is full, a WebSocket holds more than its
 * high-water mark), messages wait here, and the overflow policy applies:
 * 1. nothing is dropped. From `coalesceFrom` waiting messages on, a streaming delta
 *    (`item/agentMessage/delta`, `item/reasoning/delta`, `item/commandExecution/outputDelta`,
 *    `item/toolCall/argumentsDelta`) whose item is the same as the last waiting message's, with
 *    every other field equal, is appended to that message's `delta` instead of waiting as one more
 *    message. A client that falls behind gets fewer, longer deltas carrying exactly the same text,
 *    in the same order; every other message waits as it is;
 * 2. from `closeLimit` waiting messages on — or, where `stallMs` is set (WebSocket), when the
 *    transport has taken nothing for that long while messages wait — the client is taken as not
 *    reading at all: the reason is logged and the connection closed (a WebSocket with code 1008).
 *    It reconnects, initializes again and resynchronizes with `thread/read`, which the protocol
 *    already asks of reconnecting clients.
 *
 * Writes are also batched: the first write of a tick corks the underlying stream (when one is
 * given) and the next tick uncorks it, so the messages one engine event or one read of the model's
 * stream produces leave in one system call instead of one each.
 */
import { ConnectionClosedError, type MessageTransport, type TransportSink } from "@nexo/wire";
import { isStreamingDelta } from "./delivery-filter.js";

export interface OutboxLimits {
  /** Waiting messages from which same-item deltas are merged. Default 64. */
  coalesceFrom?: number;
  /** Waiting messages from which the connection is closed. Default 16,384. */
  closeLimit?: number;
  /** Milliseconds without any progress, while messages wait, before the connection is closed. */
  stallMs?: number;
}

export const DEFAULT_COALESCE_FROM = 64;
export const DEFAULT_CLOSE_LIMIT = 16_384;
/** The WebSocket listener's stall limit: a minute without the socket taking a byte. */
export const DEFAULT_WEBSOCKET_STALL_MS = 60_000;

/** What can be corked for a tick: a Node Writable (stdout, a socket). */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

export interface OutboxOptions extends OutboxLimits {
  /** Closes the connection when the client is taken as not reading; gets the logged reason. */
  onOverflow: (reason: string) => void;
  /** The stream under the transport, corked for the rest of a tick on its first write. */
  stream?: Corkable | undefined;
}

interface Frame {
  jsonrpc: "2.0";
  method?: string;
  params?: Record<string, unknown>;
}

interface Waiting {
  frame: Frame;
  promise: Promise<void>;
  resolve: (value: Promise<void>) => void;
  reject: (error: Error) => void;
  /** Whether `frame` is this outbox's own copy (a merged delta), safe to extend in place. */
  owned: boolean;
}

export class Outbox implements MessageTransport {
  /** Deltas merged into an earlier waiting delta because the client fell behind. */
  coalescedDeltas = 0;
  private readonly inner: MessageTransport;
  private readonly coalesceFrom: number;
  private readonly closeLimit: number;
  private readonly stallMs: number | undefined;
  private readonly onOverflow: (reason: string) => void;
  private readonly stream: Corkable | undefined;
  /** Messages waiting for the transport, oldest at `head`. */
  private waiting: Waiting[] = [];
  private head = 0;
  /** Whether a pump is already hooked on the transport's last queued send. */
  private hooked = false;
  private corked = false;
  private closedError: Error | undefined;
  /** Set once the client was taken as not reading; the connection is closing. */
  private overflowed = false;
  private lastProgress = 0;
  private stallTimer: NodeJS.Timeout | undefined;

  constructor(inner: MessageTransport, options: OutboxOptions) {
    this.inner = inner;
    this.coalesceFrom = options.coalesceFrom ?? DEFAULT_COALESCE_FROM;
    this.closeLimit = options.closeLimit ?? DEFAULT_CLOSE_LIMIT;
    this.stallMs = options.stallMs;
    this.onOverflow = options.onOverflow;
    this.stream = options.stream;
    if (!(this.coalesceFrom >= 1)) throw new RangeError("coalesceFrom must be at least 1");
    if (this.closeLimit < this.coalesceFrom) throw new RangeError("closeLimit must be at least coalesceFrom");
  }

  start(sink: TransportSink): void {
    this.inner.start(sink);
  }

  send(message: unknown): Promise<void> {
    if (this.closedError) return Promise.reject(this.closedError);
    if (this.overflowed) return Promise.reject(new ConnectionClosedError("slow consumer"));
    if (this.head === this.waiting.length && this.inner.queuedMessages === 0) {
      this.cork();
      const sent = this.inner.send(message);
      // The transport started holding messages back: this one waits inside it; pump behind it.
      if (this.inner.queuedMessages > 0) this.hook(sent);
      return sent;
    }
    return this.enqueue(message as Frame);
  }

  /** Messages not yet handed to the other side: the ones waiting here and in the transport. */
  get queuedMessages(): number {
    return this.waiting.length - this.head + this.inner.queuedMessages;
  }

  close(reason: string): void {
    if (this.closedError) return;
    this.closedError = new ConnectionClosedError(reason);
    this.clearStallTimer();
    const left = this.waiting.slice(this.head);
    this.waiting = [];
    this.head = 0;
    for (const entry of left) entry.reject(this.closedError);
    this.inner.close(reason);
  }

  private enqueue(frame: Frame): Promise<void> {
    const count = this.waiting.length - this.head;
    if (count >= this.coalesceFrom && this.merge(frame))
      return this.waiting[this.waiting.length - 1]!.promise;
    if (count >= this.closeLimit) {
      this.overflow(
        `slow consumer: ${count} messages waiting for a client that does not read (limit ${this.closeLimit})`,
      );
      return Promise.reject(new ConnectionClosedError("slow consumer"));
    }
    let resolve!: (value: Promise<void>) => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    if (count === 0) {
      this.lastProgress = Date.now();
      this.armStallTimer();
    }
    this.waiting.push({ frame, promise, resolve, reject, owned: false });
    return promise;
  }

  /** Appends `frame`'s delta to the last waiting message when both are deltas of the same item. */
  private merge(frame: Frame): boolean {
    const method = frame.method;
    if (method === undefined || !isStreamingDelta(method)) return false;
    const tail = this.waiting[this.waiting.length - 1]!;
    if (tail.frame.method !== method) return false;
    const before = tail.frame.params;
    const params = frame.params;
    if (before === undefined || params === undefined) return false;
    if (typeof before.delta !== "string" || typeof params.delta !== "string") return false;
    for (const key in params) if (key !== "delta" && params[key] !== before[key]) return false;
    for (const key in before) if (!(key in params)) return false;
    if (tail.owned) {
      before.delta = before.delta + params.delta;
    } else {
      // The params object may be shared with other connections (a broadcast): extend a copy.
      tail.frame = { jsonrpc: "2.0", method, params: { ...before, delta: before.delta + params.delta } };
      tail.owned = true;
    }
    this.coalescedDeltas++;
    return true;
  }

  /** Hands waiting messages to the transport until it holds one back again. */
  private readonly pump = (): void => {
    this.hooked = false;
    if (this.closedError) return;
    this.lastProgress = Date.now();
    let last: Promise<void> | undefined;
    if (this.head < this.waiting.length) this.cork();
    while (this.head < this.waiting.length && this.inner.queuedMessages === 0) {
      const entry = this.waiting[this.head]!;
      this.waiting[this.head++] = undefined as unknown as Waiting;
      last = this.inner.send(entry.frame);
      entry.resolve(last);
    }
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
      this.clearStallTimer();
    } else if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
    if (last !== undefined && this.inner.queuedMessages > 0) this.hook(last);
  };

  private hook(sent: Promise<void>): void {
    if (this.hooked) return;
    this.hooked = true;
    // A send that fails (a message over the size cap) still frees the transport for the next one.
    sent.then(this.pump, this.pump);
  }

  private cork(): void {
    if (this.corked || this.stream === undefined) return;
    this.corked = true;
    this.stream.cork();
    process.nextTick(this.uncork);
  }

  private readonly uncork = (): void => {
    this.corked = false;
    this.stream?.uncork();
  };

  private armStallTimer(): void {
    if (this.stallMs === undefined || this.stallTimer !== undefined) return;
    this.stallTimer = setTimeout(this.checkStall, this.stallMs);
    this.stallTimer.unref();
  }

  private clearStallTimer(): void {
    if (this.stallTimer === undefined) return;
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }

  private readonly checkStall = (): void => {
    this.stallTimer = undefined;
    if (this.closedError || this.head === this.waiting.length || this.stallMs === undefined) return;
    const idle = Date.now() - this.lastProgress;
    if (idle >= this.stallMs) {
      this.overflow(
        `slow consumer: the client has read nothing for ${(idle / 1000).toFixed(1)} s while ${this.waiting.length - this.head} messages wait`,
      );
      return;
    }
    this.stallTimer = setTimeout(this.checkStall, this.stallMs - idle);
    this.stallTimer.unref();
  };

  private overflow(reason: string): void {
    if (this.overflowed) return;
    this.overflowed = true;
    this.onOverflow(reason);
  }
}
