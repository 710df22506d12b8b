/**
 * Agents: list, read, create or change, and delete the agents of agents.yaml. Entries come back as
 * written (see config-files.ts); a change is one comment-preserving edit of the agent's block,
 * checked against the whole directory, then applied by a hot reload, so the next message already
 * goes to the agent as changed.
 */
import type { z } from "zod";
import { type AgentSchema, AgentsFileSchema } from "../config/agents.js";
import type { ReloadReport } from "../types.js";
import type { ConfigFiles } from "./config-files.js";
import { NotFoundError } from "./errors.js";
import { appendToList, indexById, type Patch, patchMapping, withoutRemovals } from "./yaml-patch.js";

/** An agent's block in agents.yaml as written: `${...}` placeholders are not expanded. */
export type AgentEntry = z.input<typeof AgentSchema>;

/** The keys to set; `null` removes a key (its default applies), an absent key keeps its value. */
export type AgentPatch = { id: string } & Patch<Omit<AgentEntry, "id">>;

export interface AgentFilter {
  /** Only agents whose `active` is not false. */
  activeOnly?: boolean;
  /** Only agents of this tenant. */
  tenantId?: string;
  /** Only agents with an inbound binding to this channel kind. */
  channel?: string;
}

export interface AgentUpsertResult {
  agent: AgentEntry;
  /** True when the agent did not exist before. */
  created: boolean;
  /** What the reload changed; undefined when the patch changed nothing (nothing was written). */
  reload: ReloadReport | undefined;
}

export interface AgentDeleteResult {
  /** False when there was no such agent (deleting is idempotent). */
  removed: boolean;
  reload: ReloadReport | undefined;
}

const AGENTS = ["agents"];

export class AgentsService {
  constructor(private readonly files: ConfigFiles) {}

  /** The agents of agents.yaml, sorted by id. */
  async list(filter: AgentFilter = {}): Promise<AgentEntry[]> {
    const agents = await this.all();
    return agents
      .filter((agent) => !filter.activeOnly || agent.active !== false)
      .filter((agent) => filter.tenantId === undefined || agent.tenant_id === filter.tenantId)
      .filter(
        (agent) =>
          filter.channel === undefined ||
          (agent.inbound_bindings ?? []).some((binding) => binding.plugin === filter.channel),
      )
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /** One agent; NotFoundError when agents.yaml has none of that id. */
  async get(id: string): Promise<AgentEntry> {
    const agent = (await this.all()).find((candidate) => candidate.id === id);
    if (agent === undefined) throw new NotFoundError("agent", id, "in agents.yaml");
    return agent;
  }

  /**
   * Creates the agent (appended to the list) or changes the keys the patch carries. A new agent
   * needs at least `model`; whatever the result, it must pass the whole directory's validation
   * (InvalidConfigError otherwise, and the file is left as it was).
   */
  async upsert(patch: AgentPatch): Promise<AgentUpsertResult> {
    const { id, ...fields } = patch;
    let created = false;
    const edit = await this.files.edit("agents", (doc) => {
      const index = indexById(doc, AGENTS, id);
      created = index < 0;
      if (created) appendToList(doc, AGENTS, { id, ...withoutRemovals(fields) });
      else patchMapping(doc, [...AGENTS, index], fields);
    });
    return { agent: await this.get(id), created, reload: edit.reload };
  }

  /** Removes the agent's block; `removed: false` when there was none. */
  async delete(id: string): Promise<AgentDeleteResult> {
    let removed = false;
    const edit = await this.files.edit("agents", (doc) => {
      const index = indexById(doc, AGENTS, id);
      removed = index >= 0;
      if (removed) doc.deleteIn([...AGENTS, index]);
    });
    return { removed, reload: edit.reload };
  }

  private async all(): Promise<AgentEntry[]> {
    return (await this.files.read("agents", AgentsFileSchema))?.agents ?? [];
  }
}
