/**
 * Versioned migrations. Each migration runs in its own IMMEDIATE transaction together with the row
 * that records it in `schema_migrations`, so it is applied exactly once and either fully or not at
 * all, even when two processes open the same file at the same moment.
 */
import { isoTime } from "../iso-time.js";
import type { Connection } from "./db.js";
import { StoreError } from "./errors.js";

export interface Migration {
  /** 1, 2, 3, … without gaps: the order in which migrations run. */
  readonly version: number;
  /** A stable name, checked against the database to catch two builds that disagree on history. */
  readonly name: string;
  /** SQL statements, or a function for migrations that need to compute something. */
  readonly up: string | ((db: Connection) => void);
}

export interface MigrationReport {
  /** The version the database had before, 0 for a new file. */
  from: number;
  to: number;
  /** The versions applied now, in order. */
  applied: number[];
}

/** One migration about to run: `index` of `total` still to apply on this open (1-based). */
export interface MigrationStep {
  version: number;
  name: string;
  index: number;
  total: number;
}

export interface AppliedMigration {
  version: number;
  name: string;
  appliedAt: string;
}

const BOOKKEEPING = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL
) STRICT`;

/** Brings the database up to the last of `migrations`; refuses a database that is ahead of them. */
export function migrate(
  db: Connection,
  migrations: readonly Migration[],
  now: () => Date = () => new Date(),
  onStep?: (step: MigrationStep) => void,
): MigrationReport {
  checkMigrationList(migrations);
  db.exec(BOOKKEEPING);
  const before = appliedMigrations(db);
  checkHistory(before, migrations);
  const from = before.at(-1)?.version ?? 0;

  const applied: number[] = [];
  const pending = migrations.filter((m) => m.version > from);
  for (const [position, migration] of pending.entries()) {
    // Told before it runs: a migration over a big database (an index, a backfill) takes a while.
    onStep?.({
      version: migration.version,
      name: migration.name,
      index: position + 1,
      total: pending.length,
    });
    const ran = db
      .transaction(() => {
        // Another process may have applied it between our first look and taking the write lock.
        if (isApplied(db, migration.version)) return false;
        try {
          if (typeof migration.up === "string") db.exec(migration.up);
          else migration.up(db);
        } catch (error) {
          throw new StoreError(
            "migration_failed",
            `migration ${migration.version} (${migration.name}) failed and was rolled back: ${(error as Error).message}`,
            { cause: error },
          );
        }
        db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
          migration.version,
          migration.name,
          isoTime(now()),
        );
        return true;
      })
      .immediate();
    if (ran) applied.push(migration.version);
  }
  // Re-read: a concurrent opener may have applied some of them, and its names must match ours too.
  const after = appliedMigrations(db);
  checkHistory(after, migrations);
  return { from, to: after.at(-1)?.version ?? 0, applied };
}

export function appliedMigrations(db: Connection): AppliedMigration[] {
  const rows = db
    .prepare("SELECT version, name, applied_at AS appliedAt FROM schema_migrations ORDER BY version")
    .all() as AppliedMigration[];
  return rows;
}

function isApplied(db: Connection, version: number): boolean {
  return db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").get(version) !== undefined;
}

function checkMigrationList(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new StoreError(
        "invalid_argument",
        `migration list must be numbered 1, 2, 3, … in order; position ${index + 1} has version ${migration.version}`,
      );
    }
    if (migration.name.trim() === "") {
      throw new StoreError("invalid_argument", `migration ${migration.version} has an empty name`);
    }
  });
}

function checkHistory(applied: readonly AppliedMigration[], migrations: readonly Migration[]): void {
  const latest = migrations.length;
  const newest = applied.at(-1);
  if (newest !== undefined && newest.version > latest) {
    throw new StoreError(
      "schema_too_new",
      `database schema is at version ${newest.version} (${newest.name}) but this nexo knows versions up to ${latest}; ` +
        "upgrade nexo or point it at another data directory",
    );
  }
  for (const row of applied) {
    const known = migrations[row.version - 1];
    if (known === undefined || known.name !== row.name) {
      throw new StoreError(
        "schema_mismatch",
        `database records migration ${row.version} as "${row.name}" but this nexo calls it "${known?.name ?? "(none)"}"`,
      );
    }
  }
}
