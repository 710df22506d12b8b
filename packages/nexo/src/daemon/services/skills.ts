/**
 * Skills: the config directory's skills store (`skills/<name>/SKILL.md`, a tenant's own under
 * `skills/_tenants/<tenant>/`), and the agents that load them. A change is written atomically and
 * then applied by a hot reload, so the next message of every agent that lists the skill is answered
 * with the new text in its system prompt. Deleting a skill an agent still resolves to is refused
 * with SkillInUseError (the config would no longer load).
 */

import type { Skill, SkillContent, SkillListing, SkillListOptions, SkillStore } from "../../skills/index.js";
import { AgentsFileSchema } from "../config/agents.js";
import { configSkillStore } from "../config/skills.js";
import type { ReloadReport } from "../types.js";
import type { ConfigFiles } from "./config-files.js";
import { SkillInUseError } from "./errors.js";

export interface SkillUpsert {
  name: string;
  /** The tenant's own namespace; undefined: the global one. */
  tenantId?: string | undefined;
  content: SkillContent;
}

export interface SkillUpsertResult {
  skill: Skill;
  created: boolean;
  reload: ReloadReport | undefined;
}

export interface SkillDeleteResult {
  /** False when there was no such skill (deleting is idempotent). */
  removed: boolean;
  reload: ReloadReport | undefined;
}

export class SkillsService {
  constructor(private readonly files: ConfigFiles) {}

  /** The namespace's own skills, sorted by name; unreadable ones carry their `problem`. */
  list(options: SkillListOptions = {}): Promise<SkillListing[]> {
    return this.store().list(options);
  }

  /** The namespace's own skill, or undefined. */
  get(name: string, tenantId?: string): Promise<Skill | undefined> {
    return this.store().get(name, tenantId);
  }

  /** Writes the skill, then reloads so the agents that list it get the new text. */
  async upsert(request: SkillUpsert): Promise<SkillUpsertResult> {
    const store = this.store();
    const { value, reload } = await this.files.change(async () => {
      const written = await store.upsert(request.name, request.content, request.tenantId);
      return { changed: true, value: written };
    });
    return { ...value, reload };
  }

  /** Removes the skill; refused with SkillInUseError while an agent would be left without it. */
  async delete(name: string, tenantId?: string): Promise<SkillDeleteResult> {
    const store = this.store();
    const { value, reload } = await this.files.change(async () => {
      if ((await store.get(name, tenantId)) === undefined) return { changed: false, value: false };
      const users = await this.usersLeftWithout(store, name, tenantId);
      if (users.length > 0) throw new SkillInUseError(name, tenantId, users);
      return { changed: true, value: await store.delete(name, tenantId) };
    });
    return { removed: value, reload };
  }

  /** The agents whose `skills` resolve to this very copy and to nothing once it is gone. */
  private async usersLeftWithout(
    store: SkillStore,
    name: string,
    tenantId: string | undefined,
  ): Promise<string[]> {
    const agents = (await this.files.read("agents", AgentsFileSchema))?.agents ?? [];
    const users: string[] = [];
    for (const agent of agents) {
      if (!(agent.skills ?? []).includes(name)) continue;
      const tenant = agent.tenant_id ?? undefined;
      if (tenantId !== undefined) {
        if (tenant !== tenantId) continue;
        if ((await store.get(name)) !== undefined) continue; // the global copy takes over
      } else if (tenant !== undefined && (await store.get(name, tenant)) !== undefined) {
        continue; // the agent's tenant has its own copy
      }
      users.push(agent.id);
    }
    return users.sort();
  }

  private store(): SkillStore {
    return configSkillStore(this.files.dir);
  }
}
