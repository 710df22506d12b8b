/** Argument checks shared by the repositories; each failure is a StoreError("invalid_argument"). */
import { formatIssues, type IssueLike } from "@nexo/wire";
import { isoTime } from "../iso-time.js";
import { StoreError } from "./errors.js";

/** A value as it should read in an error message (strings quoted, NaN and undefined named). */
const show = (value: unknown): string => (typeof value === "string" ? JSON.stringify(value) : String(value));

/** A non-empty string id (session id, agent id, …); returned unchanged. */
export function requireId(name: string, value: unknown): string {
  if (typeof value !== "string" || value.trim() === "") {
    throw new StoreError("invalid_argument", `${name} must be a non-empty string, got ${show(value)}`);
  }
  return value;
}

/** An optional string column: undefined and null both mean "not set". */
export function optionalString(name: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") {
    throw new StoreError("invalid_argument", `${name} must be a string, got ${show(value)}`);
  }
  return value;
}

/** A result limit: the default when absent, capped at `max`, a typed error when not a positive integer. */
export function resolveLimit(limit: unknown, defaultLimit: number, max: number): number {
  if (limit === undefined) return defaultLimit;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1) {
    throw new StoreError("invalid_argument", `limit must be a positive integer, got ${show(limit)}`);
  }
  return Math.min(limit, max);
}

/**
 * A timestamp given as a Date or an ISO-8601 string, stored as `toISOString()` writes it so text
 * order is time order (written by isoTime, which spares the process ICU's time-zone names).
 */
export function timestamp(name: string, value: Date | string | undefined, now: () => Date): string {
  if (value === undefined) return isoTime(now());
  const date = typeof value === "string" ? new Date(value) : value;
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
    throw new StoreError("invalid_argument", `${name} must be a valid date, got ${show(value)}`);
  }
  return isoTime(date);
}

/**
 * The value as JSON will store it (Dates become strings, undefined fields vanish), so that what is
 * redacted is exactly what is written; a value JSON cannot hold (a BigInt, a cycle) is refused.
 */
export function toPlainJson<T>(name: string, value: T): T {
  try {
    return JSON.parse(JSON.stringify(value)) as T;
  } catch (error) {
    throw new StoreError("invalid_argument", `${name} is not JSON-serializable: ${(error as Error).message}`);
  }
}

/** The first schema issue of the argument `name`, in the wire's one wording: `content[1].text: …`. */
export function firstIssue(name: string, issues: readonly IssueLike[]): string {
  const first = issues[0];
  if (first === undefined) return `${name}: invalid`;
  return formatIssues([{ path: [name, ...first.path], message: first.message }]);
}
