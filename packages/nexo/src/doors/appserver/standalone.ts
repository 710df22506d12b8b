/**
 * The management facade of a standalone `nexo app-server --config DIR`: the daemon's services over
 * that directory, with nothing running behind them. Reads and comment-preserving edits work as in
 * the daemon (each edit validated with the whole directory before it is written); "applying" an
 * edit is checking the directory again, because no plugin, MCP server or channel runs in this
 * process to be reconnected. The families that report live state see `live: false` and stay off.
 */
import { ConfigError, type Env } from "../../config/index.js";
import { inspectDaemonConfig } from "../../daemon/config/index.js";
import type { ReloadOutcome } from "../../daemon/reload.js";
import { DaemonServices } from "../../daemon/services/index.js";
import type { AppServerManagement } from "./management.js";

export function standaloneManagement(dir: string, env: Env, agent?: string): AppServerManagement {
  const check = async (): Promise<ReloadOutcome> => {
    const report = await inspectDaemonConfig(dir, { env });
    if (report.config !== undefined) {
      return {
        ok: true,
        report: {
          agents: { added: [], removed: [], changed: [] },
          plugins: { added: [], removed: [] },
          mcp: { added: [], removed: [], changed: [] },
          microapps: { added: [], removed: [], restarted: [] },
          providersReloaded: false,
          needsRestart: [],
        },
      };
    }
    const cause = new ConfigError(report.issues);
    return { ok: false, error: cause.message, issues: report.issues, cause };
  };
  const services = new DaemonServices({
    config: { dir, env },
    reload: check,
    plugins: { status: () => [], restart: async () => undefined },
    mcp: { statuses: () => [] },
    channels: { bound: () => [], adapters: () => [], send: () => undefined, features: () => undefined },
  });
  return { services, live: false, agent };
}
