/**
 * MCP over stdio, on the process the extension supervisor runs.
 *
 * The SDK ships a stdio client transport that spawns the server itself: it copies a handful of the
 * daemon's variables into the child, kills only the direct child (a server started through `npx`,
 * `uvx` or a shell wrapper leaves its real process running), and knows nothing of the daemon's
 * reaper. nexo runs every child — plugin, microapp, MCP server — through one launcher, the
 * supervisor (../supervisor.ts): own process group, lineage tag, the process registry and its
 * on-disk ledger (so a server outlives neither a clean stop nor a SIGKILLed daemon), the stderr
 * tail, the restart policy. This file holds the MCP side of that:
 *
 * - `stdioSpawnSpec`: what the supervisor spawns for a server of mcp.yaml — the command resolved
 *   up front (a missing one is a clear error, not an ENOENT later) and the environment built by
 *   the one rule every child follows (../env.ts): a base (PATH, HOME, TMPDIR, the locale) plus
 *   what the server's `env` grants, never the daemon's secrets;
 * - `IncarnationTransport`: the SDK's `Transport` over one started process's stdin/stdout. It
 *   owns the framing (the SDK's: one JSON-RPC message per line), not the process: closing it
 *   detaches, and stopping the process is the supervisor's job.
 */
import { homedir } from "node:os";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { resolveCommand } from "../command.js";
import { buildChildEnv } from "../env.js";
import type { Incarnation, SpawnSpec } from "../supervisor-types.js";
import type { McpStdioServerConfig } from "./config.js";

type HostEnv = Readonly<Record<string, string | undefined>>;

/**
 * The environment a stdio server starts with: the base every child gets, then the server's own
 * `env`. HOME stays the daemon user's home: MCP servers are ordinary programs of that user
 * (`npx` and `uvx` keep their caches there), unlike plugins, which get a state dir of their own.
 */
export function stdioServerEnv(
  serverEnv: Readonly<Record<string, string>>,
  hostEnv: HostEnv = process.env,
): Record<string, string> {
  const home = hostEnv.HOME?.startsWith("/") ? hostEnv.HOME : homedir();
  return buildChildEnv({ stateDir: home, operatorEnv: serverEnv, hostEnv });
}

/**
 * What the supervisor runs for `config`, with `cwd` already resolved. Throws CommandNotFoundError
 * (../command.ts) when the command cannot be run, before anything is spawned.
 */
export function stdioSpawnSpec(
  config: Pick<McpStdioServerConfig, "command" | "args" | "env">,
  options: { cwd?: string; hostEnv?: HostEnv } = {},
): SpawnSpec {
  const env = stdioServerEnv(config.env, options.hostEnv);
  const command = resolveCommand(config.command, {
    pathEnv: env.PATH,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  return {
    command: command.path,
    args: [...config.args],
    env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  };
}

/** The SDK's Transport over one incarnation of a supervised stdio server. */
export class IncarnationTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private readonly readBuffer = new ReadBuffer();
  private started = false;
  private finished = false;
  private readonly onData = (chunk: Buffer) => this.receive(chunk);
  private readonly onEnd = () => this.finish();

  constructor(private readonly incarnation: Incarnation) {}

  /** The process's stdout ended (it is exiting) or the transport was closed. */
  get closed(): boolean {
    return this.finished;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("the transport is already started");
    this.started = true;
    const { stdout, signal } = this.incarnation;
    if (signal.aborted) {
      this.finish();
      return;
    }
    stdout.on("data", this.onData);
    stdout.once("end", this.onEnd);
    stdout.once("close", this.onEnd);
    // The process exited or is being torn down: nothing more will come from it.
    signal.addEventListener("abort", this.onEnd, { once: true });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const { stdin } = this.incarnation;
    if (this.finished || !stdin.writable) {
      return Promise.reject(new Error("the MCP server process is not running"));
    }
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Detaches from the process (which the supervisor stops); the SDK calls it from `Client.close`. */
  async close(): Promise<void> {
    this.finish();
  }

  private receive(chunk: Buffer): void {
    try {
      this.readBuffer.append(chunk);
    } catch (error) {
      // A line longer than the buffer limit: the stream cannot be resynchronised.
      this.onerror?.(asError(error));
      this.finish();
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
    const { stdout, signal } = this.incarnation;
    stdout.off("data", this.onData);
    stdout.off("end", this.onEnd);
    stdout.off("close", this.onEnd);
    signal.removeEventListener("abort", this.onEnd);
    this.readBuffer.clear();
    this.onclose?.();
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
