/**
 * `skills/list|read|view|uninstall` (`skillsManagement`) over the config directory's skills store
 * (`skills/<name>/SKILL.md`, the same store the admin RPC edits and agents load into their system
 * prompts by name). Every skill there is a `workspace` skill.
 *
 * - `skills/read` is the file as stored; `skills/view` is exactly the prompt section an agent that
 *   lists the skill gets (display name, description, body cut at `max_chars`).
 * - `skills/uninstall` deletes the skill; while an agent still lists it the store refuses, and so
 *   does this method (-32602 naming the agents) rather than leave the config unloadable.
 * - Not served: `skills/setEnabled` and `skills/restoreOriginal`. nexo has no per-skill switch (an
 *   agent loads exactly the skills its `skills:` lists) and no workspace variants.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { AppServerErrorCode as Code, type SkillInfo, skillsMethods } from "@nexo/wire/schemas/appserver";
import { SKILLS_DIR } from "../../../daemon/config/skills.js";
import {
  renderSkillsSection,
  SKILL_FILE,
  type Skill,
  SkillFileError,
  SkillNameError,
} from "../../../skills/index.js";
import { type Call, defineFamily } from "../family.js";
import { familyError, viaServices } from "../management.js";
import { announceConfigChange, managesConfig, servicesOf } from "./managed.js";

const CODES = { not_found: Code.skillNotFound };

function skillPath(call: Call, name: string): string {
  return join(servicesOf(call).config.dir, SKILLS_DIR, name, SKILL_FILE);
}

function notFound(name: string) {
  return familyError(Code.skillNotFound, `Skill not found: ${name}`, `no skill "${name}" in ${SKILLS_DIR}/`);
}

/** The skill, or the protocol's error: -32040 when missing, -32602 for a bad name or a broken file. */
async function skillNamed(call: Call, name: string): Promise<Skill> {
  let skill: Skill | undefined;
  try {
    skill = await viaServices(CODES, () => servicesOf(call).skills.get(name));
  } catch (error) {
    if (error instanceof SkillNameError || error instanceof SkillFileError) {
      throw familyError(Code.invalidParams, "Invalid params", error.message);
    }
    throw error;
  }
  if (skill === undefined) throw notFound(name);
  return skill;
}

function metadataOf(skill: Partial<Skill>): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  if (skill.description !== undefined) metadata.description = skill.description;
  if (skill.displayName !== undefined) metadata.display_name = skill.displayName;
  if (skill.maxChars !== undefined) metadata.max_chars = skill.maxChars;
  if (skill.requires !== undefined) metadata.requires = skill.requires;
  return metadata;
}

export const skillsFamily = defineFamily({
  name: "skills",
  methods: skillsMethods,
  available: managesConfig,
  capabilities: () => ({ skillsManagement: true }),
  handlers: {
    "skills/list": async ({ includeUnavailable }, call) => {
      const listing = await viaServices(CODES, () => servicesOf(call).skills.list());
      const skills: SkillInfo[] = listing.map((entry) => ({
        name: entry.name,
        description: entry.description ?? entry.name,
        ...(entry.displayName === undefined ? {} : { displayName: entry.displayName }),
        source: "workspace",
        available: entry.problem === undefined,
        unavailableReason: entry.problem ?? null,
        enabled: true,
        path: skillPath(call, entry.name),
        metadata: metadataOf(entry),
      }));
      return { skills: includeUnavailable === false ? skills.filter((skill) => skill.available) : skills };
    },
    "skills/read": async ({ name }, call) => {
      const skill = await skillNamed(call, name);
      return { name, content: await readFile(skill.path, "utf8"), metadata: metadataOf(skill) };
    },
    "skills/view": async ({ name }, call) => {
      const skill = await skillNamed(call, name);
      return { name, content: renderSkillsSection([skill]) ?? "" };
    },
    "skills/uninstall": async ({ name }, call) => {
      const skill = await skillNamed(call, name);
      await viaServices(CODES, () => servicesOf(call).skills.delete(name));
      announceConfigChange(call.host, "skills/uninstall", ["skills"]);
      return {
        name,
        uninstalled: true,
        source: "workspace" as const,
        removedSourcePath: skill.path,
        removedVariantCount: 0,
      };
    },
  },
});
