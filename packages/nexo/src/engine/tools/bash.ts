/**
 * `Bash`: runs a command with `/bin/bash -c` in the workspace.
 *
 * The command gets its own process group (`detached`), so everything it starts — pipelines,
 * background jobs, their children — can be stopped together: on timeout, on cancellation, and when
 * the command itself ends while something it started still runs (a leftover holding the output
 * pipes open would otherwise stall the tool until its timeout). A process that must outlive the
 * command has to leave the group deliberately (`setsid`). Stopping is SIGTERM to the group, then
 * SIGKILL to the group after a grace period. While it runs, the group is registered with the
 * process registry, so the daemon's exit hooks (and, after a SIGKILL, its next start) stop it too.
 *
 * Bash is not confined by the file tools' path checks; isolating it is the sandbox's job.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { ProcessGroup } from "../../process/group.js";
import { liveProcessGroups } from "../../process/registry.js";
import { withoutSecrets } from "../../secrets/index.js";
import type { Tool, ToolContext, ToolOutput } from "../types.js";
import { errorOutput, oneLine, stringArg } from "./tool-output.js";
import { HeadTailCapture } from "./truncate.js";

export interface BashToolOptions {
  /** Default 120 000 ms. */
  readonly defaultTimeoutMs?: number;
  /** Highest `timeout_ms` a call may ask for. Default 600 000 ms (10 minutes). */
  readonly maxTimeoutMs?: number;
  /** Bytes of combined stdout+stderr kept (half from the start, half from the end). Default 30 KiB. */
  readonly outputCapBytes?: number;
  /** Time between SIGTERM and SIGKILL. Default 2000 ms. */
  readonly killGraceMs?: number;
  /** The shell binary. Default /bin/bash. */
  readonly shell?: string;
  /**
   * Environment of the command. Default: the daemon's environment without its secrets
   * (secrets/names.ts), so a prompt-injected command cannot read the provider keys.
   */
  readonly env?: NodeJS.ProcessEnv;
}

/** How long output may keep arriving after the command's processes are gone. */
const PIPE_DRAIN_MS = 500;

/**
 * Bytes of output streamed live to doors (`ToolContext.onOutput`) per call; beyond it the command
 * runs on silently and its result keeps the start and the end, so a command printing gigabytes
 * cannot flood a client or the turn's replay log.
 */
export const LIVE_OUTPUT_CAP_BYTES = 1024 * 1024;

interface BashArgs {
  command: string;
  timeout_ms?: number;
}

export function createBashTool(options: BashToolOptions = {}): Tool {
  const settings = {
    defaultTimeoutMs: options.defaultTimeoutMs ?? 120_000,
    maxTimeoutMs: options.maxTimeoutMs ?? 600_000,
    outputCapBytes: options.outputCapBytes ?? 30 * 1024,
    killGraceMs: options.killGraceMs ?? 2000,
    shell: options.shell ?? "/bin/bash",
    env: options.env,
  };
  return {
    name: "Bash",
    description:
      "Run a shell command with bash in the workspace directory. stdout and stderr are returned " +
      `together (long output keeps its start and end), with the exit code. Default timeout ` +
      `${settings.defaultTimeoutMs} ms, at most ${settings.maxTimeoutMs} ms. stdin is empty. Processes the ` +
      "command leaves running are stopped when it ends.",
    inputSchema: {
      type: "object",
      properties: {
        command: { type: "string", minLength: 1, description: "The command line to run" },
        timeout_ms: {
          type: "integer",
          minimum: 1,
          maximum: settings.maxTimeoutMs,
          description: `Timeout in milliseconds (default ${settings.defaultTimeoutMs})`,
        },
      },
      required: ["command"],
      additionalProperties: false,
    },
    category: "exec",
    source: "builtin",
    describe: (args) => `Run: ${oneLine(stringArg(args, "command") ?? "", 80)}`,
    command: (args) => stringArg(args, "command"),
    execute(rawArgs, ctx) {
      const args = rawArgs as unknown as BashArgs;
      const timeoutMs = Math.min(args.timeout_ms ?? settings.defaultTimeoutMs, settings.maxTimeoutMs);
      return runCommand(args.command, timeoutMs, ctx, settings);
    },
  };
}

type Ending =
  | { kind: "exited"; code: number | null; signal: NodeJS.Signals | null }
  | { kind: "spawn_failed"; error: Error };

