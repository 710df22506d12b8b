/**
 * Tenants: the entries of tenants.yaml, with how many agents of agents.yaml belong to each. A
 * change is one comment-preserving edit checked against the whole directory, then a hot reload.
 *
 * Creating the first tenant creates tenants.yaml, and from then on every tenant id the directory
 * uses must be listed there (the loader's rule), so such a change is refused with every agent it
 * would leave pointing nowhere. Deleting a tenant that agents still belong to is refused, with
 * those agents (`orphanedAgents`), unless `purge` is set: then its agents, its own providers in
 * llm.yaml and its skills go with it, each step a valid directory of its own.
 */
import type { z } from "zod";
import { LlmConfigSchema } from "../../engine/providers/llm-config.js";
import { isoTime } from "../../iso-time.js";
import { AgentsFileSchema } from "../config/agents.js";
import { configSkillStore } from "../config/skills.js";
import { type TenantSchema, TenantsFileSchema } from "../config/tenants.js";
import type { ReloadReport } from "../types.js";
import type { ConfigFiles } from "./config-files.js";
import { ConflictError, NotFoundError } from "./errors.js";
import { appendToList, indexById, type Patch, patchMapping, withoutRemovals } from "./yaml-patch.js";

/** A tenant's entry in tenants.yaml as written. */
export type TenantEntry = z.input<typeof TenantSchema>;

export interface TenantRecord {
  entry: TenantEntry;
  /** Agents of agents.yaml with this `tenant_id`. */
  agentCount: number;
}

/** The keys to set; `null` removes one. `created_at` is set by the service on creation. */
export type TenantPatch = { id: string } & Patch<Omit<TenantEntry, "id" | "created_at">>;

export interface TenantFilter {
  activeOnly?: boolean;
  /** Only ids starting with this. */
  prefix?: string;
}

export interface TenantUpsertResult {
  tenant: TenantRecord;
  created: boolean;
  reload: ReloadReport | undefined;
}

export interface TenantDeleteResult {
  /** False when there was no such tenant, or when agents still belong to it (see orphanedAgents). */
  removed: boolean;
  /** Without purge: the agents that keep the tenant from being deleted. */
  orphanedAgents: string[];
  /** With purge: the agents deleted with the tenant. */
  purgedAgents: string[];
  /** Each reload the deletion went through, in order. */
  reloads: ReloadReport[];
}

const TENANTS = ["tenants"];

export class TenantsService {
  constructor(
    private readonly files: ConfigFiles,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The tenants of tenants.yaml in file order, filtered. */
  async list(filter: TenantFilter = {}): Promise<TenantRecord[]> {
    const [tenants, counts] = await Promise.all([this.entries(), this.agentCounts()]);
    return tenants
      .filter((tenant) => !filter.activeOnly || tenant.active !== false)
      .filter((tenant) => filter.prefix === undefined || tenant.id.startsWith(filter.prefix))
      .map((entry) => ({ entry, agentCount: counts.get(entry.id) ?? 0 }));
  }

  /** One tenant; NotFoundError when tenants.yaml has none of that id. */
  async get(id: string): Promise<TenantRecord> {
    const found = (await this.list()).find((tenant) => tenant.entry.id === id);
    if (found === undefined) throw new NotFoundError("tenant", id, "in tenants.yaml");
    return found;
  }

  /** Creates the tenant (stamped with `created_at`) or changes the keys the patch carries. */
  async upsert(patch: TenantPatch): Promise<TenantUpsertResult> {
    const { id, ...fields } = patch;
    let created = false;
    const edit = await this.files.edit("tenants", (doc) => {
      const index = indexById(doc, TENANTS, id);
      created = index < 0;
      if (created)
        appendToList(doc, TENANTS, { id, ...withoutRemovals(fields), created_at: isoTime(this.now()) });
      else patchMapping(doc, [...TENANTS, index], fields);
    });
    return { tenant: await this.get(id), created, reload: edit.reload };
  }

  /**
   * Deletes the tenant. Without `purge`, refused (`removed: false`, `orphanedAgents`) while agents
   * belong to it, and ConflictError while llm.yaml still has providers of its own. With `purge`,
   * its agents, its llm.yaml providers and its skills are deleted first.
   */
  async delete(id: string, options: { purge?: boolean } = {}): Promise<TenantDeleteResult> {
    const result: TenantDeleteResult = { removed: false, orphanedAgents: [], purgedAgents: [], reloads: [] };
    if (!(await this.entries()).some((tenant) => tenant.id === id)) return result;
    const members = (await this.agents()).filter((agent) => agent.tenant_id === id).map((agent) => agent.id);
    const llm = (await this.files.read("llm", LlmConfigSchema)) ?? {};
    const ownProviders = llm.tenants?.[id] !== undefined;
    if (!options.purge) {
      if (members.length > 0) return { ...result, orphanedAgents: members.sort() };
      if (ownProviders)
        throw new ConflictError(
          `tenant "${id}" still has providers of its own in llm.yaml (tenants.${id}); delete them first or purge the tenant`,
        );
    }
    const note = (reload: ReloadReport | undefined) => {
      if (reload !== undefined) result.reloads.push(reload);
    };
    if (members.length > 0) {
      note(
        (
          await this.files.edit("agents", (doc) => {
            for (const member of members) {
              const index = indexById(doc, ["agents"], member);
              if (index >= 0) doc.deleteIn(["agents", index]);
            }
          })
        ).reload,
      );
      result.purgedAgents = members.sort();
    }
    if (ownProviders)
      note((await this.files.edit("llm", (doc) => void doc.deleteIn(["tenants", id]))).reload);
    note(
      (
        await this.files.edit("tenants", (doc) => {
          const index = indexById(doc, TENANTS, id);
          result.removed = index >= 0;
          if (result.removed) doc.deleteIn([...TENANTS, index]);
        })
      ).reload,
    );
    if (options.purge) {
      // Its skills namespace: nothing can load it any more.
      await configSkillStore(this.files.dir).deleteTenant(id);
    }
    return result;
  }

  private async entries(): Promise<TenantEntry[]> {
    return (await this.files.read("tenants", TenantsFileSchema))?.tenants ?? [];
  }

  private async agents() {
    return (await this.files.read("agents", AgentsFileSchema))?.agents ?? [];
  }

  private async agentCounts(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const agent of await this.agents()) {
      if (agent.tenant_id) counts.set(agent.tenant_id, (counts.get(agent.tenant_id) ?? 0) + 1);
    }
    return counts;
  }
}
