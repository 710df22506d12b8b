/**
 * The adapter processes of `subprocess` external channels: for each enabled entry of appserver.yaml's
 * `external_channels` with `transport: subprocess`, this server starts `command args` (in
 * `working_directory`, relative to the workspace; the server's environment plus `env`, its
 * `${VAR}`s expanded as everywhere in the config) and serves the AppServer protocol on the
 * process's stdin/stdout, the adapter being the client (it sends `initialize` with
 * `channelAdapter.channelName` = the entry's name; external-channels.ts accepts only that process
 * for that channel). Its stderr goes to the log.
 *
 * A process that exits by itself is started again after 1 s, 2 s, 4 s … (at most 30 s); after
 * five starts in a row that did not last a minute it is left stopped, with an error in the log,
 * until the channel's entry changes. `reconcile` follows the file: entries removed, disabled or
 * changed stop their process, new ones start. Stopping is SIGTERM, then SIGKILL after 3 s.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { LineTransport } from "@nexo/wire";
import { substituteValues } from "../../config/substitute.js";
import type { ExternalChannelEntry } from "../../daemon/config/appserver.js";
import type { DaemonServices } from "../../daemon/services/index.js";
import type { Logger } from "../../log.js";
import { readExternalChannels } from "./external-channels.js";

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
const STABLE_MS = 60_000;
const MAX_QUICK_FAILURES = 5;
const KILL_AFTER_MS = 3000;

export interface ChannelProcessOptions {
  services: DaemonServices;
  workspace: string;
  logger: Logger;
  /** Serves the AppServer on the process's stdio as the adapter of `channel`. */
  accept: (transport: LineTransport, channel: string) => void;
}

interface Running {
  key: string;
  child: ChildProcess | undefined;
  stopped: boolean;
  failures: number;
  timer: NodeJS.Timeout | undefined;
  exited: Promise<void>;
}

export class ChannelProcesses {
  private readonly running = new Map<string, Running>();
  private closed = false;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: ChannelProcessOptions) {}

  /** Starts and stops processes so they match the file now (one reconcile at a time). */
  reconcile(): Promise<void> {
    const next = this.queue.then(() => this.reconcileNow());
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Stops every process; nothing starts afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.running.keys()].map((name) => this.stop(name)));
  }

  private async reconcileNow(): Promise<void> {
    if (this.closed) return;
    let channels: Record<string, ExternalChannelEntry>;
    try {
      channels = await readExternalChannels(this.options.services);
    } catch (error) {
      this.options.logger.warn(
        { error: (error as Error).message },
        "external channels: appserver.yaml cannot be read",
      );
      return;
    }
    const env = await this.options.services.config.substitutionEnv();
    const wanted = new Map<string, ExternalChannelEntry>();
    for (const [name, entry] of Object.entries(channels)) {
      if (entry.transport !== "subprocess" || entry.enabled === false) continue;
      const expanded = substituteValues(entry, { env, baseDir: this.options.services.config.dir });
      wanted.set(name, expanded.value as ExternalChannelEntry);
    }
    for (const [name, run] of [...this.running]) {
      if (wanted.get(name) === undefined || JSON.stringify(wanted.get(name)) !== run.key)
        await this.stop(name);
    }
    for (const [name, entry] of wanted) if (!this.running.has(name)) this.start(name, entry);
  }

  private start(name: string, entry: ExternalChannelEntry): void {
    const run: Running = {
      key: JSON.stringify(entry),
      child: undefined,
      stopped: false,
      failures: 0,
      timer: undefined,
      exited: Promise.resolve(),
    };
    this.running.set(name, run);
    this.launch(name, entry, run);
  }

  private launch(name: string, entry: ExternalChannelEntry, run: Running): void {
    const { logger, workspace } = this.options;
    const cwd = resolve(workspace, entry.working_directory ?? ".");
    const startedAt = Date.now();
    const child = spawn(entry.command!, entry.args ?? [], {
      cwd,
      env: { ...process.env, ...entry.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    run.child = child;
    run.exited = new Promise((done) => child.once("close", () => done()));
    child.once("error", (error) => {
      logger.error(
        { channel: name, command: entry.command, error: error.message },
        "channel adapter process failed to start",
      );
    });
    createInterface({ input: child.stderr! }).on("line", (line) =>
      logger.info({ channel: name, pid: child.pid }, `adapter: ${line}`),
    );
    this.options.accept(new LineTransport({ input: child.stdout!, output: child.stdin! }), name);
    logger.info(
      { channel: name, pid: child.pid, command: entry.command, cwd },
      "channel adapter process started",
    );
    child.once("close", (code, signal) => {
      if (run.stopped || this.closed) return;
      run.failures = Date.now() - startedAt >= STABLE_MS ? 1 : run.failures + 1;
      if (run.failures >= MAX_QUICK_FAILURES) {
        logger.error(
          { channel: name, code, signal, starts: run.failures },
          "channel adapter process keeps exiting; left stopped until its entry changes",
        );
        return;
      }
      const delay = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (run.failures - 1));
      logger.warn({ channel: name, code, signal, restartInMs: delay }, "channel adapter process exited");
      run.timer = setTimeout(() => this.launch(name, entry, run), delay);
      run.timer.unref();
    });
  }

  private async stop(name: string): Promise<void> {
    const run = this.running.get(name);
    if (run === undefined) return;
    this.running.delete(name);
    run.stopped = true;
    clearTimeout(run.timer);
    const child = run.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
    await run.exited;
    clearTimeout(killer);
  }
}
