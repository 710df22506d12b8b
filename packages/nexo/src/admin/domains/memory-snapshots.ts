/**
 * `nexo/admin/memory/{list,create,delete,restore}_snapshot(s)` (memory_snapshot): bundles of an
 * agent's long-term memory (../../memory/snapshots.ts). Created bundles are always redacted and
 * marked as taken through the admin RPC; `encrypt` is refused (-32602): this daemon has no
 * encryption recipient (`encryption_available: false`). Restoring names the tenant the bundle
 * must record and always takes a snapshot of what it replaces first (`pre_snapshot_id`).
 */
import { InvalidParamsError } from "@nexo/wire";
import type { admin } from "@nexo/wire/schemas";
import { type SnapshotMeta, SnapshotRequestError } from "../../memory/snapshots.js";
import { defineAdminDomain } from "../domain.js";

/** Who took a snapshot through the admin RPC (as the reference's admin UI stamps it). */
export const ADMIN_SNAPSHOT_CREATOR = "admin-ui";

export const memorySnapshotsDomain = defineAdminDomain({
  domain: "memory",
  handlers: ({ memorySnapshots: snapshots }) =>
    snapshots && {
      "nexo/admin/memory/list_snapshots": ({ agent_id, tenant = "" }) =>
        snapshotCall(async () => ({
          snapshots: (await snapshots.list(agent_id, tenant)).map(toWire),
          encryption_available: false,
        })),

      "nexo/admin/memory/create_snapshot": ({ agent_id, tenant = "", label, encrypt }) =>
        snapshotCall(async () => {
          if (encrypt)
            throw new InvalidParamsError(
              "invalid params: encrypt: this daemon has no encryption recipient configured",
            );
          const meta = await snapshots.create(agent_id, tenant, {
            ...(label === undefined ? {} : { label }),
            createdBy: ADMIN_SNAPSHOT_CREATOR,
          });
          return { snapshot: toWire(meta) };
        }),

      "nexo/admin/memory/delete_snapshot": ({ agent_id, tenant = "", id }) =>
        snapshotCall(async () => ({ removed: await snapshots.delete(agent_id, tenant, id) })),

      "nexo/admin/memory/restore_snapshot": ({ agent_id, tenant, snapshot_id, dry_run }) =>
        snapshotCall(async () => {
          const report = await snapshots.restore(agent_id, tenant, snapshot_id, { dryRun: dry_run === true });
          return {
            report: {
              agent_id,
              from_snapshot_id: report.fromSnapshotId,
              ...(report.preSnapshotId === undefined ? {} : { pre_snapshot_id: report.preSnapshotId }),
              sqlite_restored_dbs: report.dryRun ? [] : ["memories"],
              state_files_restored: [],
              workers_restarted: false,
              dry_run: report.dryRun,
              // Loose fields: how many memories the agent had and has.
              replaced_memories: report.replacedMemories,
              restored_memories: report.restoredMemories,
            },
          };
        }),
    },
});

async function snapshotCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof SnapshotRequestError)
      throw new InvalidParamsError(`invalid params: ${error.message}`);
    throw error;
  }
}

function toWire(meta: SnapshotMeta): admin.MemorySnapshotMeta {
  return {
    id: meta.id,
    agent_id: meta.agentId,
    tenant: meta.tenant,
    ...(meta.label === undefined ? {} : { label: meta.label }),
    created_at_ms: meta.createdAtMs,
    bundle_path: meta.path,
    bundle_size_bytes: meta.sizeBytes,
    bundle_sha256: meta.sha256,
    encrypted: false,
    redactions_applied: true,
    // Loose fields.
    created_by: meta.createdBy,
    memories: meta.memories,
  };
}
