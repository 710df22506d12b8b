/**
 * A real `nexo start` process (the built CLI) on a config directory: started, waited for until it
 * logs "nexo daemon ready", its log lines kept (and optionally written to a file, as an operator's
 * log would be), stopped with a signal. For tests and the chaos suite that attack the daemon from
 * outside. Run `npm run build` first.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { once } from "node:events";
import { appendFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { CLI_PATH } from "./cli.js";
import { SLOW_MACHINE_INIT_MS } from "./daemon-dir.js";

export type LogLine = Record<string, unknown> & { msg?: string };

export interface DaemonProcess {
  child: ChildProcessByStdio<null, null, Readable>;
  pid: number;
  /** The health listener's base URL from the ready line (`http://127.0.0.1:PORT`), if it listens. */
  healthUrl: string | undefined;
  /** Every JSON log line so far. */
  log(): LogLine[];
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Sends `signal` and waits for the exit (SIGKILL after `timeoutMs`); how long it took. */
  stop(
    signal?: NodeJS.Signals,
    timeoutMs?: number,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

export interface DaemonProcessOptions {
  config: string;
  stateDir: string;
  /** Added to a minimal environment (PATH, HOME, NEXO_LOG=info, a generous plugin init timeout). */
  env?: NodeJS.ProcessEnv;
  /** Also append stderr to this file. */
  logFile?: string;
  readyTimeoutMs?: number;
}

export async function startDaemonProcess(options: DaemonProcessOptions): Promise<DaemonProcess> {
  const child = spawn(
    process.execPath,
    [CLI_PATH, "start", "--config", options.config, "--state-dir", options.stateDir],
    {
      stdio: ["ignore", "ignore", "pipe"],
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NEXO_LOG: "info",
        NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS,
        ...options.env,
      },
    },
  );
  let text = "";
  let parsedUpTo = 0;
  const lines: LogLine[] = [];
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk;
    if (options.logFile) appendFileSync(options.logFile, chunk);
  });
  const log = (): LogLine[] => {
    const end = text.lastIndexOf("\n") + 1;
    for (const line of text.slice(parsedUpTo, end).split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        // A line that is not JSON stays in stderr() for whoever reads it.
      }
    }
    parsedUpTo = end;
    return lines;
  };
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  let exitedEarly = false;
  void exited.then(() => {
    exitedEarly = true;
  });
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  let ready: LogLine | undefined;
  while (!ready) {
    ready = log().find((line) => line.msg?.startsWith("nexo daemon ready"));
    if (ready) break;
    if (exitedEarly) throw new Error(`the daemon exited before it was ready:\n${text}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the daemon was not ready within ${options.readyTimeoutMs ?? 60_000} ms:\n${text}`);
    }
    await sleep(20);
  }
  const summary = (ready.ready ?? {}) as { http?: string };
  return {
    child,
    pid: child.pid!,
    healthUrl: summary.http,
    log,
    stderr: () => text,
    async stop(signal = "SIGTERM", timeoutMs = 30_000) {
      const started = Date.now();
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const [code, by] = await exited;
      clearTimeout(timer);
      return { code, signal: by, ms: Date.now() - started };
    },
  };
}
