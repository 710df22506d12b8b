/**
 * `subagent/profiles/*` (`subAgentManagement`) over nexo's agents: a profile is an agent of
 * agents.yaml, `enabled` is its `active` switch and `definition` its entry as written there (the
 * config file's own keys, `${VAR}` references not expanded). Upserting replaces the definition — a
 * key the client leaves out is removed — and, like every edit through the services, is validated
 * with the whole directory first and keeps every other line and comment of agents.yaml.
 *
 * nexo has no built-in profiles and no external-CLI runtimes, so `isBuiltIn` is always false and
 * the external-CLI settings are reported off.
 *
 * - `subagent/settings/update`: nexo's sub-agents (the `Spawn` tool) run on the model of the agent
 *   that spawns them, and there are no external-CLI runtimes to resume. The settings are therefore
 *   fixed — `model: null`, `externalCliSessionResumeEnabled: false` — and the method answers them;
 *   asking for anything else is refused with -32602 saying why, rather than stored and ignored.
 *
 * The child threads `Spawn` sub-agents leave (`subagent/children/list|close|resume`) are served
 * apart, by every server (subagent-sessions.ts).
 */
import {
  AppServerErrorCode as Code,
  type SubAgentProfileEntry,
  subAgentMethods,
} from "@nexo/wire/schemas/appserver";
import type { AgentEntry, AgentPatch } from "../../../daemon/services/index.js";
import { type Call, defineFamily } from "../family.js";
import { familyError, viaServices } from "../management.js";
import { announceConfigChange, managesConfig, servicesOf } from "./managed.js";

const CODES = {
  not_found: Code.subAgentProfileNotFound,
  invalid_config: Code.subAgentProfileValidationFailed,
  conflict: Code.subAgentProfileProtected,
};

/** The agent every thread falls back to: the first active one by id. */
function defaultName(agents: readonly AgentEntry[]): string {
  return agents.find((agent) => agent.active !== false)?.id ?? "";
}

/** The only settings nexo's sub-agents have (see the header). */
const FIXED_SETTINGS = { externalCliSessionResumeEnabled: false, model: null };

export function toProfile(agent: AgentEntry, isDefault: boolean): SubAgentProfileEntry {
  const { id, ...definition } = agent;
  const enabled = agent.active !== false;
  return {
    name: id,
    isBuiltIn: false,
    isTemplate: false,
    hasWorkspaceOverride: true,
    isDefault,
    enabled,
    definition: definition as Record<string, unknown>,
    diagnostic: {
      enabled,
      binaryResolved: true,
      hiddenFromPrompt: !enabled,
      ...(enabled ? {} : { hiddenReason: "the agent is not active" }),
      warnings: [],
    },
  };
}

async function profile(call: Call, name: string): Promise<{ profile: SubAgentProfileEntry }> {
  const services = servicesOf(call);
  const agents = await viaServices(CODES, () => services.agents.list());
  const agent =
    agents.find((candidate) => candidate.id === name) ??
    (await viaServices(CODES, () => services.agents.get(name)));
  return { profile: toProfile(agent, defaultName(agents) === name) };
}

export const subAgentFamily = defineFamily({
  name: "subagents",
  methods: subAgentMethods,
  available: managesConfig,
  capabilities: () => ({ subAgentManagement: true }),
  handlers: {
    "subagent/profiles/list": async (_params, call) => {
      const agents = await viaServices(CODES, () => servicesOf(call).agents.list());
      const fallback = defaultName(agents);
      return {
        defaultName: fallback,
        settings: FIXED_SETTINGS,
        profiles: agents.map((agent) => toProfile(agent, agent.id === fallback)),
      };
    },
    "subagent/profiles/setEnabled": async ({ name, enabled }, call) => {
      const services = servicesOf(call);
      await viaServices(CODES, () => services.agents.get(name));
      await viaServices(CODES, () => services.agents.upsert({ id: name, active: enabled }));
      announceConfigChange(call.host, "subagent/profiles/setEnabled", ["subagent"]);
      return profile(call, name);
    },
    "subagent/profiles/upsert": async ({ name, definition }, call) => {
      const services = servicesOf(call);
      const existing = (await viaServices(CODES, () => services.agents.list())).find((a) => a.id === name);
      const { id: _ignored, ...fields } = definition;
      const patch: Record<string, unknown> = { ...fields };
      // Replace, not merge: what the old entry had and the new definition lacks is removed.
      for (const key of Object.keys(existing ?? {})) {
        if (key !== "id" && !(key in fields)) patch[key] = null;
      }
      await viaServices(CODES, () => services.agents.upsert({ ...patch, id: name } as AgentPatch));
      announceConfigChange(call.host, "subagent/profiles/upsert", ["subagent"]);
      return profile(call, name);
    },
    "subagent/settings/update": ({ externalCliSessionResumeEnabled, model }) => {
      if (externalCliSessionResumeEnabled === true)
        throw familyError(
          Code.invalidParams,
          "Invalid params",
          "externalCliSessionResumeEnabled: nexo runs no external-CLI sub-agents, so there are no CLI sessions to resume",
        );
      if (typeof model === "string" && model.trim() !== "")
        throw familyError(
          Code.invalidParams,
          "Invalid params",
          "model: nexo's sub-agents always use the model of the agent that spawns them; set that agent's model instead (subagent/profiles/upsert or workspace/config/update)",
        );
      return { settings: FIXED_SETTINGS };
    },
    "subagent/profiles/remove": async ({ name }, call) => {
      const services = servicesOf(call);
      await viaServices(CODES, () => services.agents.get(name));
      const { removed } = await viaServices(CODES, () => services.agents.delete(name));
      announceConfigChange(call.host, "subagent/profiles/remove", ["subagent"]);
      return { name, removed };
    },
  },
});
