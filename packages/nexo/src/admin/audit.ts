/**
 * The audit side of the frame: what one row says about a call, and keeping the log bounded.
 *
 * `args_hash` is the SHA-256 of the params written as canonical JSON (keys sorted at every level)
 * after redaction, so two identical calls hash alike (repeated calls stand out) while the log holds
 * no payload. Redaction first blanks the fields the admin spec names as secrets — whatever their
 * length, since a short password would otherwise be guessable from the hash — then runs the
 * store's redactor over everything else (personal data, secret-looking strings).
 */
import { createHash } from "node:crypto";
import type { admin } from "@nexo/wire/schemas";
import { type AuditRepository, redactJson } from "../store/index.js";
import type { OutboundMethodName } from "./methods.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The capability column of a call to a method the table does not have. */
export const UNKNOWN_METHOD_CAPABILITY = "(unknown_method)";

/** What a blanked secret field is replaced with before hashing. */
export const REDACTED = "<redacted>";

/** Secret fields by method: top-level paths blanked outright. */
const SECRET_PATHS: Readonly<Partial<Record<OutboundMethodName, readonly (readonly string[])[]>>> = {
  "nexo/admin/secrets/write": [["value"]],
  "nexo/admin/auth/rotate_token": [["new_token"]],
  "nexo/admin/llm_providers/upsert": [["api_key_secret_value"]],
  // Personal data rather than a secret, but as guessable from a hash as a short password.
  "nexo/admin/pairing/start": [["phone_number"]],
  "nexo/admin/credentials/register": [
    ["payload", "token"],
    ["payload", "password"],
    ["payload", "xoauth2_token"],
  ],
};
/** Keys blanked at any depth under `metadata` of credentials/register. */
const METADATA_SECRET_KEYS = new Set(["token", "password", "xoauth2_token", "api_key", "secret"]);

/** The params with the spec's secret fields blanked and the store's redactor applied. */
export function redactParams(method: string, params: unknown): unknown {
  let value = structuredCloneJson(params);
  for (const path of SECRET_PATHS[method as OutboundMethodName] ?? []) value = blankPath(value, path);
  if (method === "nexo/admin/credentials/register" && isRecord(value) && value.metadata !== undefined)
    value.metadata = blankKeys(value.metadata);
  return redactJson(value).value;
}

/** SHA-256 (hex) of the redacted params as canonical JSON. */
export function argsHash(method: string, params: unknown): string {
  return createHash("sha256")
    .update(canonicalJson(redactParams(method, params)))
    .digest("hex");
}

/** JSON with every object's keys sorted, so equal values give equal text; `undefined` → `null`. */
export function canonicalJson(value: unknown): string {
  if (value === undefined || value === null || typeof value !== "object")
    return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(",")}}`;
}

/** `params.tenant_id` when it is a string (anything else says nothing about a tenant). */
export function tenantOf(params: unknown): string | undefined {
  const tenant = isRecord(params) ? params.tenant_id : undefined;
  return typeof tenant === "string" ? tenant : undefined;
}

export interface AuditRetentionSettings {
  retentionDays: number;
  maxRows: number;
}

export const AUDIT_RETENTION_DAYS_VAR = "NEXO_MICROAPP_ADMIN_AUDIT_RETENTION_DAYS";
export const AUDIT_MAX_ROWS_VAR = "NEXO_MICROAPP_ADMIN_AUDIT_MAX_ROWS";
export const DEFAULT_AUDIT_RETENTION: Readonly<AuditRetentionSettings> = {
  retentionDays: 90,
  maxRows: 100_000,
};

/** Retention from the environment; a value that is not a positive whole number is an error naming it. */
export function auditRetentionFromEnv(env: Env): AuditRetentionSettings {
  const read = (variable: string, fallback: number): number => {
    const text = env[variable];
    if (text === undefined || text === "") return fallback;
    const value = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1)
      throw new Error(`${variable}=${JSON.stringify(text)} must be a positive whole number`);
    return value;
  };
  return {
    retentionDays: read(AUDIT_RETENTION_DAYS_VAR, DEFAULT_AUDIT_RETENTION.retentionDays),
    maxRows: read(AUDIT_MAX_ROWS_VAR, DEFAULT_AUDIT_RETENTION.maxRows),
  };
}

export type AuditOutcome = Pick<admin.AdminAuditRow, "result" | "error_code">;

/** How often the retention is applied while the daemon runs (and once at start). */
export const AUDIT_SWEEP_INTERVAL_MS = 3_600_000;

/**
 * Applies the retention now and then every `intervalMs` (the timer does not keep the process
 * alive). A sweep that fails is logged; the next one tries again. Returns the stopper.
 */
export function keepAuditBounded(
  audit: Pick<AuditRepository, "sweep">,
  retention: AuditRetentionSettings,
  logger: { info(obj: object, msg?: string): void; error(obj: object, msg?: string): void },
  intervalMs = AUDIT_SWEEP_INTERVAL_MS,
): () => void {
  const sweep = () => {
    try {
      const deleted = audit.sweep(retention);
      if (deleted > 0)
        logger.info({ deleted, ...retention }, "admin audit rows past their retention deleted");
    } catch (error) {
      logger.error({ err: (error as Error).message }, "admin audit retention sweep failed");
    }
  };
  return sweepNowAndEvery(sweep, intervalMs);
}

/** Runs `sweep` now and every `intervalMs` (never keeping the process alive); returns the stop. */
export function sweepNowAndEvery(sweep: () => void, intervalMs: number): () => void {
  sweep();
  const timer = setInterval(sweep, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

function structuredCloneJson(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function blankPath(value: unknown, path: readonly string[]): unknown {
  if (!isRecord(value) || path.length === 0) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (!Object.hasOwn(value, head)) return value;
  value[head] = rest.length === 0 ? REDACTED : blankPath(value[head], rest);
  return value;
}

function blankKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(blankKeys);
  if (!isRecord(value)) return value;
  for (const [key, member] of Object.entries(value))
    value[key] = METADATA_SECRET_KEYS.has(key) ? REDACTED : blankKeys(member);
  return value;
}
