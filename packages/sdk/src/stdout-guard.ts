/**
 * Stdout belongs to the protocol. A stray `console.log` in plugin code would otherwise land in the
 * middle of the host's frame stream.
 *
 * While the guard is installed, everything written through `process.stdout.write` (so
 * `console.log`, `console.info`, `console.dir`, libraries that print) goes to stderr instead, one
 * line at a time, each prefixed `[stdout-guard] `. The SDK's own frames never pass through the
 * patched method: they are written with the original `write`, captured when this module loads,
 * before any patching. So plugin output can neither corrupt a frame, nor be glued to one (a partial
 * line without a newline stays in the guard's buffer, not in stdout), nor swallow one — the
 * upstream guard wrote frames through the patched method and lost the shutdown ack that way.
 * Unlike upstream, lines that look like JSON are diverted too: a forged frame must not reach the
 * host either.
 *
 * Output written straight to file descriptor 1 (`fs.writeSync(1, …)`, native addons, child
 * processes inheriting stdout) bypasses any JavaScript-level guard; spawn children with
 * `stdio: ["pipe", "pipe", "inherit"]` or similar.
 */

import { Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

export const STDOUT_GUARD_MARKER = "[stdout-guard]";

/** A partial line longer than this is flushed to stderr without waiting for its newline. */
const MAX_PENDING_CHARS = 8192;

type WriteFn = typeof process.stdout.write;

// Captured at load time: the SDK's frames always go through this, whoever patches stdout later.
const originalStdoutWrite: WriteFn = process.stdout.write;

let installedWrite: WriteFn | undefined;
let pending = "";
let decoder = new StringDecoder("utf8");

function emitLine(line: string): void {
  process.stderr.write(`${STDOUT_GUARD_MARKER} ${line}\n`);
}

function divert(text: string): void {
  pending += text;
  let newline = pending.indexOf("\n");
  while (newline !== -1) {
    const line = pending.slice(0, newline);
    emitLine(line.endsWith("\r") ? line.slice(0, -1) : line);
    pending = pending.slice(newline + 1);
    newline = pending.indexOf("\n");
  }
  if (pending.length > MAX_PENDING_CHARS) {
    emitLine(pending);
    pending = "";
  }
}

function toText(chunk: unknown, encoding: BufferEncoding | undefined): string {
  if (typeof chunk === "string") {
    if (encoding === undefined || encoding === "utf8" || encoding === "utf-8") return chunk;
    return decoder.write(Buffer.from(chunk, encoding));
  }
  if (chunk instanceof Uint8Array)
    return decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  return String(chunk);
}

function guardedWrite(
  chunk: unknown,
  encodingOrCallback?: BufferEncoding | ((error?: Error | null) => void),
  callback?: (error?: Error | null) => void,
): boolean {
  const encoding = typeof encodingOrCallback === "string" ? encodingOrCallback : undefined;
  const done = typeof encodingOrCallback === "function" ? encodingOrCallback : callback;
  divert(toText(chunk, encoding));
  if (done) process.nextTick(done, null);
  return true;
}

/** Sends a buffered partial line (one without its newline yet) to stderr now. */
export function flushStdoutGuard(): void {
  const rest = pending + decoder.end();
  decoder = new StringDecoder("utf8");
  pending = "";
  if (rest !== "") emitLine(rest);
}

let exitHookInstalled = false;

/** Diverts `process.stdout.write` to stderr. Idempotent. */
export function installStdoutGuard(): void {
  if (installedWrite !== undefined) return;
  installedWrite = guardedWrite as WriteFn;
  process.stdout.write = installedWrite;
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", flushStdoutGuard);
  }
}

/** Restores `process.stdout.write` (unless someone patched it again since) and flushes. */
export function uninstallStdoutGuard(): void {
  if (installedWrite === undefined) return;
  if (process.stdout.write === installedWrite) process.stdout.write = originalStdoutWrite;
  installedWrite = undefined;
  flushStdoutGuard();
}

export function isStdoutGuardInstalled(): boolean {
  return installedWrite !== undefined && process.stdout.write === installedWrite;
}

/**
 * The stream the SDK writes its frames to: the real stdout through the captured `write`, with
 * stdout's own buffering, corking and backpressure (its `drain` is passed on).
 */
export function createFrameOutput(): Writable {
  const stdout = process.stdout;
  const output = new StdoutFrames(stdout);
  const onDrain = () => output.emit("drain");
  // A host that closed its end makes the next write fail with EPIPE; without a listener that
  // error would crash the plugin instead of ending the connection.
  const onStdoutError = (error: Error) => output.destroy(error);
  stdout.on("drain", onDrain);
  stdout.on("error", onStdoutError);
  output.once("close", () => {
    stdout.off("drain", onDrain);
    stdout.off("error", onStdoutError);
  });
  return output;
}

/**
 * A Writable whose writes, corks and uncorks go straight to stdout (through the captured `write`,
 * so the guard never sees a frame). It keeps no buffer of its own: a second stream layer in front
 * of stdout cost a deferred callback and a buffer walk per frame on the tool.invoke path
 * (docs/performance.md). Ending it leaves stdout open: stdout is the process's.
 */
class StdoutFrames extends Writable {
  private readonly stdout: NodeJS.WriteStream;

  constructor(stdout: NodeJS.WriteStream) {
    super({
      final(callback) {
        callback();
      },
    });
    this.stdout = stdout;
  }

  override write(
    chunk: string | Uint8Array,
    encodingOrCallback?: BufferEncoding | ((error?: Error | null) => void),
    callback?: (error?: Error | null) => void,
  ): boolean {
    if (this.destroyed || this.writableEnded) {
      return super.write(chunk, encodingOrCallback as BufferEncoding, callback as () => void);
    }
    return (originalStdoutWrite as (...args: unknown[]) => boolean).call(
      this.stdout,
      chunk,
      encodingOrCallback,
      callback,
    );
  }

  override cork(): void {
    this.stdout.cork();
  }

  override uncork(): void {
    this.stdout.uncork();
  }
}
