/**
 * The three agents of the peers benchmark, each driven through the interface its users script it
 * with, all against the same local mock of the model APIs:
 *   nexo         `nexo agent --json-stream` (Anthropic's API), mode auto_edit so Read runs unasked
 *   Claude Code  `claude -p` with stream-json in and out (Anthropic's API), `--allowedTools Read`
 *   Codex        `codex exec --json` for one-shot use, `codex app-server` for a conversation
 *                (OpenAI's Responses API), approval "never", reading with its exec_command tool
 * Each exposes the same two things: a one-shot run (prompt in, answer, exit) and a session that
 * takes turns one after another and reports the text each turn streamed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { MockResponse } from "@nexo/mock-llm";
import { INITIALIZE_PARAMS, LineClient, stop } from "../appserver/line-client.js";
import { treePeakRssMiB } from "./tree.js";

/** A scripted tool call: the agent's own file-read tool on notes.txt. */
export type ReadCall = NonNullable<MockResponse["tool_calls"]>[number];

/** A turn's limit: a stuck agent ends the repetition with an error, not the run. */
const TURN_LIMIT_MS = Number(process.env.BENCH_PEERS_LIMIT_S ?? 120) * 1000;

export interface OneShot {
  /** spawn → the first line on stdout. */
  firstOutputMs: number;
  /** spawn → the line that says the answer is complete. */
  doneMs: number;
  /** spawn → the process exited. */
  exitMs: number;
}

export interface Session {
  /** Runs one turn; `onText` gets each piece of answer text as it streams. */
  turn(text: string, onText?: (delta: string) => void): Promise<void>;
  /** Peak RSS of the agent's process tree so far, MiB. */
  peakRssMiB(): number;
  close(): Promise<void>;
}

export interface Agent {
  name: "nexo" | "claude" | "codex";
  /** What the results call it, with its version. */
  label: string;
  /** The model's call that reads notes.txt in `workspace` with this agent's tool. */
  readCall(turn: number, workspace: string): ReadCall;
  oneShot(prompt: string): Promise<OneShot>;
  /** spawn → ready to take a prompt, for agents that say so before the first prompt. */
  ready?(): Promise<number>;
  open(): Promise<Session>;
}

export interface Launch {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** Lines of a child's stdout, each handed to `onLine`; stderr kept for error messages. */
function lines(child: ChildProcess, onLine: (line: string) => void): { stderr: () => string } {
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr = (stderr + d).slice(-4000);
  });
  if (child.stdout) createInterface({ input: child.stdout }).on("line", onLine);
  return { stderr: () => stderr };
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Waits for `done` under the turn limit; the child's exit or a timeout fails it with context. */
function limited<T>(child: ChildProcess, what: string, stderr: () => string, done: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onExit: ((code: number | null, signal: NodeJS.Signals | null) => void) | undefined;
  const failed = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: no answer in ${TURN_LIMIT_MS / 1000} s`)),
      TURN_LIMIT_MS,
    );
    onExit = (code, signal) =>
      reject(new Error(`${what}: exited (${signal ?? code}) ${stderr().trim().slice(-500)}`));
    child.once("exit", onExit);
  });
  // A session runs many turns: each turn's exit watch goes when the turn ends.
  return Promise.race([done, failed]).finally(() => {
    clearTimeout(timer);
    if (onExit) child.off("exit", onExit);
  });
}

/**
 * A one-shot run: spawn with `input` on stdin (then EOF), time the first stdout line, the line
 * `isDone` recognises, and the exit. `check` throws on a line that reports a failure.
 */
async function timeOneShot(
  what: string,
  launch: Launch,
  input: string | undefined,
  isDone: (line: string) => boolean,
  check: (line: string) => void,
): Promise<OneShot> {
  const t0 = performance.now();
  const child = spawn(launch.command, launch.args, {
    cwd: launch.cwd,
    env: launch.env,
    stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  let first = 0;
  let done = 0;
  let failure: Error | undefined;
  const out = lines(child, (line) => {
    if (first === 0) first = performance.now() - t0;
    try {
      check(line);
    } catch (error) {
      failure ??= error as Error;
    }
    if (done === 0 && isDone(line)) done = performance.now() - t0;
  });
  if (input !== undefined) child.stdin?.end(input);
  const exit = new Promise<number>((resolve) => child.once("exit", () => resolve(performance.now() - t0)));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${what}: did not exit in ${TURN_LIMIT_MS / 1000} s`));
    }, TURN_LIMIT_MS);
  });
  const exitMs = await Promise.race([exit, timeout]).finally(() => clearTimeout(timer));
  if (failure) throw failure;
  if (done === 0 || child.exitCode !== 0)
    throw new Error(
      `${what}: exit ${child.exitCode} without a complete answer: ${out.stderr().trim().slice(-500)}`,
    );
  return { firstOutputMs: first, doneMs: done, exitMs };
}

