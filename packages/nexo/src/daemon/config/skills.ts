/**
 * The skills agents.yaml names, read from the config directory's skills store (`skills/`): each
 * agent's `skills` resolved for its tenant (its own copy first, then the global one). A name that
 * resolves to nothing is an error at its place in agents.yaml, a SKILL.md that cannot be read an
 * error of that file, so a typo never leaves an agent silently without its instructions.
 */
import { join } from "node:path";
import type { ConfigIssue } from "../../config/index.js";
import { type PromptSkill, SkillFileError, SkillStore, TENANTS_DIR } from "../../skills/index.js";
import type { AgentsFile } from "./agents.js";
import { type FileResult, issueAt } from "./sources.js";

export const SKILLS_DIR = "skills";

/** The store of a config directory's skills. */
export function configSkillStore(configDir: string): SkillStore {
  return new SkillStore(join(configDir, SKILLS_DIR));
}

export interface AgentSkills {
  /** By agent id, in the order each agent lists them. */
  readonly byAgent: ReadonlyMap<string, PromptSkill[]>;
  readonly issues: ConfigIssue[];
}

export async function resolveAgentSkills(
  agents: Extract<FileResult<AgentsFile>, { ok: true }> | undefined,
  configDir: string,
): Promise<AgentSkills> {
  const byAgent = new Map<string, PromptSkill[]>();
  const issues: ConfigIssue[] = [];
  if (agents === undefined) return { byAgent, issues };
  const store = configSkillStore(configDir);
  for (const [index, agent] of agents.value.agents.entries()) {
    const loaded: PromptSkill[] = [];
    for (const [position, name] of (agent.skills ?? []).entries()) {
      try {
        const skill = await store.resolve(name, agent.tenant_id);
        if (skill === undefined) {
          const where =
            agent.tenant_id === undefined
              ? `${SKILLS_DIR}/${name}/SKILL.md`
              : `${SKILLS_DIR}/${TENANTS_DIR}/${agent.tenant_id}/${name}/SKILL.md nor ${SKILLS_DIR}/${name}/SKILL.md`;
          issues.push(
            issueAt(
              agents.file,
              agents.locate,
              ["agents", index, "skills", position],
              `unknown skill "${name}" (no ${where})`,
            ),
          );
          continue;
        }
        loaded.push(skill);
      } catch (error) {
        if (!(error instanceof SkillFileError)) throw error;
        issues.push({ code: "schema", file: error.file, message: error.detail });
      }
    }
    byAgent.set(agent.id, loaded);
  }
  return { byAgent, issues };
}
