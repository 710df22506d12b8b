/**
 * `nexo/admin/memory/*`: `query` (memory_query) searches an agent's long-term memory; the snapshot
 * verbs (memory_snapshot) manage memory backup bundles. The daemon decides the sensitive parts
 * itself: snapshots are always secret-redacted, restores always take a pre-restore snapshot, and
 * bundles are addressed by id so no caller-supplied path is ever read.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { CountSchema, EpochMsSchema, NonEmptyStringSchema } from "./common.js";

export const AdminMemoryQueryParamsSchema = lazySchema("admin.memory", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    /** Empty or absent: the most recent entries. */
    query: z.string().optional(),
    limit: CountSchema.optional(),
  }),
);
export type AdminMemoryQueryParams = z.infer<typeof AdminMemoryQueryParamsSchema>;

export const AdminMemoryEntrySchema = lazySchema("admin.memory", () =>
  z.looseObject({
    id: NonEmptyStringSchema,
    agent_id: NonEmptyStringSchema,
    content: z.string(),
    tags: z.array(z.string()).optional(),
    concept_tags: z.array(z.string()).optional(),
    /** ISO-8601 creation time. */
    created_at: z.string(),
    memory_type: z.string().optional(),
  }),
);
export type AdminMemoryEntry = z.infer<typeof AdminMemoryEntrySchema>;

export const AdminMemoryQueryResultSchema = lazySchema("admin.memory", () =>
  z.looseObject({ entries: z.array(AdminMemoryEntrySchema) }),
);
export type AdminMemoryQueryResult = z.infer<typeof AdminMemoryQueryResultSchema>;

/** Tenant scope of a snapshot; empty or absent means the default tenant. */
const SnapshotTenantSchema = lazySchema("admin.memory", () => z.string().optional());

export const MemorySnapshotMetaSchema = lazySchema("admin.memory", () =>
  z.looseObject({
    id: NonEmptyStringSchema,
    agent_id: NonEmptyStringSchema,
    tenant: z.string(),
    label: z.string().optional(),
    created_at_ms: EpochMsSchema,
    bundle_size_bytes: CountSchema,
    bundle_sha256: z.string(),
    encrypted: z.boolean(),
    redactions_applied: z.boolean(),
  }),
);
export type MemorySnapshotMeta = z.infer<typeof MemorySnapshotMetaSchema>;

export const MemoryListSnapshotsParamsSchema = lazySchema("admin.memory", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    tenant: SnapshotTenantSchema,
  }),
);
export type MemoryListSnapshotsParams = z.infer<typeof MemoryListSnapshotsParamsSchema>;

/** Newest first. */
export const MemoryListSnapshotsResultSchema = lazySchema("admin.memory", () =>
  z.looseObject({
    snapshots: z.array(MemorySnapshotMetaSchema),
    /** Whether the daemon has an encryption recipient configured (offer "encrypt" only then). */
    encryption_available: z.boolean().optional(),
  }),
);
export type MemoryListSnapshotsResult = z.infer<typeof MemoryListSnapshotsResultSchema>;

export const MemoryDeleteSnapshotParamsSchema = lazySchema("admin.memory", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    tenant: SnapshotTenantSchema,
    id: NonEmptyStringSchema,
  }),
);
export type MemoryDeleteSnapshotParams = z.infer<typeof MemoryDeleteSnapshotParamsSchema>;

/** Idempotent: deleting a missing snapshot also answers `removed: true`. */
export const MemoryDeleteSnapshotResultSchema = lazySchema("admin.memory", () =>
  z.looseObject({ removed: z.boolean() }),
);
export type MemoryDeleteSnapshotResult = z.infer<typeof MemoryDeleteSnapshotResultSchema>;

export const MemoryCreateSnapshotParamsSchema = lazySchema("admin.memory", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    tenant: SnapshotTenantSchema,
    label: z.string().optional(),
    /** Refused with -32602 when no encryption recipient is configured. */
    encrypt: z.boolean().optional(),
  }),
);
export type MemoryCreateSnapshotParams = z.infer<typeof MemoryCreateSnapshotParamsSchema>;

export const MemoryCreateSnapshotResultSchema = lazySchema("admin.memory", () =>
  z.looseObject({ snapshot: MemorySnapshotMetaSchema }),
);
export type MemoryCreateSnapshotResult = z.infer<typeof MemoryCreateSnapshotResultSchema>;

/**
 * `tenant` is required here: the daemon checks it against the bundle's recorded tenant before
 * touching anything, so a restore can never cross tenants by accident.
 */
export const MemoryRestoreSnapshotParamsSchema = lazySchema("admin.memory", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    tenant: z.string(),
    snapshot_id: NonEmptyStringSchema,
    /** Report what would be restored without changing anything. */
    dry_run: z.boolean().optional(),
  }),
);
export type MemoryRestoreSnapshotParams = z.infer<typeof MemoryRestoreSnapshotParamsSchema>;

export const MemoryRestoreReportSchema = lazySchema("admin.memory", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    from_snapshot_id: NonEmptyStringSchema,
    /** The snapshot taken just before restoring; absent on a dry run. */
    pre_snapshot_id: z.string().optional(),
    sqlite_restored_dbs: z.array(z.string()),
    state_files_restored: z.array(z.string()),
    workers_restarted: z.boolean(),
    dry_run: z.boolean(),
  }),
);
export type MemoryRestoreReport = z.infer<typeof MemoryRestoreReportSchema>;

export const MemoryRestoreSnapshotResultSchema = lazySchema("admin.memory", () =>
  z.looseObject({ report: MemoryRestoreReportSchema }),
);
export type MemoryRestoreSnapshotResult = z.infer<typeof MemoryRestoreSnapshotResultSchema>;
