/**
 * MCP over stdio, with the process handling a daemon needs.
 *
 * The SDK ships a stdio client transport, but it copies a handful of the daemon's variables into
 * the child, kills only the direct child (a server started through `npx`, `uvx` or a shell wrapper
 * leaves its real process running) and lets stderr go to the daemon's own stderr. This one:
 *
 * - builds the environment from nothing: PATH, HOME and LANG, plus the server's configured `env`,
 *   so the daemon's API keys never reach a server nobody gave them to;
 * - starts the server in its own process group and, on close, follows the MCP shutdown sequence
 *   (close stdin, wait, SIGTERM, wait, SIGKILL) for the whole group;
 * - keeps the last stderr lines, so a server that dies can be reported with its own last words.
 *
 * Framing (one JSON-RPC message per line) is the SDK's.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { ProcessGroup } from "../../process/group.js";
import { RingBuffer, StderrLineSplitter } from "../stderr-capture.js";

/** The only variables a stdio server inherits from the daemon. */
export const STDIO_INHERITED_ENV = ["PATH", "HOME", "LANG"] as const;
/** Used when the daemon itself has no PATH, so `node`, `npx`, `uvx` can still be found. */
const FALLBACK_PATH = "/usr/local/bin:/usr/bin:/bin";

export const DEFAULT_STDERR_TAIL_LINES = 20;
/** How long a server gets to exit after stdin closes, and again after SIGTERM. */
export const DEFAULT_CLOSE_GRACE_MS = 2000;

/** The environment a stdio server starts with: the inherited base, then the server's own `env`. */
export function stdioServerEnv(
  serverEnv: Readonly<Record<string, string>>,
  hostEnv: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of STDIO_INHERITED_ENV) {
    const value = hostEnv[name];
    if (value !== undefined && value !== "") env[name] = value;
  }
  env.PATH ??= FALLBACK_PATH;
  return Object.assign(env, serverEnv);
}

export interface StdioExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StdioProcessTransportOptions {
  command: string;
  args: readonly string[];
  /** The complete environment (see `stdioServerEnv`). */
  env: Record<string, string>;
  cwd?: string;
  /** Every stderr line, e.g. to log it. */
  onStderrLine?: (line: string) => void;
  stderrTailLines?: number;
  closeGraceMs?: number;
}

export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ChildProcessWithoutNullStreams | undefined;
  private starting: Promise<void> | undefined;
  private readonly readBuffer = new ReadBuffer();
  private readonly tail: RingBuffer<string>;
  private readonly stderrLines: StderrLineSplitter;
  private exitInfo: StdioExit | undefined;
  private exited: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private finished = false;

  constructor(private readonly options: StdioProcessTransportOptions) {
    this.tail = new RingBuffer(options.stderrTailLines ?? DEFAULT_STDERR_TAIL_LINES);
    this.stderrLines = new StderrLineSplitter((line) => {
      this.tail.push(line);
      options.onStderrLine?.(line);
    });
  }

  /** The server's pid (and process group id) once spawned. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How the server process ended; undefined while it runs (or before it started). */
  get exit(): StdioExit | undefined {
    return this.exitInfo;
  }

  /** The last lines the server wrote to stderr, oldest first. */
  get stderrTail(): string[] {
    return this.tail.toArray();
  }

  /**
   * Spawns the server; rejects when it cannot be started (missing command, not executable, bad
   * cwd). Calling it again returns the first attempt's promise, so the owner can spawn first (to
   * tell a missing command from a failed handshake) and still hand the transport to `Client.connect`.
   */
  start(): Promise<void> {
    this.starting ??= this.spawnServer();
    return this.starting;
  }

  private spawnServer(): Promise<void> {
    const { command, args, env, cwd } = this.options;
    const child = spawn(command, [...args], {
      env,
      ...(cwd === undefined ? {} : { cwd }),
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group, so close() can stop everything the server started.
      detached: true,
      windowsHide: true,
    });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once("close", (code, signal) => {
        this.exitInfo = { code, signal };
        this.stderrLines.end();
        this.finish();
        resolve();
      });
    });
    child.stdout.on("data", (chunk: Buffer) => this.receive(chunk));
    child.stderr.on("data", (chunk: Buffer) => this.stderrLines.push(chunk));
    // A server that exits mid-write makes our pipes fail (EPIPE); the exit itself is reported by "close".
    child.stdin.on("error", (error) => this.onerror?.(error));
    child.stdout.on("error", (error) => this.onerror?.(error));
    return new Promise((resolve, reject) => {
      let spawned = false;
      child.once("spawn", () => {
        spawned = true;
        resolve();
      });
      child.once("error", (error) => {
        if (spawned) this.onerror?.(error);
        else {
          this.finish();
          reject(error);
        }
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin === undefined || this.finished || !stdin.writable) {
      return Promise.reject(new Error("the MCP server process is not running"));
    }
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Stops the server and everything it started; safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const child = this.child;
    const pid = child?.pid;
    if (child === undefined || pid === undefined) {
      this.finish();
      return;
    }
    const grace = this.options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
    if (this.exitInfo === undefined) {
      child.stdin.end();
      await Promise.race([this.exited, sleep(grace, undefined, { ref: false })]);
    }
    // Even when the leader is gone, processes it started may still hold the group.
    await new ProcessGroup(pid, grace).stop();
    await Promise.race([this.exited, sleep(grace, undefined, { ref: false })]);
    this.finish();
  }

  private receive(chunk: Buffer): void {
    try {
      this.readBuffer.append(chunk);
    } catch (error) {
      // A line longer than the buffer limit: the stream cannot be resynchronised.
      this.onerror?.(asError(error));
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        this.onerror?.(
          new Error(`the MCP server wrote a line that is not JSON-RPC: ${asError(error).message}`),
        );
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.readBuffer.clear();
    this.onclose?.();
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
