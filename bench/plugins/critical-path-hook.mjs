/**
 * Loaded into a process of the plugin benchmark (`node --import`, or imported by the host itself)
 * by bench/plugins/critical-path.ts: for each message, the time from its bytes reaching
 * JavaScript (`Readable.prototype.push` on a net.Socket, that is a pipe) to the process's next
 * write on a net.Socket. At one call in flight that is the work each side does between reading
 * a message and sending the next one, the part of a round trip that the other process waits for.
 * The two wrappers cost every contender the same.
 *
 * A process started with `--import <this file>?dir=<folder>` writes the spans it has collected
 * since the last signal to `<folder>/<pid>.json` on SIGUSR2; the host reads its own with
 * `takeSpans()`.
 */
import { renameSync, writeFileSync } from "node:fs";
import { Socket } from "node:net";
import { Duplex, Readable } from "node:stream";

let arrived = 0;
let spans = [];

const push = Readable.prototype.push;
Readable.prototype.push = function timedPush(chunk, encoding) {
  if (chunk != null && this instanceof Socket) arrived = performance.now();
  return push.call(this, chunk, encoding);
};

// net.Socket's write is Duplex's own copy of Writable's, so that is the one to wrap.
const write = Duplex.prototype.write;
Duplex.prototype.write = function timedWrite(...args) {
  if (arrived > 0 && this instanceof Socket) {
    spans.push((performance.now() - arrived) * 1000);
    arrived = 0;
  }
  return write.apply(this, args);
};

/** The spans (µs) collected since the last call, in this process. */
export function takeSpans() {
  const taken = spans;
  spans = [];
  arrived = 0;
  return taken;
}

const dir = new URL(import.meta.url).searchParams.get("dir");
if (dir !== null) {
  // Written under another name and renamed: the bench polls for the file and must never read it half
  // written (it did, about once in a dozen runs, as "Unexpected end of JSON input").
  process.on("SIGUSR2", () => {
    const file = `${dir}/${process.pid}.json`;
    writeFileSync(`${file}.part`, JSON.stringify(takeSpans()));
    renameSync(`${file}.part`, file);
  });
}
