/**
 * `skills/list|read|view|setEnabled|uninstall` (`skillsManagement`) over the config directory's
 * skills store (`skills/<name>/SKILL.md`, the same store the admin RPC edits and agents load into
 * their system prompts by name). Every skill there is a `workspace` skill.
 *
 * - A skill is `enabled` when the workspace's agent (workspace-agent.ts) lists it in its `skills:`
 *   — exactly what puts it in that agent's prompt. `skills/setEnabled` adds it to or removes it
 *   from that list in agents.yaml (other lines and comments kept). Without a workspace agent,
 *   `enabled` says whether any active agent lists it, and `setEnabled` is refused (-32602).
 * - `skills/read` is the file as stored; `skills/view` is exactly the prompt section an agent that
 *   lists the skill gets (display name, description, body cut at `max_chars`).
 * - `skills/uninstall` deletes the skill; while an agent still lists it the store refuses, and so
 *   does this method (-32602 naming the agents) rather than leave the config unloadable.
 * - `skills/restoreOriginal` is not served (unsupported.ts): nexo has no workspace variants of a
 *   skill, so `skillVariants` is off.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { AppServerErrorCode as Code, type SkillInfo, skillsMethods } from "@nexo/wire/schemas/appserver";
import type { Document } from "yaml";
import { yamlLibrary } from "../../../config/yaml-library.js";
import { SKILLS_DIR } from "../../../daemon/config/skills.js";
import { indexById } from "../../../daemon/services/yaml-patch.js";
import {
  renderSkillsSection,
  SKILL_FILE,
  type Skill,
  SkillFileError,
  type SkillListing,
  SkillNameError,
} from "../../../skills/index.js";
import { type Call, defineFamily } from "../family.js";
import { familyError, viaServices } from "../management.js";
import { announceConfigChange, managesConfig, managesLive, servicesOf } from "./managed.js";
import { findWorkspaceAgent, workspaceAgent } from "./workspace-agent.js";

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

/** The skills that count as enabled: the workspace agent's, else those any active agent lists. */
async function enabledSkills(call: Call): Promise<Set<string>> {
  const agent = await findWorkspaceAgent(call);
  if (agent !== undefined) return new Set(agent.skills ?? []);
  const agents = await viaServices(CODES, () => servicesOf(call).agents.list());
  return new Set(agents.filter((a) => a.active !== false).flatMap((a) => a.skills ?? []));
}

function skillInfo(call: Call, entry: SkillListing, enabled: ReadonlySet<string>): SkillInfo {
  return {
    name: entry.name,
    description: entry.description ?? entry.name,
    ...(entry.displayName === undefined ? {} : { displayName: entry.displayName }),
    source: "workspace",
    available: entry.problem === undefined,
    unavailableReason: entry.problem ?? null,
    enabled: enabled.has(entry.name),
    path: skillPath(call, entry.name),
    metadata: metadataOf(entry),
  };
}

/** Adds `name` to (or removes it from) the `skills:` list of agent `agentId`, in place. */
function setListed(doc: Document.Parsed, agentId: string, name: string, listed: boolean): void {
  const index = indexById(doc, ["agents"], agentId);
  if (index < 0) return; // gone since it was read: the whole-directory check reports nothing to do
  const path = ["agents", index, "skills"];
  const list = doc.getIn(path, true);
  // The copy of yaml the daemon loads for a parse and lets go (config/yaml-library.ts), not a
  // second one kept by this module: node kinds are told apart by symbol, across copies.
  const { isScalar, isSeq } = yamlLibrary();
  if (!isSeq(list)) {
    if (listed) doc.setIn(path, doc.createNode([name]));
    return;
  }
  const at = list.items.findIndex((item) => isScalar(item) && item.value === name);
  if (listed && at < 0) list.add(doc.createNode(name));
  if (!listed && at >= 0) list.delete(at);
}

export const skillsFamily = defineFamily({
  name: "skills",
  methods: skillsMethods,
  available: managesConfig,
  capabilities: () => ({ skillsManagement: true }),
  handlers: {
    "skills/list": async ({ includeUnavailable }, call) => {
      const listing = await viaServices(CODES, () => servicesOf(call).skills.list());
      const enabled = await enabledSkills(call);
      const skills = listing.map((entry) => skillInfo(call, entry, enabled));
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
    "skills/setEnabled": async ({ name, enabled }, call) => {
      await skillNamed(call, name);
      const agent = await workspaceAgent(call);
      const services = servicesOf(call);
      const { changed } = await viaServices(CODES, () =>
        services.config.edit("agents", (doc) => setListed(doc, agent.id, name, enabled)),
      );
      if (changed) {
        // The agent's prompt changed: loaded threads of the daemon pick it up at their next turn.
        if (managesLive(call.host)) await call.host.threads.releaseIdle();
        announceConfigChange(call.host, "skills/setEnabled", ["skills"]);
      }
      const entry = (await viaServices(CODES, () => services.skills.list())).find((s) => s.name === name);
      if (entry === undefined) throw notFound(name);
      return { skill: skillInfo(call, entry, await enabledSkills(call)) };
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
