/**
 * What the AppServer benchmark needs to drive a JSON-RPC server over newline-delimited text (stdio)
 * or WebSocket frames, whichever server it is: nexo's and Codex's app-servers speak the same
 * request/response/notification shapes on the wire.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { round } from "../lib.js";

export const WAIT_MS = 300_000;

export type Message = {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
};

/** A JSON-RPC client over newline-delimited text, however the lines travel. */
export class LineClient {
  private next = 1;
  private readonly waiters: Array<{
    test: (m: Message) => boolean;
    resolve: (m: Message) => void;
    reject: (error: Error) => void;
  }> = [];
  private closed: Error | undefined;
  private rest = "";
  onMessage: (m: Message) => void = () => undefined;

  constructor(private readonly write: (line: string) => void) {}

  feed(text: string): void {
    this.rest += text;
    for (let nl = this.rest.indexOf("\n"); nl !== -1; nl = this.rest.indexOf("\n")) {
      const line = this.rest.slice(0, nl);
      this.rest = this.rest.slice(nl + 1);
      if (line.trim()) this.deliver(JSON.parse(line) as Message);
    }
  }

  deliver(message: Message): void {
    this.onMessage(message);
    const at = this.waiters.findIndex((w) => w.test(message));
    if (at !== -1) this.waiters.splice(at, 1)[0]!.resolve(message);
  }

  waitFor(test: (m: Message) => boolean, what: string): Promise<Message> {
    if (this.closed) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS);
      this.waiters.push({
        test,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
    });
  }

  /** The server is gone: every wait fails now instead of at its timeout. */
  close(reason: string): void {
    if (this.closed) return;
    this.closed = new Error(reason);
    for (const waiter of this.waiters.splice(0)) waiter.reject(this.closed);
  }

  async request(method: string, params: unknown): Promise<Message> {
    const id = this.next++;
    this.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    const reply = await this.waitFor((m) => m.id === id && m.method === undefined, `the reply to ${method}`);
    if (reply.error) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
    return reply;
  }

  notify(method: string, params: unknown): void {
    this.write(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }
}

/** The `initialize` both servers accept (each ignores the other's extra fields). */
export const INITIALIZE_PARAMS = {
  clientInfo: { name: "bench", title: "bench", version: "1.0.0" },
  capabilities: { approvalSupport: true, streamingSupport: true },
};

/** Peak resident set of a live process, in MiB (Linux). */
export function peakRssMiB(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? round(Number(match[1]) / 1024, 1) : Number.NaN;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()));
}

export async function stop(child: ChildProcess): Promise<void> {
  child.stdin?.end();
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited(child);
  clearTimeout(killer);
}
