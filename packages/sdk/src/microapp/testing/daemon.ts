/**
 * A real nexo daemon running the microapps under test: `nexo start` on a throwaway config directory
 * (./config-dir.ts), an agent reached through the daemon's AppServer (./agent.ts), the daemon's JSON
 * log kept to say which process each microapp runs as, and a stop that leaves nothing behind — the
 * daemon exits, no microapp process outlives it (one that does is killed and reported), and the
 * temp directory is removed.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { once } from "node:events";
import { rmSync } from "node:fs";
import type { Readable } from "node:stream";
import { admin } from "@nexo/wire/schemas";
import {
  AgentClient,
  type AgentToolCall,
  type AgentTurn,
  type ApprovalDecision,
  type ApprovalRequest,
  DEFAULT_TURN_TIMEOUT_MS,
} from "./agent.js";
import { type ConfigDir, type ConfigDirOptions, writeConfigDir } from "./config-dir.js";
import { findNexoCli, type NexoCommand } from "./nexo-cli.js";

export interface TestDaemonOptions extends ConfigDirOptions {
  /** The nexo CLI to run (its path); default `$NEXO_CLI`, the project's `node_modules/.bin/nexo`, PATH. */
  nexo?: string;
  /** Added to the daemon's environment (which otherwise holds only PATH, HOME, LANG, TZ, TMPDIR). */
  env?: Readonly<Record<string, string>>;
  /** How long `nexo start` may take to be ready, ms. Default 60 000. */
  readyTimeoutMs?: number;
  /** Answers the daemon's tool approvals. Default: accept every one. */
  approve?(request: ApprovalRequest): ApprovalDecision | Promise<ApprovalDecision>;
  /** Keep the temp directory after stop (to read what went wrong). Default false. */
  keepFiles?: boolean;
}

/** One JSON line of the daemon's log (pino): `msg` and its fields. */
export type DaemonLogLine = Record<string, unknown> & { msg?: string; level?: number };

/** A microapp's running process, from the daemon's "microapp ready" log line. */
export interface MicroappProcess {
  pid: number;
  /** 1 for the first process, +1 at each restart. */
  incarnation: number;
}

export type AuditTailFilter = {
  microappId?: string;
  method?: string;
  result?: "ok" | "error" | "denied";
  limit?: number;
};

const ENV_PASSED = ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"] as const;
const POLL_MS = 25;

export class TestDaemon {
  private stopped: Promise<void> | undefined;
  private readonly removeExitHook: () => void;

  private constructor(
    private readonly cli: NexoCommand,
    private readonly dir: ConfigDir,
    private readonly child: ChildProcessByStdio<null, null, Readable>,
    private readonly output: DaemonOutput,
    private readonly exited: Promise<unknown>,
    /** The agent of appserver.yaml, over the daemon's AppServer. */
    readonly agent: AgentClient,
    private readonly keepFiles: boolean,
  ) {
    // A test runner that exits without stopping us must not leave a daemon and its microapps.
    const kill = () => this.killEverything();
    process.once("exit", kill);
    this.removeExitHook = () => process.off("exit", kill);
  }

