/**
 * Opening the SQLite connection the store owns. Everything the rest of the store assumes about the
 * connection (WAL, enforced foreign keys, waiting for a busy writer instead of failing) is set here
 * and nowhere else.
 */
import { closeSync, mkdirSync, openSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { StoreError } from "./errors.js";

export type Connection = Database.Database;

/** The path that opens a private, throwaway database (tests, dry runs). */
export const IN_MEMORY = ":memory:";

export interface ConnectionOptions {
  /**
   * How long a write waits for another connection's write to finish before failing with
   * SQLITE_BUSY. Several processes (the daemon, a CLI command) may write the same file.
   */
  busyTimeoutMs?: number;
}

export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * Where better-sqlite3's addon is, when it is where its install puts it (a prebuilt binary or a
 * build from source both land in build/Release); undefined otherwise. Handed to better-sqlite3 as
 * `nativeBinding`: without it, better-sqlite3 looks for its addon through the `bindings` package,
 * which tries candidate paths one after another (each miss a thrown and caught error) and stays
 * loaded, with its own helper, for the process's life. Where the addon is somewhere else,
 * better-sqlite3 looks for it as before. (better-sqlite3 requires the same path only once.)
 */
function addonPath(): string | undefined {
  // Looked up at each open, not when this module loads: a startup snapshot that holds this module
  // must not carry the path of the machine that built it.
  try {
    return createRequire(import.meta.url).resolve("better-sqlite3/build/Release/better_sqlite3.node");
  } catch {
    return undefined;
  }
}

export function openConnection(path: string, options: ConnectionOptions = {}): Connection {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new StoreError(
      "invalid_argument",
      `busyTimeoutMs must be a non-negative integer, got ${busyTimeoutMs}`,
    );
  }
  const inMemory = path === IN_MEMORY;
  if (!inMemory) createPrivately(path);

  const nativeBinding = addonPath();
  let db: Connection;
  try {
    db = new Database(path, {
      timeout: busyTimeoutMs,
      ...(nativeBinding === undefined ? {} : { nativeBinding }),
    });
  } catch (error) {
    throw new StoreError("io", `cannot open database ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    const mode = db.pragma("journal_mode = WAL", { simple: true });
    // Readers must never block the writer (and the reverse); without WAL they would, and the
    // per-session sequence numbers would be fought over with SQLITE_BUSY instead of waited for.
    if (!inMemory && mode !== "wal") {
      throw new StoreError("io", `database ${path} cannot use WAL journaling (got "${String(mode)}")`);
    }
    // NORMAL is durable across application crashes in WAL mode; only an OS crash or power loss
    // can drop the last transactions, which is the trade every chat log makes for write speed.
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  } catch (error) {
    db.close();
    if (error instanceof StoreError) throw error;
    throw new StoreError("io", `cannot configure database ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return db;
}

/**
 * Transcripts and memories hold personal data, so the file is created readable by its owner only;
 * SQLite gives the -wal and -shm files it creates later the same permissions as the database.
 */
function createPrivately(path: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, "a", 0o600));
  } catch (error) {
    throw new StoreError("io", `cannot create database ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