async function runCommand(
  command: string,
  timeoutMs: number,
  ctx: ToolContext,
  settings: {
    outputCapBytes: number;
    killGraceMs: number;
    shell: string;
    env: NodeJS.ProcessEnv | undefined;
  },
): Promise<ToolOutput> {
  if (ctx.signal.aborted) return errorOutput("Command cancelled before it started");
  const capture = new HeadTailCapture(settings.outputCapBytes);
  const child = spawn(settings.shell, ["-c", command], {
    cwd: ctx.workspace,
    env: settings.env ?? withoutSecrets(process.env),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Both streams feed one capture in arrival order, which is as interleaved as two pipes allow.
  const live = liveOutput(ctx.onOutput);
  child.stdout?.on("data", (chunk: Buffer) => {
    capture.push(chunk);
    live?.stdout(chunk);
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    capture.push(chunk);
    live?.stderr(chunk);
  });

  const group = child.pid === undefined ? undefined : new ProcessGroup(child.pid, settings.killGraceMs);
  // Registered while it runs, so a daemon that dies takes the command down with it.
  if (child.pid !== undefined) liveProcessGroups.add(child.pid, "bash");
  let stopReason: "timeout" | "cancelled" | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (reason: "timeout" | "cancelled") => {
    stopReason ??= reason;
    stopping ??= group?.stop();
  };
  const timer = setTimeout(() => stop("timeout"), timeoutMs);
  const onAbort = () => stop("cancelled");
  ctx.signal.addEventListener("abort", onAbort, { once: true });

  try {
    const ending = await new Promise<Ending>((resolve) => {
      child.once("error", (error) => resolve({ kind: "spawn_failed", error }));
      child.once("exit", (code, signal) => resolve({ kind: "exited", code, signal }));
    });
    if (ending.kind === "spawn_failed")
      return errorOutput(`Could not start ${settings.shell}: ${ending.error.message}`);
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
    // The shell is gone; whatever it left running in its group is stopped too.
    if (stopping === undefined && group !== undefined && (await group.hasLiveMembers()))
      stopping = group.stop();
    await stopping;
    await pipesClosed(child, PIPE_DRAIN_MS);
    live?.end();
    return render(capture, ending, stopReason, timeoutMs, { command, cwd: ctx.workspace });
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
    if (child.pid !== undefined) liveProcessGroups.delete(child.pid);
  }
}

function render(
  capture: HeadTailCapture,
  ending: Extract<Ending, { kind: "exited" }>,
  stopReason: "timeout" | "cancelled" | undefined,
  timeoutMs: number,
  run: { command: string; cwd: string },
): ToolOutput {
  const { text, cutBytes } = capture.render();
  const body = text.length === 0 ? "(no output)" : text.endsWith("\n") ? text.slice(0, -1) : text;
  let status: string;
  if (stopReason === "timeout")
    status = `[timed out after ${timeoutMs} ms; the command and its processes were killed]`;
  else if (stopReason === "cancelled") status = "[cancelled; the command and its processes were killed]";
  else if (ending.signal !== null) status = `[killed by ${ending.signal}]`;
  else status = `[exit code ${ending.code}]`;
  return {
    output: `${body}\n${status}`,
    isError: stopReason !== undefined || ending.signal !== null || ending.code !== 0,
    detail: {
      kind: "command",
      command: run.command,
      cwd: run.cwd,
      exitCode: ending.code,
      signal: ending.signal,
      timedOut: stopReason === "timeout",
      cancelled: stopReason === "cancelled",
      outputBytes: capture.totalBytes,
      truncatedBytes: cutBytes,
    },
    metadata: {
      exit_code: ending.code,
      signal: ending.signal,
      timed_out: stopReason === "timeout",
      cancelled: stopReason === "cancelled",
      output_bytes: capture.totalBytes,
      truncated_bytes: cutBytes,
    },
  };
}

/**
 * Decodes each pipe's bytes as UTF-8 (a character split across chunks waits for its rest) and hands
 * the text to `onOutput`, up to LIVE_OUTPUT_CAP_BYTES per call.
 */
function liveOutput(onOutput: ((text: string) => void) | undefined) {
  if (onOutput === undefined) return undefined;
  const decoders = { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") };
  let budget = LIVE_OUTPUT_CAP_BYTES;
  const feed = (decoder: StringDecoder, chunk: Buffer) => {
    if (budget <= 0) return;
    const part = chunk.length > budget ? chunk.subarray(0, budget) : chunk;
    budget -= part.length;
    const text = decoder.write(part);
    if (text) onOutput(text);
  };
  return {
    stdout: (chunk: Buffer) => feed(decoders.stdout, chunk),
    stderr: (chunk: Buffer) => feed(decoders.stderr, chunk),
    end: () => {
      for (const decoder of [decoders.stdout, decoders.stderr]) {
        const rest = decoder.end();
        if (rest) onOutput(rest);
      }
    },
  };
}

/**
 * Waits for the output pipes to reach their end. A process that left the group (`setsid`) may still
 * hold them open; after `ms` they are closed from this side so the call can finish.
 */
async function pipesClosed(child: ChildProcess, ms: number): Promise<void> {
  const streams = [child.stdout, child.stderr].filter((stream) => stream !== null && !stream.closed);
  const closed = Promise.all(
    streams.map((stream) => new Promise((resolve) => stream!.once("close", resolve))),
  );
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([closed, deadline]);
  clearTimeout(timer);
  for (const stream of streams) stream!.destroy();
}
