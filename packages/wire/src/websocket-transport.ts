/**
 * Messages over a WebSocket: one JSON-RPC message per text frame (the AppServer's WebSocket mode).
 *
 * Receiving is lenient where real clients need it: a frame may end with a newline and may hold
 * several newline-separated messages (DotCraft Desktop sends `line + "\n"` per frame), so each
 * frame goes through the same LineDecoder as stdio and its last line is delivered at the frame's
 * end — a message never continues into the next frame. A binary frame, a message over the size
 * cap and unparseable JSON are problems reported to the peer, never crashes.
 *
 * Sending: each message is one text frame. Backpressure is read from `bufferedAmount`: once it
 * would pass `highWaterMarkBytes`, later sends wait in order until the socket has flushed what it
 * holds. The overflow policy: when what waits (the socket's buffer plus our queue) would pass
 * `maxBufferedBytes`, the other side is not reading; the connection is closed with 1008 and every
 * waiting send and pending request fails with ConnectionClosedError. A disconnected client
 * reconnects and starts again, which beats a server holding unbounded memory for it.
 *
 * Lives in wire, next to the line transport, because the peer's tests and any TypeScript client of
 * a nexo WebSocket need it as much as the daemon does; it is typed against the few members of the
 * `ws` package's WebSocket it uses (`WebSocketLike`), so `@nexo/wire` — and every plugin that
 * depends on it through the SDK — carries no WebSocket library of its own.
 */
import { ConnectionClosedError } from "./errors.js";
import { DEFAULT_MAX_FRAME_BYTES, JsonEncoder, type LineDecoder } from "./framing.js";
import { type CloseInfo, jsonLineDecoder, type MessageTransport, type TransportSink } from "./transport.js";

/** The members of a `ws` WebSocket (package `ws`, v8) this transport uses; `ws`'s class fits as it is. */
export interface WebSocketLike {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string, cb?: (error?: Error) => void): void;
  close(code?: number, reason?: string): void;
  on(event: "open" | "message" | "close" | "error", listener: (...args: never[]) => void): unknown;
  off(event: "open" | "message" | "close" | "error", listener: (...args: never[]) => void): unknown;
}

const CONNECTING = 0;
const OPEN = 1;

/** Close codes (RFC 6455 §7.4.1) as the words a close reason uses. */
const CLOSE_CODES: Readonly<Record<number, string>> = {
  1000: "normal closure",
  1001: "going away",
  1002: "protocol error",
  1003: "unsupported data",
  1005: "no status received",
  1006: "connection lost without a close frame",
  1007: "invalid frame payload (not UTF-8)",
  1008: "policy violation",
  1009: "message too big",
  1011: "internal error",
  1012: "service restart",
  1013: "try again later",
};

/** The code this side closes with when the other side stops reading (see the overflow policy). */
export const WS_CLOSE_OVERFLOW = 1008;

export interface WebSocketTransportOptions {
  /** Inbound cap per message in bytes. Default 1 MiB. The `ws` server's `maxPayload` caps a frame. */
  maxMessageBytes?: number;
  /** Outbound cap per message in bytes. Default: none. */
  maxOutgoingMessageBytes?: number;
  /** Reject NaN/Infinity/BigInt on send instead of sending `null`. */
  strictJson?: boolean;
  /** Sends start waiting once the socket holds this many unsent bytes. Default 1 MiB. */
  highWaterMarkBytes?: number;
  /** Unsent bytes (socket buffer + waiting sends) beyond which the connection is closed. Default 16 MiB. */
  maxBufferedBytes?: number;
}

interface QueuedSend {
  json: string;
  bytes: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

const RESOLVED = Promise.resolve();

export class WebSocketTransport implements MessageTransport {
  private readonly ws: WebSocketLike;
  private readonly encoder: JsonEncoder;
  private readonly maxMessageBytes: number;
  private readonly highWaterMark: number;
  private readonly maxBuffered: number;
  private readonly queue: QueuedSend[] = [];
  private queuedBytes = 0;
  /** Set while the socket is not open yet or holds more than the high-water mark. */
  private blocked: boolean;
  private sink: TransportSink | undefined;
  private decoder: LineDecoder | undefined;
  private closedError: ConnectionClosedError | undefined;
  private lastError: Error | undefined;

  constructor(ws: WebSocketLike, options: WebSocketTransportOptions = {}) {
    this.ws = ws;
    this.encoder = new JsonEncoder({
      maxFrameBytes: options.maxOutgoingMessageBytes,
      strictJson: options.strictJson,
    });
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.highWaterMark = options.highWaterMarkBytes ?? 1 << 20;
    this.maxBuffered = options.maxBufferedBytes ?? 16 << 20;
    if (this.maxBuffered < this.highWaterMark) {
      throw new RangeError("maxBufferedBytes must be at least highWaterMarkBytes");
    }
    this.blocked = ws.readyState !== OPEN;
  }

  start(sink: TransportSink): void {
    if (this.sink) throw new Error("WebSocketTransport.start() called twice");
    this.sink = sink;
    this.decoder = jsonLineDecoder(sink, this.maxMessageBytes);
    this.ws.on("message", this.onMessage);
    this.ws.on("close", this.onClose);
    // Stays attached after close: ws reports late failures as 'error' events.
    this.ws.on("error", this.onError);
    if (this.ws.readyState === CONNECTING) this.ws.on("open", this.onOpen);
    else if (this.ws.readyState !== OPEN) this.ended({ reason: "websocket already closed" });
  }