// ---- nexo ----------------------------------------------------------------------------------

export function nexoAgent(base: Launch, version: string): Agent {
  const open = async (): Promise<{ session: Session; readyMs: number }> => {
    const t0 = performance.now();
    const child = spawn(base.command, base.args, {
      cwd: base.cwd,
      env: base.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let handler: (event: Record<string, unknown>) => void = () => undefined;
    const out = lines(child, (line) => handler(JSON.parse(line) as Record<string, unknown>));
    const send = (command: unknown) => child.stdin?.write(`${JSON.stringify(command)}\n`);
    const waitFor = (test: (e: Record<string, unknown>) => boolean, what: string) =>
      limited(
        child,
        `nexo: ${what}`,
        out.stderr,
        new Promise<Record<string, unknown>>((resolve) => {
          handler = (e) => {
            if (test(e)) resolve(e);
          };
        }),
      );
    await waitFor((e) => e.type === "ready", "ready");
    const readyMs = performance.now() - t0;
    // auto_edit: Read (an info tool) runs without asking, as Claude Code's --allowedTools Read.
    send({ type: "set_mode", mode: "auto_edit" });
    await waitFor((e) => e.type === "config_changed", "set_mode");
    let turns = 0;
    const session: Session = {
      turn: async (text, onText) => {
        const msgId = `m${++turns}`;
        const ended = limited(
          child,
          `nexo turn ${turns}`,
          out.stderr,
          new Promise<void>((resolve, reject) => {
            handler = (e) => {
              if (e.msg_id !== msgId) return;
              if (e.type === "text_delta") onText?.(String(e.text));
              else if (e.type === "error") reject(new Error(`nexo: ${JSON.stringify(e.error)}`));
              else if (e.type === "tool_request")
                reject(new Error(`nexo asked to approve ${JSON.stringify(e.tool)}`));
              else if (e.type === "stream_end") resolve();
            };
          }),
        );
        send({ type: "message", msg_id: msgId, input: text });
        await ended;
      },
      peakRssMiB: () => treePeakRssMiB(child.pid),
      close: async () => {
        child.stdin?.end();
        const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited(child);
        clearTimeout(killer);
      },
    };
    return { session, readyMs };
  };
  return {
    name: "nexo",
    label: `nexo agent --json-stream ${version}`,
    readCall: (turn) => ({ id: `toolu_read_${turn}`, name: "Read", input: { file_path: "notes.txt" } }),
    oneShot: (prompt) =>
      timeOneShot(
        "nexo one-shot",
        base,
        `${JSON.stringify({ type: "message", msg_id: "m1", input: prompt })}\n`,
        (line) => line.startsWith('{"type":"stream_end"'),
        (line) => {
          if (line.startsWith('{"type":"error"')) throw new Error(`nexo: ${line}`);
        },
      ),
    ready: async () => {
      const { session, readyMs } = await open();
      await session.close();
      return readyMs;
    },
    open: async () => (await open()).session,
  };
}

// ---- Claude Code ---------------------------------------------------------------------------

const CLAUDE_MODEL = "claude-sonnet-5";

export function claudeAgent(binary: string, version: string, env: NodeJS.ProcessEnv, cwd: string): Agent {
  const common = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--model",
    CLAUDE_MODEL,
    "--allowedTools",
    "Read",
  ];
  const failedResult = (e: Record<string, unknown>) =>
    e.type === "result" && (e.is_error === true || e.subtype !== "success");
  return {
    name: "claude",
    label: `Claude Code ${version} (claude -p)`,
    // Claude Code's Read takes an absolute path.
    readCall: (turn, workspace) => ({
      id: `toolu_read_${turn}`,
      name: "Read",
      input: { file_path: `${workspace}/notes.txt` },
    }),
    oneShot: (prompt) =>
      timeOneShot(
        "claude one-shot",
        { command: binary, args: ["-p", prompt, ...common], env, cwd },
        undefined,
        (line) => line.includes('"type":"result"'),
        (line) => {
          if (line.includes('"type":"result"') && failedResult(JSON.parse(line) as Record<string, unknown>))
            throw new Error(`claude: ${line.slice(0, 500)}`);
        },
      ),
    open: async () => {
      const child = spawn(
        binary,
        ["-p", "--input-format", "stream-json", "--include-partial-messages", ...common],
        { cwd, env, stdio: ["pipe", "pipe", "pipe"] },
      );
      let handler: (event: Record<string, unknown>) => void = () => undefined;
      const out = lines(child, (line) => handler(JSON.parse(line) as Record<string, unknown>));
      let turns = 0;
      return {
        turn: async (text, onText) => {
          turns++;
          const ended = limited(
            child,
            `claude turn ${turns}`,
            out.stderr,
            new Promise<void>((resolve, reject) => {
              handler = (e) => {
                if (e.type === "stream_event") {
                  const event = e.event as { type?: string; delta?: { type?: string; text?: string } };
                  if (event.type === "content_block_delta" && event.delta?.type === "text_delta")
                    onText?.(event.delta.text ?? "");
                } else if (e.type === "result") {
                  if (failedResult(e)) reject(new Error(`claude: ${JSON.stringify(e).slice(0, 500)}`));
                  else resolve();
                }
              };
            }),
          );
          child.stdin?.write(
            `${JSON.stringify({ type: "user", message: { role: "user", content: text } })}\n`,
          );
          await ended;
        },
        peakRssMiB: () => treePeakRssMiB(child.pid),
        close: async () => {
          await stop(child);
        },
      };
    },
  };
}

// ---- Codex ---------------------------------------------------------------------------------

export function codexAgent(binary: string, version: string, env: NodeJS.ProcessEnv, cwd: string): Agent {
  const open = async (): Promise<{ session: Session; readyMs: number }> => {
    const t0 = performance.now();
    const child = spawn(binary, ["app-server"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    const client = new LineClient((line) => child.stdin?.write(`${line}\n`));
    const out = lines(child, (line) => client.feed(`${line}\n`));
    child.once("exit", (code, signal) =>
      client.close(`codex app-server exited (${signal ?? code}) ${out.stderr().slice(-500)}`),
    );
    await client.request("initialize", INITIALIZE_PARAMS);
    const readyMs = performance.now() - t0;
    client.notify("initialized", {});
    const started = await client.request("thread/start", {
      cwd,
      approvalPolicy: "never",
      sandbox: "danger-full-access",
    });
    const threadId = (started.result as { thread: { id: string } }).thread.id;
    let turns = 0;
    const session: Session = {
      turn: async (text, onText) => {
        turns++;
        client.onMessage = (m) => {
          if (m.method === "item/agentMessage/delta")
            onText?.(String((m.params as { delta?: unknown } | undefined)?.delta ?? ""));
        };
        const end = client.waitFor(
          (m) => m.method === "turn/completed" || m.method === "turn/failed" || m.method === "turn/cancelled",
          "the end of the turn",
        );
        await client.request("turn/start", { threadId, input: [{ type: "text", text, text_elements: [] }] });
        const last = await limited(child, `codex turn ${turns}`, out.stderr, end);
        const status = (last.params?.turn as { status?: string } | undefined)?.status;
        if (last.method !== "turn/completed" || (status !== undefined && status !== "completed"))
          throw new Error(`codex turn ended with ${last.method} (${status})`);
      },
      peakRssMiB: () => treePeakRssMiB(child.pid),
      close: () => stop(child),
    };
    return { session, readyMs };
  };
  return {
    name: "codex",
    label: `Codex ${version} (codex exec --json, codex app-server)`,
    readCall: (turn) => ({ id: `call_read_${turn}`, name: "exec_command", input: { cmd: "cat notes.txt" } }),
    oneShot: (prompt) =>
      timeOneShot(
        "codex one-shot",
        { command: binary, args: ["exec", "--json", "--skip-git-repo-check", prompt], env, cwd },
        undefined,
        (line) => line.startsWith('{"type":"turn.completed"'),
        (line) => {
          if (line.startsWith('{"type":"turn.failed"') || line.startsWith('{"type":"error"'))
            throw new Error(`codex: ${line.slice(0, 500)}`);
        },
      ),
    ready: async () => {
      const { session, readyMs } = await open();
      await session.close();
      return readyMs;
    },
    open: async () => (await open()).session,
  };
}
