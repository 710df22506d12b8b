/**
 * The wire benchmark's contenders, each an echo child over stdio and the client that talks to it:
 *   bare   — a JSON-lines echo child and a hand-written client (readline + JSON.parse/stringify): the floor
 *   nexo   — our JsonRpcPeer on both ends (`dist` picks another build of it, on both ends, for A/B runs)
 *   vscode — vscode-jsonrpc on both ends
 * Shared by wire.bench.ts (wall-clock rates) and wire/cpu.ts (CPU per round trip), so both measure
 * the same set-up. Each client carries its child's pid for reading the child's CPU time.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { JsonRpcPeer } from "@nexo/wire";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node.js";

export interface Client {
  /** The echo child's pid. */
  pid: number;
  call(params: unknown): Promise<unknown>;
  close(): void;
}

/** One of the echo children in this folder, its stdin and stdout piped to us. */
export function echoChild(
  script: string,
  args: string[] = [],
): ChildProcessByStdio<Writable, Readable, null> {
  return spawn(process.execPath, [fileURLToPath(new URL(`./${script}`, import.meta.url)), ...args], {
    stdio: ["pipe", "pipe", "inherit"],
  });
}

export function bareClient(): Client {
  const proc = echoChild("echo-bare.mjs");
  const waiting = new Map<number, (v: unknown) => void>();
  let next = 0;
  createInterface({ input: proc.stdout, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
    const msg = JSON.parse(line) as { id: number; result: unknown };
    const resolve = waiting.get(msg.id);
    waiting.delete(msg.id);
    resolve?.(msg.result);
  });
  return {
    pid: proc.pid!,
    call: (params) =>
      new Promise((resolve) => {
        const id = ++next;
        waiting.set(id, resolve);
        proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method: "echo", params })}\n`);
      }),
    close: () => proc.kill(),
  };
}

/** Our peer on both ends; `dist` is another build's packages/wire/dist (the child imports the same one). */
export async function nexoClient(dist?: string): Promise<Client> {
  const Peer: typeof JsonRpcPeer = dist
    ? ((await import(pathToFileURL(`${dist}/index.js`).href)) as { JsonRpcPeer: typeof JsonRpcPeer })
        .JsonRpcPeer
    : JsonRpcPeer;
  const proc = echoChild("echo-nexo.mjs", dist ? [dist] : []);
  const peer = Peer.overStreams({ input: proc.stdout, output: proc.stdin, name: "bench-client" });
  return {
    pid: proc.pid!,
    call: (params) => peer.request("echo", params),
    close: () => {
      peer.close();
      proc.kill();
    },
  };
}

export function vscodeClient(): Client {
  const proc = echoChild("echo-vscode.mjs");
  const connection = createMessageConnection(
    new StreamMessageReader(proc.stdout),
    new StreamMessageWriter(proc.stdin),
  );
  connection.listen();
  return {
    pid: proc.pid!,
    call: (params) => connection.sendRequest("echo", params),
    close: () => {
      connection.dispose();
      proc.kill();
    },
  };
}
