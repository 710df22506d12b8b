/**
 * The seam under the JSON-RPC peer. A transport moves whole messages — one JSON value each — and
 * knows nothing of requests, ids or replies; the peer (peer.ts) knows nothing of bytes, lines or
 * frames. So one peer serves a child's stdio (LineTransport) and a WebSocket (WebSocketTransport)
 * with the same ids, timeouts, cancellation and close semantics.
 *
 * The contract every transport keeps:
 * - `start(sink)` is called once, by the peer, before anything is delivered;
 * - each usable incoming message is parsed and passed to `sink.message` in arrival order; anything
 *   unusable (a line or frame over the size cap, invalid UTF-8, unparseable JSON, a binary frame)
 *   goes to `sink.problem` and is dropped, and reading goes on;
 * - `send` serializes under the connection's outbound rules (strict JSON, size cap) and resolves
 *   once the message is accepted; while the other side reads slowly, sends wait in order;
 * - the connection ending for any reason is reported once through `sink.closed`; `close()` from
 *   this side fails every waiting send with ConnectionClosedError and reports nothing back.
 */
import { type FrameProblem, LineDecoder } from "./framing.js";

/** Something unusable arrived and was dropped; the connection goes on. */
export type TransportProblem =
  | FrameProblem
  | { kind: "parse_error"; detail: string }
  | { kind: "binary_message"; bytes: number };

/** Why a connection ended. */
export interface CloseInfo {
  reason: string;
  /** The WebSocket close code, when the connection was a WebSocket. */
  code?: number;
}

/** Where a transport delivers what it reads. The peer is the only implementation. */
export interface TransportSink {
  /** One parsed JSON value (not yet known to be a valid JSON-RPC message). */
  message(value: unknown): void;
  problem(problem: TransportProblem): void;
  /** The connection ended; `error` is set when a failure ended it. Called at most once. */
  closed(info: CloseInfo, error?: Error): void;
}

export interface MessageTransport {
  /** Begins delivering to `sink`. Called once. */
  start(sink: TransportSink): void;
  /**
   * Sends one message. Rejects with TypeError (not representable as JSON in strict mode),
   * FrameTooLargeError (over the outbound cap) or ConnectionClosedError.
   */
  send(message: unknown): Promise<void>;
  /**
   * Sends one message given as its JSON text (what `JSON.stringify` produced), under the same
   * size cap and ordering as `send`. Optional: the peer sends a frame with a pre-serialized
   * result or params (JsonText) through `send`, the text parsed back, when a transport lacks it.
   */
  sendSerialized?(json: string): Promise<void>;
  /** Stops reading, fails waiting sends with ConnectionClosedError(reason), ends the connection. */
  close(reason: string): void;
  /** Messages waiting behind backpressure. */
  readonly queuedMessages: number;
}

/** Parses one decoded line and hands the result (or the parse problem) to the sink. */
function deliverJson(sink: TransportSink, text: string): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    sink.problem({ kind: "parse_error", detail: (error as Error).message });
    return;
  }
  sink.message(value);
}

/** A LineDecoder whose lines go to the sink as parsed messages and whose drops as problems. */
export function jsonLineDecoder(sink: TransportSink, maxFrameBytes: number): LineDecoder {
  return new LineDecoder(
    { frame: (line) => deliverJson(sink, line), problem: (problem) => sink.problem(problem) },
    { maxFrameBytes },
  );
}
