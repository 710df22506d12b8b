/**
 * Errors raised by the store. A `code` is for code (the daemon maps it to an RPC error or an exit
 * status); the message is for the operator reading a log line.
 */

export type StoreErrorCode =
  /** The database was migrated by a newer nexo; this one refuses to touch it. */
  | "schema_too_new"
  /** A version the database already has was applied under a different migration name. */
  | "schema_mismatch"
  /** A migration failed and was rolled back; the database is still at the previous version. */
  | "migration_failed"
  /** The file could not be opened the way the store needs (e.g. WAL is unavailable). */
  | "io"
  /** An argument is malformed: an empty id, a limit that is not a positive integer, bad content. */
  | "invalid_argument"
  /** The referenced session or memory does not exist. */
  | "not_found"
  /** The row already exists (e.g. a session id chosen by the caller is taken). */
  | "conflict"
  /** A stored value is not one this nexo writes (edited by hand, or written by a broken build). */
  | "corrupt";

export class StoreError extends Error {
  override readonly name = "StoreError";
  readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export function isStoreError(error: unknown, code?: StoreErrorCode): error is StoreError {
  return error instanceof StoreError && (code === undefined || error.code === code);
}
