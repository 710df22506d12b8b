/**
 * `nexo microapp audit tail`: the admin calls microapps made, read from the daemon's database (the
 * same rows `nexo/admin/microapp_audit/tail` serves), newest first, as a table or JSON. The state
 * dir is `--state-dir`, else the one `--config DIR`'s daemon.yaml names, else the default.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import * as admin from "@nexo/wire/schemas/admin";
import { ConfigError, loadConfigFile } from "../config/index.js";
import { DaemonFileSchema, resolveDaemonSettings } from "../daemon/config/daemon.js";
import { isoTime } from "../iso-time.js";
import { DATABASE_FILE, defaultStateDir } from "../paths.js";
import { type AuditRow, MAX_AUDIT_TAIL_LIMIT, Store } from "../store/index.js";

export interface AuditTailOptions {
  stateDir?: string;
  config?: string;
  microappId?: string;
  method?: string;
  result?: string;
  sinceMins?: number;
  tenant?: string;
  limit: number;
  offset: number;
  json?: boolean;
}

export async function runAuditTail(options: AuditTailOptions): Promise<number> {
  const result = admin.AdminAuditResultSchema.safeParse(options.result ?? "ok");
  if (options.result !== undefined && !result.success) {
    process.stderr.write(
      `nexo microapp audit tail: --result is ok, error or denied, got "${options.result}"\n`,
    );
    return 2;
  }
  if (!Number.isInteger(options.offset) || options.offset < 0) {
    process.stderr.write("nexo microapp audit tail: --offset expects a whole number ≥ 0\n");
    return 2;
  }
  let stateDir: string;
  try {
    stateDir = await stateDirOf(options);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`nexo microapp audit tail: ${error.message}\n`);
    return 2;
  }
  const database = join(stateDir, DATABASE_FILE);
  if (!existsSync(database)) {
    process.stderr.write(
      `nexo microapp audit tail: no nexo database in ${stateDir} (has the daemon run with this state dir?)\n`,
    );
    return 1;
  }
  const store = Store.open(database);
  try {
    const limit = Math.min(options.limit, MAX_AUDIT_TAIL_LIMIT);
    const { entries, total } = store.audit.tail({
      limit,
      offset: options.offset,
      ...(options.microappId ? { microappId: options.microappId } : {}),
      ...(options.method ? { method: options.method } : {}),
      ...(options.result && result.success ? { result: result.data } : {}),
      ...(options.tenant ? { tenantId: options.tenant } : {}),
      ...(options.sinceMins ? { sinceMs: Date.now() - options.sinceMins * 60_000 } : {}),
    });
    const hasMore = options.offset + entries.length < total;
    if (options.json) {
      const page = {
        entries,
        total,
        has_more: hasMore,
        ...(hasMore ? { next_offset: options.offset + entries.length } : {}),
      };
      process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    } else {
      process.stdout.write(
        `${formatAuditTable(entries)}\n${entries.length} of ${total} rows${hasMore ? ` (more: --offset ${options.offset + entries.length})` : ""}\n`,
      );
    }
    return 0;
  } finally {
    store.close();
  }
}

/** The daemon's state dir: `--state-dir`, else `--config DIR`'s daemon.yaml, else the default. */
export async function stateDirOf(options: { stateDir?: string; config?: string }): Promise<string> {
  if (options.stateDir) return options.stateDir;
  if (options.config) {
    const file = ["daemon.yaml", "daemon.yml", "daemon.toml"]
      .map((name) => join(options.config!, name))
      .find(existsSync);
    if (file !== undefined) {
      const settings = resolveDaemonSettings(
        await loadConfigFile(file, DaemonFileSchema, { env: process.env }),
        options.config,
        process.env,
      );
      return settings.state_dir;
    }
  }
  return defaultStateDir(process.env);
}

const COLUMNS = ["started", "microapp", "method", "capability", "result", "code", "ms", "tenant"] as const;

export function formatAuditTable(rows: readonly AuditRow[]): string {
  const cells = rows.map((row) => [
    isoTime(row.started_at_ms),
    row.microapp_id,
    row.method,
    row.capability,
    row.result,
    row.error_code === null || row.error_code === undefined ? "" : String(row.error_code),
    String(row.duration_ms),
    row.tenant_id ?? "",
  ]);
  const widths = COLUMNS.map((name, col) => Math.max(name.length, ...cells.map((row) => row[col]!.length)));
  const line = (values: readonly string[]) =>
    values
      .map((value, col) => value.padEnd(widths[col]!))
      .join("  ")
      .trimEnd();
  return [line(COLUMNS), ...cells.map(line)].join("\n");
}