  /** Writes the config directory, starts `nexo start` and connects to its AppServer. */
  static async start(options: TestDaemonOptions): Promise<TestDaemon> {
    const cli = findNexoCli(options.nexo);
    const dir = writeConfigDir(options);
    // The helper reads the daemon's log lines: JSON whatever the terminal (nexo prints pretty
    // lines when stderr is a TTY).
    const env: Record<string, string> = { NEXO_LOG: "info", NEXO_LOG_FORMAT: "json" };
    for (const name of ENV_PASSED) if (process.env[name] !== undefined) env[name] = process.env[name]!;
    Object.assign(env, options.env);
    const child = spawn(cli.program, [...cli.args, "start", "--config", dir.config], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    const output = new DaemonOutput(child.stderr);
    const exited = once(child, "exit").catch(() => undefined);
    try {
      const url = await output.waitFor(
        (line) => line.msg === "AppServer listening" && typeof line.url === "string",
        options.readyTimeoutMs ?? 60_000,
        () => child.exitCode !== null || child.signalCode !== null,
        `${cli.source} nexo start`,
      );
      await output.waitFor(
        // "nexo daemon ready: 1 agent, …": the message names what runs after the colon.
        (line) => typeof line.msg === "string" && line.msg.startsWith("nexo daemon ready"),
        options.readyTimeoutMs ?? 60_000,
        () => child.exitCode !== null || child.signalCode !== null,
        `${cli.source} nexo start`,
      );
      const agent = await AgentClient.connect(`${url.url as string}?token=${dir.token}`, {
        workspace: dir.workspace,
        approve: options.approve ?? (() => "accept"),
      });
      return new TestDaemon(cli, dir, child, output, exited, agent, options.keepFiles ?? false);
    } catch (error) {
      child.kill("SIGKILL");
      await exited;
      if (!options.keepFiles) rmSync(dir.root, { recursive: true, force: true });
      throw error;
    }
  }

  /** The daemon's config directory (extensions.yaml, agents.yaml, …). */
  get configDir(): string {
    return this.dir.config;
  }

  /** Its state directory (the SQLite store, each microapp's `extensions/<id>/state`). */
  get stateDir(): string {
    return this.dir.state;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Every JSON line the daemon logged so far. */
  log(): DaemonLogLine[] {
    return this.output.lines();
  }

  /** Everything the daemon wrote to stderr so far. */
  stderr(): string {
    return this.output.text;
  }

  /** Sends `text` to the agent (a new thread) and resolves with the finished turn. */
  ask(text: string, timeoutMs?: number): Promise<AgentTurn> {
    return this.agent.ask(text, timeoutMs);
  }

  /**
   * Has the agent call `tool` with exactly `args` — the daemon's scripted model follows
   * `call TOOL {json}` — and resolves with the call as the model saw it. Throws when the agent did
   * not call it (the tool is not offered to the agent: the reply says so).
   */
  async callTool(
    tool: string,
    args: Record<string, unknown> = {},
    timeoutMs?: number,
  ): Promise<AgentToolCall> {
    const turn = await this.ask(`call ${tool} ${JSON.stringify(args)}`, timeoutMs);
    const call = turn.toolCalls.find((c) => c.tool === tool);
    if (call === undefined) {
      throw new Error(
        `the agent did not call ${tool} (turn ${turn.status}${turn.error ? `: ${turn.error}` : ""}): ${turn.messages.join(" ")}`,
      );
    }
    return call;
  }

  /** The microapp's current process, once the daemon logged it ready. */
  microapp(id: string): MicroappProcess | undefined {
    const ready = this.output.lines().filter((line) => line.msg === "microapp ready" && line.microapp === id);
    const last = ready.at(-1);
    return last === undefined
      ? undefined
      : { pid: last.pid as number, incarnation: last.incarnation as number };
  }

  /** Waits until the microapp runs, in an incarnation after `after` when given (a restart). */
  async waitForMicroapp(
    id: string,
    options: { after?: number; timeoutMs?: number } = {},
  ): Promise<MicroappProcess> {
    const after = options.after ?? 0;
    const line = await this.output.waitFor(
      (l) => l.msg === "microapp ready" && l.microapp === id && (l.incarnation as number) > after,
      options.timeoutMs ?? DEFAULT_TURN_TIMEOUT_MS,
      () => this.child.exitCode !== null,
      `microapp ${id} ready${after > 0 ? ` after incarnation ${after}` : ""}`,
    );
    return { pid: line.pid as number, incarnation: line.incarnation as number };
  }

  /** `nexo microapp audit tail --json` on this daemon's state: the admin calls, newest first. */
  async auditTail(filter: AuditTailFilter = {}): Promise<admin.MicroappAuditTailResult> {
    const args = ["microapp", "audit", "tail", "--state-dir", this.dir.state, "--json"];
    if (filter.microappId !== undefined) args.push("--microapp-id", filter.microappId);
    if (filter.method !== undefined) args.push("--method", filter.method);
    if (filter.result !== undefined) args.push("--result", filter.result);
    args.push("--limit", String(filter.limit ?? 50));
    const { code, stdout, stderr } = await this.run(args);
    if (code !== 0) throw new Error(`nexo ${args.join(" ")} exited ${code}: ${stderr}`);
    return admin.MicroappAuditTailResultSchema.parse(JSON.parse(stdout));
  }

  /** Runs the same nexo CLI with `args` (e.g. `["config", "validate", daemon.configDir]`). */
  run(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(this.cli.program, [...this.cli.args, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NEXO_LOG: "silent" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    return new Promise((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (code) => resolve({ code, stdout, stderr }));
    });
  }

  /**
   * SIGTERM, then waits for the daemon to stop its microapps and exit (SIGKILL after `timeoutMs`),
   * and removes the temp directory. Rejects when a microapp process outlived the daemon (it is
   * killed first) or the daemon had to be killed: both are bugs worth a failing test.
   */
  stop(timeoutMs = 30_000): Promise<void> {
    this.stopped ??= this.stopOnce(timeoutMs);
    return this.stopped;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  private async stopOnce(timeoutMs: number): Promise<void> {
    this.agent.close();
    const problems: string[] = [];
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGTERM");
    const timer = setTimeout(() => {
      problems.push(`the daemon did not exit within ${timeoutMs} ms of SIGTERM and was killed`);
      this.child.kill("SIGKILL");
    }, timeoutMs);
    await this.exited;
    clearTimeout(timer);
    for (const pid of this.microappPids()) {
      if (!alive(pid)) continue;
      problems.push(`microapp process ${pid} outlived the daemon and was killed`);
      killGroup(pid);
    }
    this.removeExitHook();
    if (!this.keepFiles) rmSync(this.dir.root, { recursive: true, force: true });
    if (problems.length > 0) throw new Error(`${problems.join("; ")}\n${this.output.text.slice(-4000)}`);
  }

  private microappPids(): number[] {
    return this.output
      .lines()
      .filter((line) => line.msg === "microapp ready" && typeof line.pid === "number")
      .map((line) => line.pid as number);
  }

  private killEverything(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    for (const pid of this.microappPids()) if (alive(pid)) killGroup(pid);
    if (!this.keepFiles) rmSync(this.dir.root, { recursive: true, force: true });
  }
}

/** Starts a daemon running `options.microapps`; `await using daemon = await startTestDaemon(…)`. */
export function startTestDaemon(options: TestDaemonOptions): Promise<TestDaemon> {
  return TestDaemon.start(options);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A microapp runs in its own process group, led by its pid: kill what it spawned too. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone in between.
    }
  }
}

/** The daemon's stderr: kept whole, its JSON lines parsed as they complete. */
class DaemonOutput {
  text = "";
  private parsedUpTo = 0;
  private readonly parsed: DaemonLogLine[] = [];

  constructor(stream: Readable) {
    stream.setEncoding("utf8").on("data", (chunk: string) => {
      this.text += chunk;
    });
  }

  lines(): DaemonLogLine[] {
    const end = this.text.lastIndexOf("\n") + 1;
    for (const line of this.text.slice(this.parsedUpTo, end).split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        this.parsed.push(JSON.parse(line) as DaemonLogLine);
      } catch {
        // Not a log line: it stays in `text`.
      }
    }
    this.parsedUpTo = end;
    return this.parsed;
  }

  async waitFor(
    match: (line: DaemonLogLine) => boolean,
    timeoutMs: number,
    gone: () => boolean,
    what: string,
  ): Promise<DaemonLogLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines().find(match);
      if (found !== undefined) return found;
      if (gone()) throw new Error(`the daemon exited while waiting for ${what}:\n${this.text.slice(-4000)}`);
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}:\n${this.text.slice(-4000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}
