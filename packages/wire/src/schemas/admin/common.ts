/**
 * Small shapes every admin domain reuses. Field names are snake_case exactly as on the wire.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { lazySchema } from "../lazy.js";

/** A non-empty string: ids, names and keys the daemon looks up by value. */
export const NonEmptyStringSchema = lazySchema("admin.common", () =>
  z.string().min(1, { message: "must not be empty" }),
);

/** Milliseconds since the Unix epoch. */
export const EpochMsSchema = lazySchema("admin.common", () => z.number().int().nonnegative());

/** A count, cap or offset. */
export const CountSchema = lazySchema("admin.common", () => z.number().int().nonnegative());

/**
 * A tenant id in a filter or a write target. An empty string is rejected rather than read as
 * "global": absence means global, so `""` can only be a caller bug.
 */
export const TenantIdSchema = lazySchema("admin.common", () =>
  z.string().min(1, { message: "tenant_id must not be empty (omit it for global)" }),
);

/**
 * The Phase 82.12 token hash: the first 16 hex chars of the sha256 of a bearer token. Operator
 * identity travels in this form so audits can correlate without holding the token.
 */
export const TOKEN_HASH_PATTERN = /^[0-9a-f]{16}$/;
export const OperatorTokenHashSchema = lazySchema("admin.common", () =>
  z
    .string()
    .regex(TOKEN_HASH_PATTERN, { message: "must be 16 lowercase hex chars (sha256 prefix of the token)" }),
);
export type OperatorTokenHash = z.infer<typeof OperatorTokenHashSchema>;

/** The token hash of a bearer token: the first 16 hex chars of its SHA-256. */
export function tokenHash(token: string): OperatorTokenHash {
  return createHash("sha256").update(token, "utf8").digest("hex").slice(0, 16);
}

/** Speaker of a transcript entry. */
export const TranscriptRoleSchema = lazySchema("admin.common", () =>
  z.enum(["user", "assistant", "tool", "system"]),
);
export type TranscriptRole = z.infer<typeof TranscriptRoleSchema>;

/** Params of methods that take none: absent, or an object whose members are ignored. */
export const NoParamsSchema = lazySchema("admin.common", () => z.looseObject({}).optional());
export type NoParams = z.infer<typeof NoParamsSchema>;

/** An arbitrary JSON object (opaque payloads, free-form metadata). */
export const JsonRecordSchema = lazySchema("admin.common", () => z.record(z.string(), z.unknown()));