  send(message: unknown): Promise<void> {
    if (this.closedError) return Promise.reject(this.closedError);
    let json: string;
    try {
      json = this.encoder.serialize(message);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.sendSerialized(json);
  }

  sendSerialized(json: string): Promise<void> {
    if (this.closedError) return Promise.reject(this.closedError);
    const tooLarge = this.encoder.checkSize(json);
    if (tooLarge) return Promise.reject(tooLarge);
    if (!this.blocked) {
      this.put(json);
      return RESOLVED;
    }
    const bytes = Buffer.byteLength(json, "utf8");
    const waiting = this.ws.bufferedAmount + this.queuedBytes + bytes;
    if (waiting > this.maxBuffered) {
      this.overflow(waiting);
      return Promise.reject(this.closedError);
    }
    this.queuedBytes += bytes;
    return new Promise<void>((resolve, reject) => this.queue.push({ json, bytes, resolve, reject }));
  }

  get queuedMessages(): number {
    return this.queue.length;
  }

  close(reason: string): void {
    this.shut(reason, 1000);
  }

  /** Fails waiting sends, stops reading and starts the closing handshake (ws bounds it itself). */
  private shut(reason: string, code: number): void {
    if (this.closedError) return;
    this.closedError = new ConnectionClosedError(reason);
    this.ws.off("message", this.onMessage);
    this.ws.off("close", this.onClose);
    this.ws.off("open", this.onOpen);
    for (const item of this.queue.splice(0)) item.reject(this.closedError);
    this.queuedBytes = 0;
    if (this.ws.readyState === OPEN || this.ws.readyState === CONNECTING) {
      this.ws.close(code, truncateReason(reason));
    }
  }

  private ended(info: CloseInfo, error?: Error): void {
    if (this.closedError) return;
    this.sink?.closed(info, error);
    this.shut(info.reason, info.code ?? 1000);
  }

  /** Sends one frame; the frame that reaches the high-water mark carries the callback that unblocks. */
  private put(json: string): void {
    // json.length undercounts multi-byte text; the mark is a threshold, not an exact budget.
    if (this.ws.bufferedAmount + json.length >= this.highWaterMark) {
      this.blocked = true;
      this.ws.send(json, this.onFlushed);
    } else {
      this.ws.send(json);
    }
  }

  private readonly onFlushed = (error?: Error): void => {
    // A failed write closes the socket; the 'close' event fails what still waits.
    if (error || this.closedError) return;
    this.blocked = false;
    this.flush();
  };

  private readonly onOpen = (): void => {
    this.blocked = false;
    this.flush();
  };

  private flush(): void {
    while (!this.blocked && this.queue.length > 0 && !this.closedError) {
      const item = this.queue.shift()!;
      this.queuedBytes -= item.bytes;
      this.put(item.json);
      item.resolve();
    }
  }

  private overflow(waiting: number): void {
    const reason = `send buffer overflow: ${waiting} bytes waiting for a reader that does not read (limit ${this.maxBuffered})`;
    this.sink?.closed({ reason, code: WS_CLOSE_OVERFLOW });
    this.shut(reason, WS_CLOSE_OVERFLOW);
  }

  private readonly onMessage = (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void => {
    const bytes = toBuffer(data);
    if (isBinary) {
      this.sink!.problem({ kind: "binary_message", bytes: bytes.length });
      return;
    }
    this.decoder!.push(bytes);
    this.decoder!.end();
  };

  private readonly onClose = (received: number, reason: Buffer): void => {
    const code = sentCloseCode(this.lastError) ?? received;
    this.ended(
      { reason: describeClose(code, reason.toString("utf8"), this.lastError), code },
      this.lastError,
    );
  };

  private readonly onError = (error: Error): void => {
    this.lastError = error;
  };
}

/** `websocket closed (1009 message too big): Max payload size exceeded`. */
export function describeClose(code: number, reason: string, error?: Error): string {
  const words = CLOSE_CODES[code];
  const detail = reason !== "" ? reason : error?.message;
  return `websocket closed (${code}${words ? ` ${words}` : ""})${detail ? `: ${detail}` : ""}`;
}

/**
 * When `ws` rejects what the other side sent (a frame over `maxPayload`, invalid UTF-8, a broken
 * frame) it sends a close frame with the matching code and stops reading, so locally the close
 * shows as 1006. The code it sent is the truth about this connection; ws names it in `error.code`.
 */
function sentCloseCode(error: Error | undefined): number | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== "string" || !code.startsWith("WS_ERR_")) return undefined;
  if (code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") return 1009;
  if (code === "WS_ERR_INVALID_UTF8") return 1007;
  return 1002;
}

function toBuffer(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** A close frame's reason may hold at most 123 bytes of UTF-8. */
function truncateReason(reason: string): string {
  if (Buffer.byteLength(reason, "utf8") <= 123) return reason;
  let cut = reason.slice(0, 120);
  while (Buffer.byteLength(cut, "utf8") > 120) cut = cut.slice(0, -1);
  return `${cut}...`;
}
