/**
 * Hot reload: a change in the config directory is validated as a whole and swapped in; an invalid
 * change keeps the running config and logs exactly why (every problem with file, line and key).
 * Changes are debounced, and the config writer's temp files are ignored, so one atomic save is one
 * reload.
 */
import { type FSWatcher, watch } from "node:fs";
import { configFormatOf, isTempFileName } from "../config/index.js";
import type { Logger } from "../log.js";
import { DaemonConfigError, loadDaemonConfig } from "./config/index.js";
import type { Daemon, ReloadReport } from "./daemon.js";
import { specFromConfig } from "./spec.js";

export type ReloadOutcome = { ok: true; report: ReloadReport } | { ok: false; error: string };

export class ConfigReloader {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReloadOutcome> | undefined;
  private again = false;
  /** Every outcome, newest last (bounded), for tests and the admin RPC later. */
  readonly history: ReloadOutcome[] = [];

  constructor(
    private readonly dir: string,
    private readonly daemon: Daemon,
    private readonly env: NodeJS.ProcessEnv,
    private readonly logger: Logger,
    private readonly debounceMs = 300,
  ) {}

  start(): void {
    this.watcher = watch(this.dir, (_event, name) => {
      if (name && (isTempFileName(name) || name.startsWith(".") || configFormatOf(name) === undefined))
        return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.reloadNow(), this.debounceMs);
    });
    this.watcher.on("error", (error) => this.logger.error({ err: error.message }, "config watcher failed"));
  }

  stop(): void {
    clearTimeout(this.timer);
    this.watcher?.close();
  }

  /** Loads, validates and applies the directory now; a reload already running is followed by one more. */
  reloadNow(): Promise<ReloadOutcome> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.apply().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.reloadNow();
      }
    });
    return this.running;
  }

  private async apply(): Promise<ReloadOutcome> {
    let outcome: ReloadOutcome;
    try {
      const config = await loadDaemonConfig(this.dir, { env: this.env });
      const spec = specFromConfig(config, this.env, this.logger);
      outcome = {
        ok: true,
        report: await this.daemon.reload({ ...spec, stateDir: this.daemon.spec.stateDir }),
      };
    } catch (error) {
      const text = error instanceof DaemonConfigError ? error.message : (error as Error).message;
      this.logger.error(
        { problems: text.split("\n") },
        "config change rejected; the running config stays in force",
      );
      outcome = { ok: false, error: text };
    }
    this.history.push(outcome);
    if (this.history.length > 20) this.history.shift();
    return outcome;
  }
}
