/**
 * Drives the real `nexo agent --json-stream` process the way a UI does: write command lines to
 * its stdin, read event lines from its stdout.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI_PATH } from "./cli.js";

export type Event = Record<string, unknown> & { type: string };

export class JsonStreamClient {
  readonly events: Event[] = [];
  readonly stateDir: string;
  stderr = "";
  private readonly child: ChildProcessWithoutNullStreams;
  private buffered = "";
  private waiters: Array<() => void> = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(args: string[], options: { env?: NodeJS.ProcessEnv; stateDir?: string; cwd?: string } = {}) {
    this.stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), "nexo-js-state-"));
    this.child = spawn(process.execPath, [CLI_PATH, "agent", "--json-stream", ...args], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NEXO_STATE_DIR: this.stateDir,
        NEXO_LOG: "warn",
        ...options.env,
      },
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout.setEncoding("utf8").on("data", (d: string) => this.onData(d));
    this.child.stderr.setEncoding("utf8").on("data", (d: string) => {
      this.stderr += d;
    });
    this.exited = new Promise((resolve) =>
      this.child.on("close", (code, signal) => resolve({ code, signal })),
    );
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private onData(data: string): void {
    this.buffered += data;
    let nl = this.buffered.indexOf("\n");
    while (nl !== -1) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      if (line.trim()) this.events.push(JSON.parse(line) as Event);
      nl = this.buffered.indexOf("\n");
    }
    for (const wake of this.waiters.splice(0)) wake();
  }

  send(command: unknown): void {
    this.child.stdin.write(`${typeof command === "string" ? command : JSON.stringify(command)}\n`);
  }

  /**
   * Writes raw bytes or text to stdin as they are (no newline added), and resolves once stdin has
   * taken them, so a caller sending a great many frames keeps to the pipe's pace.
   */
  write(data: string | Uint8Array): Promise<void> {
    return new Promise((resolve, reject) =>
      this.child.stdin.write(data, (error) => (error ? reject(error) : resolve())),
    );
  }

  /** Whether the process still runs. */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Closes stdin (EOF). */
  end(): void {
    this.child.stdin.end();
  }

  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    this.child.kill(signal);
  }

  /** Waits for the first event (after `from`) matching the predicate. */
  async waitFor(predicate: (e: Event) => boolean, timeoutMs = 15_000, from = 0): Promise<Event> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.slice(from).find(predicate);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `timed out waiting for an event; got:\n${this.events.map((e) => JSON.stringify(e)).join("\n")}\nstderr:\n${this.stderr}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends a message and waits for its stream_end; returns the events of that message. */
  async turn(msgId: string, input: string, extra: Record<string, unknown> = {}): Promise<Event[]> {
    const from = this.events.length;
    this.send({ type: "message", msg_id: msgId, input, ...extra });
    await this.waitFor((e) => e.type === "stream_end" && e.msg_id === msgId, 20_000, from);
    return this.events.slice(from).filter((e) => e.msg_id === msgId);
  }
}

export const types = (events: Event[]) => events.map((e) => e.type);
