/**
 * Test helpers for the peer: a peer with the raw other end of its streams, and replies reduced to
 * what a test compares.
 */
import { PassThrough } from "node:stream";
import { JsonRpcPeer, type ProtocolProblem, type StreamPeerOptions } from "@nexo/wire";

/** A peer plus the raw other end, to send arbitrary bytes and read exact frames. */
export function rawPeer(options: Partial<StreamPeerOptions> = {}) {
  const toPeer = new PassThrough();
  const fromPeer = new PassThrough();
  const problems: ProtocolProblem[] = [];
  const peer = JsonRpcPeer.overStreams({
    input: toPeer,
    output: fromPeer,
    onProtocolProblem: (p) => problems.push(p),
    ...options,
  });
  const lines: unknown[] = [];
  let buffered = "";
  const waiters: Array<() => void> = [];
  fromPeer.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let nl = buffered.indexOf("\n");
    while (nl !== -1) {
      lines.push(JSON.parse(buffered.slice(0, nl)));
      buffered = buffered.slice(nl + 1);
      nl = buffered.indexOf("\n");
    }
    for (const w of waiters.splice(0)) w();
  });
  async function nextLines(count: number): Promise<unknown[]> {
    while (lines.length < count) await new Promise<void>((r) => waiters.push(r));
    return lines.splice(0, count);
  }
  return { peer, toPeer, fromPeer, problems, nextLines, lines };
}

/** Replies as `[id, error code or result]`, to compare a batch of them at a glance. */
export function outcomes(frames: readonly unknown[]): Array<[unknown, unknown]> {
  return frames.map((frame) => {
    const reply = frame as { id?: unknown; error?: { code?: unknown }; result?: unknown };
    return [reply.id, reply.error?.code ?? reply.result];
  });
}
