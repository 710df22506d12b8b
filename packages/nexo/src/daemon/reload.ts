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
   * arriving meanwhile share that one. The running one may also have read them after the change
   * (the watcher's reload of an earlier edit, say) and applied it, leaving the next one nothing to
   * report: the caller's report is then both reports together.
   */
  reloadNow(): Promise<ReloadOutcome> {
    const running = this.running;
    if (running === undefined) return this.begin();
    this.queued ??= running.then(() => {
      this.queued = undefined;
      return this.begin();
    });
    return Promise.all([running, this.queued]).then(([earlier, next]) =>
      earlier.ok && next.ok ? { ok: true, report: mergeReports(earlier.report, next.report) } : next,
    );
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

/** What two reloads in a row changed, each name once. */
function mergeReports(a: ReloadReport, b: ReloadReport): ReloadReport {
  const both = (x: readonly string[], y: readonly string[]) => [...new Set([...x, ...y])];
  return {
    agents: {
      added: both(a.agents.added, b.agents.added),
      removed: both(a.agents.removed, b.agents.removed),
      changed: both(a.agents.changed, b.agents.changed),
    },
    plugins: {
      added: both(a.plugins.added, b.plugins.added),
      removed: both(a.plugins.removed, b.plugins.removed),
    },
    mcp: {
      added: both(a.mcp.added, b.mcp.added),
      removed: both(a.mcp.removed, b.mcp.removed),
      changed: both(a.mcp.changed, b.mcp.changed),
    },
    microapps: {
      added: both(a.microapps.added, b.microapps.added),
      removed: both(a.microapps.removed, b.microapps.removed),
      restarted: both(a.microapps.restarted, b.microapps.restarted),
    },
    providersReloaded: a.providersReloaded || b.providersReloaded,
    needsRestart: both(a.needsRestart, b.needsRestart),
  };
}
