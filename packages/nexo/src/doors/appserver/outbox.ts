/**
 * What a connection sends, bounded. Turns are owned by the server and never wait for a client, so a
 * client that reads slowly must not make anything else wait or hold unbounded memory. The measure
 * is the number of messages waiting behind the transport's backpressure (stdout that is not being
 * read, a WebSocket whose buffer is past its high-water mark).
 *
 * The overflow policy, in two steps:
 * 1. from `deltaLimit` waiting messages on, streaming deltas (`item/.../delta`, `outputDelta`,
 *    `argumentsDelta`) are dropped for this connection and counted: they are previews of text that
 *    `item/completed` and `turn/completed` carry whole, so a client that falls behind still ends
 *    with the full, correct state — it only loses the animation;
 * 2. from `closeLimit` waiting messages on, the client is taken as not reading at all and the
 *    connection is closed (a WebSocket with close code 1008). It reconnects, initializes again and
 *    resynchronizes with `thread/read`, which the protocol already asks of reconnecting clients.
 *
 * Responses and server→client requests are never dropped; they count against the close limit.
 */
import type { JsonRpcPeer } from "@nexo/wire";

export interface OutboxLimits {
  /** Waiting messages from which deltas are dropped. Default 512. */
  deltaLimit?: number;
  /** Waiting messages from which the connection is closed. Default 16,384. */
  closeLimit?: number;
}

export const DEFAULT_DELTA_LIMIT = 512;
export const DEFAULT_CLOSE_LIMIT = 16_384;

const ignore = (): void => undefined;

export class Outbox {
  private readonly deltaLimit: number;
  private readonly closeLimit: number;
  /** Deltas dropped because the client fell behind. */
  droppedDeltas = 0;
  private overflowed = false;

  constructor(
    private readonly peer: JsonRpcPeer,
    private readonly onOverflow: (reason: string) => void,
    limits: OutboxLimits = {},
  ) {
    this.deltaLimit = limits.deltaLimit ?? DEFAULT_DELTA_LIMIT;
    this.closeLimit = limits.closeLimit ?? DEFAULT_CLOSE_LIMIT;
    if (this.closeLimit < this.deltaLimit) throw new RangeError("closeLimit must be at least deltaLimit");
  }

  /** Messages waiting behind backpressure now. */
  get waiting(): number {
    return this.peer.queuedFrames;
  }

  /** Sends a notification under the policy; returns false when it was dropped. */
  notify(method: string, params: unknown, isDelta: boolean): boolean {
    if (this.peer.isClosed) return false;
    const waiting = this.peer.queuedFrames;
    if (isDelta && waiting >= this.deltaLimit) {
      this.droppedDeltas++;
      return false;
    }
    if (waiting >= this.closeLimit) {
      this.overflow(waiting);
      return false;
    }
    // A send to a closed connection rejects; the connection's end is handled where it closes.
    this.peer.notify(method, params).catch(ignore);
    return true;
  }

  /** Whether a request or response may still be queued; closes the connection when it may not. */
  admit(): boolean {
    if (this.peer.isClosed) return false;
    const waiting = this.peer.queuedFrames;
    if (waiting >= this.closeLimit) {
      this.overflow(waiting);
      return false;
    }
    return true;
  }

  private overflow(waiting: number): void {
    if (this.overflowed) return;
    this.overflowed = true;
    this.onOverflow(
      `slow consumer: ${waiting} messages waiting for a client that does not read (limit ${this.closeLimit})`,
    );
  }
}
