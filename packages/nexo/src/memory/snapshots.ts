/**
 * Snapshots of an agent's long-term memory: bundles an operator can list, take, delete and restore
 * (the admin RPC's memory/*_snapshot). A bundle is one JSON file,
 * `<root>/<tenant or _default>/<agent>/<id>.json` (0600 in 0700 directories), holding the agent's
 * memories as stored — already redacted by the store, and run through the redactor once more so a
 * secret never reaches a bundle. Restoring replaces the agent's memories with the bundle's in one
 * transaction, after taking a snapshot of what it replaces (`pre_snapshot_id`), and only when the
 * tenant the caller names is the one the bundle records.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { v7 as uuidv7 } from "uuid";
import { writeFileAtomic } from "../config/index.js";
import { type MemoryEntry, type MemoryRepository, redactJson } from "../store/index.js";

export const SNAPSHOT_FORMAT = "nexo-memory-snapshot/1";
/** The directory of the default tenant (an empty tenant name). */
const DEFAULT_TENANT_DIR = "_default";
/** Agent ids and tenants become directory names: the config's own alphabets, nothing else. */
const SAFE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const SNAPSHOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface SnapshotMeta {
  id: string;
  agentId: string;
  /** "" for the default tenant. */
  tenant: string;
  label: string | undefined;
  createdAtMs: number;
  createdBy: string;
  path: string;
  sizeBytes: number;
  sha256: string;
  memories: number;
}

export interface RestoreReport {
  fromSnapshotId: string;
  /** The snapshot of what was replaced; undefined on a dry run. */
  preSnapshotId: string | undefined;
  /** How many memories the agent has after the restore (or would have). */
  restoredMemories: number;
  /** How many it had before. */
  replacedMemories: number;
  dryRun: boolean;
}

/** A name, tenant or id that is not acceptable, or a restore across tenants. */
export class SnapshotRequestError extends Error {
  override readonly name = "SnapshotRequestError";
}

interface Bundle {
  format: typeof SNAPSHOT_FORMAT;
  id: string;
  agent_id: string;
  tenant: string;
  label?: string;
  created_at_ms: number;
  created_by: string;
  memories: MemoryEntry[];
}

export class MemorySnapshots {
  constructor(
    private readonly memory: MemoryRepository,
    /** Where bundles are kept (the daemon's `<state_dir>/memory-snapshots`). */
    private readonly root: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The agent's snapshots for the tenant, newest first. A bundle that cannot be read is skipped. */
  async list(agentId: string, tenant: string): Promise<SnapshotMeta[]> {
    const dir = this.dirOf(agentId, tenant);
    const files = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [] as string[];
      throw error;
    });
    const metas: SnapshotMeta[] = [];
    for (const file of files) {
      if (!file.endsWith(".json")) continue;
      const read = await this.readBundle(join(dir, file)).catch(() => undefined);
      if (read !== undefined) metas.push(read.meta);
    }
    return metas.sort((a, b) => b.createdAtMs - a.createdAtMs || b.id.localeCompare(a.id));
  }

  /** Takes a snapshot of the agent's memories as they are now. */
  async create(
    agentId: string,
    tenant: string,
    options: { label?: string; createdBy: string },
  ): Promise<SnapshotMeta> {
    const dir = this.dirOf(agentId, tenant);
    const bundle: Bundle = {
      format: SNAPSHOT_FORMAT,
      id: uuidv7(),
      agent_id: agentId,
      tenant,
      ...(options.label === undefined ? {} : { label: options.label }),
      created_at_ms: this.now(),
      created_by: options.createdBy,
      memories: redactJson(this.memory.all(agentId)).value,
    };
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `${bundle.id}.json`);
    await writeFileAtomic(path, `${JSON.stringify(bundle, null, 2)}\n`, { mode: 0o600 });
    return (await this.readBundle(path)).meta;
  }

  /** Deletes a snapshot; true also when it was already gone (idempotent). */
  async delete(agentId: string, tenant: string, id: string): Promise<boolean> {
    await rm(this.pathOf(agentId, tenant, id), { force: true });
    return true;
  }

  /**
   * Replaces the agent's memories with the snapshot's, after a snapshot of what they are now. The
   * bundle must be the agent's and record `tenant` (SnapshotRequestError otherwise, before anything
   * changes); a dry run only reports.
   */
  async restore(
    agentId: string,
    tenant: string,
    id: string,
    options: { dryRun?: boolean } = {},
  ): Promise<RestoreReport> {
    const path = this.pathOf(agentId, tenant, id);
    const { bundle } = await this.readBundle(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT")
        throw new SnapshotRequestError(`no snapshot "${id}" of agent "${agentId}" for tenant "${tenant}"`);
      throw error;
    });
    if (bundle.tenant !== tenant || bundle.agent_id !== agentId)
      throw new SnapshotRequestError(
        `snapshot "${id}" is agent "${bundle.agent_id}" of tenant "${bundle.tenant}", not "${agentId}" of "${tenant}"`,
      );
    const replacedMemories = this.memory.count(agentId);
    if (options.dryRun)
      return {
        fromSnapshotId: id,
        preSnapshotId: undefined,
        restoredMemories: bundle.memories.length,
        replacedMemories,
        dryRun: true,
      };
    const pre = await this.create(agentId, tenant, { label: `before restoring ${id}`, createdBy: "restore" });
    const restoredMemories = this.memory.replaceAll(agentId, bundle.memories);
    return { fromSnapshotId: id, preSnapshotId: pre.id, restoredMemories, replacedMemories, dryRun: false };
  }

  private dirOf(agentId: string, tenant: string): string {
    if (!SAFE_NAME.test(agentId)) throw new SnapshotRequestError(`agent_id "${agentId}" is not an agent id`);
    if (tenant !== "" && !SAFE_NAME.test(tenant))
      throw new SnapshotRequestError(`tenant "${tenant}" is not a tenant id`);
    return join(this.root, tenant === "" ? DEFAULT_TENANT_DIR : tenant, agentId);
  }

  private pathOf(agentId: string, tenant: string, id: string): string {
    if (!SNAPSHOT_ID.test(id)) throw new SnapshotRequestError(`"${id}" is not a snapshot id`);
    return join(this.dirOf(agentId, tenant), `${id}.json`);
  }

  private async readBundle(path: string): Promise<{ bundle: Bundle; meta: SnapshotMeta }> {
    const bytes = await readFile(path);
    const bundle = JSON.parse(bytes.toString("utf8")) as Bundle;
    if (bundle.format !== SNAPSHOT_FORMAT || !Array.isArray(bundle.memories))
      throw new SnapshotRequestError(`${path} is not a memory snapshot`);
    return {
      bundle,
      meta: {
        id: bundle.id,
        agentId: bundle.agent_id,
        tenant: bundle.tenant,
        label: bundle.label,
        createdAtMs: bundle.created_at_ms,
        createdBy: bundle.created_by,
        path,
        sizeBytes: bytes.length,
        sha256: createHash("sha256").update(bytes).digest("hex"),
        memories: bundle.memories.length,
      },
    };
  }
}
