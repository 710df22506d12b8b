/**
 * Hot reload: a change in the config directory is validated as a whole and swapped in; an invalid
 * change keeps the running config and logs exactly why (every problem with file, line and key).
 * Changes are debounced, and the config writer's temp files are ignored, so one atomic save is one
 * reload.
 */
import { type FSWatcher, watch } from "node:fs";
import { ConfigError, type ConfigIssue, configFormatOf, isTempFileName } from "../config/index.js";
import type { Logger } from "../log.js";
import { loadDaemonConfig } from "./config/index.js";
import { specFromConfig } from "./spec.js";
import type { DaemonSpec, ReloadReport } from "./types.js";

export type ReloadOutcome =
  | { ok: true; report: ReloadReport }
  | {
      ok: false;
      /** Every problem, one per line (`file:line:col: key: message`). */
      error: string;
      /** The problems with their positions; empty when the failure was not the config's. */
      issues: readonly ConfigIssue[];
      /** What was thrown. */
      cause: Error;
    };

/** What a reload is applied to: the daemon. */
export interface ReloadTarget {
  readonly spec: DaemonSpec;
  reload(next: DaemonSpec): Promise<ReloadReport>;
}

export class ConfigReloader {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReloadOutcome> | undefined;
  private queued: Promise<ReloadOutcome> | undefined;
  /** Every outcome, newest last (bounded), for tests and the admin RPC later. */
  readonly history: ReloadOutcome[] = [];

  constructor(
    private readonly dir: string,
    private readonly target: ReloadTarget,
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

  /**
   * Loads, validates and applies the directory as it is now. A reload already running may have
   * read the files before the caller's change, so the caller gets one that starts after it; calls
   * arriving meanwhile share that one.
   */
  reloadNow(): Promise<ReloadOutcome> {
    if (this.running === undefined) return this.begin();
    this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.begin();
    });
    return this.queued;
  }

  private begin(): Promise<ReloadOutcome> {
    const run: Promise<ReloadOutcome> = this.apply().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async apply(): Promise<ReloadOutcome> {
    let outcome: ReloadOutcome;
    try {
      const config = await loadDaemonConfig(this.dir, { env: this.env });
      const spec = specFromConfig(config, this.env, this.spec().logger);
      outcome = {
        ok: true,
        report: await this.target.reload({ ...spec, stateDir: this.spec().stateDir }),
      };
    } catch (error) {
      const cause = error instanceof Error ? error : new Error(String(error));
      const issues = cause instanceof ConfigError ? cause.issues : [];
      this.logger.error(
        { problems: cause.message.split("\n") },
        "config change rejected; the running config stays in force",
      );
      outcome = { ok: false, error: cause.message, issues, cause };
    }
    this.history.push(outcome);
    if (this.history.length > 20) this.history.shift();
    return outcome;
  }

  private spec(): DaemonSpec {
    return this.target.spec;
  }
}
