/**
 * Messages as `\n`-terminated JSON lines over a readable/writable pair: a child's stdio, our own
 * stdin/stdout, or any pair of Node streams. Framing rules (size cap, invalid UTF-8, CRLF, blank
 * lines, backpressure) are framing.ts's; this file only connects them to the peer.
 */
import type { Readable, Writable } from "node:stream";
import { ConnectionClosedError } from "./errors.js";
import { DEFAULT_MAX_FRAME_BYTES, FrameWriter, type LineDecoder } from "./framing.js";
import { jsonLineDecoder, type MessageTransport, type TransportSink } from "./transport.js";

export interface LineTransportOptions {
  input: Readable;
  output: Writable;
  /** Inbound line cap in bytes, newline excluded. Default 1 MiB. */
  maxFrameBytes?: number;
  /** Outbound line cap in bytes. Default: none. */
  maxOutgoingFrameBytes?: number;
  /** Reject NaN/Infinity/BigInt on send instead of sending `null`. */
  strictJson?: boolean;
  /** End the output stream when the connection closes. Default true. */
  endOutputOnClose?: boolean;
  /** Send the frames written in one tick in one system call (FrameWriter's `coalesce`). Default false. */
  coalesce?: boolean;
  /** With `coalesce`, at most this many frames per write (FrameWriter's `coalesceMaxFrames`). */
  coalesceMaxFrames?: number;
}

export class LineTransport implements MessageTransport {
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly writer: FrameWriter;
  private readonly maxFrameBytes: number;
  private readonly endOutputOnClose: boolean;
  private decoder: LineDecoder | undefined;
  private sink: TransportSink | undefined;
  private done = false;

  constructor(options: LineTransportOptions) {
    this.input = options.input;
    this.output = options.output;
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.endOutputOnClose = options.endOutputOnClose ?? true;
    this.writer = new FrameWriter(this.output, {
      maxFrameBytes: options.maxOutgoingFrameBytes,
      strictJson: options.strictJson,
      coalesce: options.coalesce,
      coalesceMaxFrames: options.coalesceMaxFrames,
    });
  }

  start(sink: TransportSink): void {
    if (this.sink) throw new Error("LineTransport.start() called twice");
    this.sink = sink;
    this.decoder = jsonLineDecoder(sink, this.maxFrameBytes);
    this.input.on("data", this.onData);
    this.input.on("end", this.onInputEnd);
    this.input.on("close", this.onInputClose);
    // Error listeners stay attached after close: a late EPIPE must not become an uncaught error.
    this.input.on("error", this.onInputError);
    this.output.on("error", this.onOutputError);
  }

  send(message: unknown): Promise<void> {
    return this.writer.write(message);
  }

  sendSerialized(json: string): Promise<void> {
    return this.writer.writeLine(json);
  }

  get queuedMessages(): number {
    return this.writer.queuedFrames;
  }

  close(reason: string): void {
    if (this.done) return;
    this.done = true;
    this.input.off("data", this.onData);
    this.input.off("end", this.onInputEnd);
    this.input.off("close", this.onInputClose);
    this.writer.close(new ConnectionClosedError(reason));
    if (this.endOutputOnClose && !this.output.writableEnded && !this.output.destroyed) this.output.end();
  }

  private ended(reason: string, error?: Error): void {
    if (this.done) return;
    this.sink?.closed({ reason }, error);
    this.close(reason);
  }

  private readonly onData = (chunk: Buffer | string): void => {
    this.decoder!.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);
  };

  private readonly onInputEnd = (): void => {
    this.decoder!.end();
    this.ended("input ended");
  };

  private readonly onInputClose = (): void => this.ended("input closed");

  private readonly onInputError = (error: Error): void => this.ended(`input error: ${error.message}`, error);

  private readonly onOutputError = (error: Error): void =>
    this.ended(`output error: ${error.message}`, error);
}
