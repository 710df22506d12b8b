/**
 * `agents.yaml`: the agents the daemon runs, which model each uses, which tools it may call and
 * which channel traffic it owns.
 *
 * Routing depends on this file being unambiguous, so the checks that need only this file live in
 * the schema: ids are unique, and no (plugin, instance) pair is bound to two active agents (a
 * message is routed once, never fanned out). Checks that need other files (the provider exists in
 * llm.yaml for the agent's tenant, the tenant exists) are made by the loader.
 */
import { join, resolve } from "node:path";
import * as admin from "@nexo/wire/schemas/admin";
import * as plugin from "@nexo/wire/schemas/plugin";
import { z } from "zod";
import { isValidTopic } from "../../broker/topic.js";
import { disposableSchema } from "../../config/disposable-schema.js";
import { toolPatternMatcher } from "../../engine/tools/allow-list.js";
import { ApprovalModeSchema, TOOL_CATEGORIES } from "../../permissions.js";
import { type PromptSkill, renderSkillsSection } from "../../skills/index.js";

export const AGENT_ID_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;
/** The same defaults as the json-stream door, so an agent behaves alike behind either door. */
export const DEFAULT_MAX_TOKENS = 8192;
export const DEFAULT_MAX_TURNS = 30;
/** Messages waiting per session while a turn runs; a message arriving at a full queue is refused. */
export const DEFAULT_QUEUE_CAP = 32;
const MAX_QUEUE_CAP = 10_000;

/** An exact tool name (the registry's rule) or a prefix followed by one trailing `*`. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const TOOL_GLOB = /^[A-Za-z0-9_-]{0,63}\*$/;

/**
 * agents.yaml's schemas, built on use and freed once no parse holds them (config/disposable-schema.ts):
 * the file is parsed at start, on reload and by the admin services' edits, never at idle. The
 * wire's parts come from its builders (`pluginIdSchema()`, not the kept `PluginIdSchema`), so that
 * they are freed with the rest: a kept lazy schema composed here would stay built for good.
 */
function buildSchemas() {
  const AgentIdSchema = z.string().regex(AGENT_ID_PATTERN, {
    error: "agent ids are 1-64 chars of a-z, 0-9, '_' and '-', starting with a letter",
  });

  const ToolPatternSchema = z.string().refine((text) => TOOL_NAME.test(text) || TOOL_GLOB.test(text), {
    error: (issue) =>
      `${JSON.stringify(issue.input)} is neither a tool name (A-Z a-z 0-9 _ -) nor a name prefix ending in one "*"`,
  });

  const InstanceSchema = z.string().refine((text) => !text.includes(".") && isValidTopic(text), {
    error: 'an instance is one topic token: no ".", "*", ">" or whitespace',
  });

  const InboundBindingSchema = z.strictObject({
    /** The channel kind: inbound topics are `plugin.inbound.<plugin>[.<instance>]`. */
    plugin: plugin.pluginIdSchema(),
    /** Absent: only instance-less traffic of the kind; present: only that instance's. */
    instance: InstanceSchema.optional(),
  });

  const ApprovalAllowSchema = z.string().refine((text) => TOOL_NAME.test(text), {
    error: (issue) =>
      `${JSON.stringify(issue.input)} is neither a tool name nor a category (${TOOL_CATEGORIES.join(", ")})`,
  });

  const AgentApprovalSchema = z.strictObject({
    mode: ApprovalModeSchema.default("default"),
    /** Tool names or categories (info, edit, exec, mcp) that run without approval. */
    allow: z.array(ApprovalAllowSchema).default([]),
  });

  const AgentSchema = z.strictObject({
    id: AgentIdSchema,
    /** An inactive agent is validated but neither started nor routed to. */
    active: z.boolean().default(true),
    /** The admin RPC's tenant id rule, as tenants.yaml's (./tenants.ts). */
    tenant_id: admin
      .tenantKeySchema()
      .nullish()
      .transform((value) => value ?? undefined),
    /** Free text for operators (shown by the admin RPC); the model never sees it. */
    description: z.string().optional(),
    model: z.strictObject({
      /** A provider name from llm.yaml (global or the agent's tenant's), `scripted`, or a plugin's. */
      provider: z.string().min(1, { error: "must not be empty" }),
      model: z.string().min(1, { error: "must not be empty" }),
    }),
    system_prompt: z.string().optional(),
    /** Appends "Always reply in <language>." to the system prompt. */
    language: z.string().min(1).optional(),
    /**
     * Skills (`skills/<name>/SKILL.md`, a tenant's own copy first) added to the system prompt, in
     * this order. Absent or empty: none. Each must exist when the directory is loaded.
     */
    skills: z
      .array(admin.skillNameSchema())
      .refine((names) => new Set(names).size === names.length, { error: "a skill is listed twice" })
      .optional(),
    /** Absent: every tool. Present: only these names and `prefix*` globs. */
    allowed_tools: z.array(ToolPatternSchema).optional(),
    /** A strict allowlist: an agent receives channel traffic only through these. */
    inbound_bindings: z.array(InboundBindingSchema).default([]),
    /**
     * MCP servers (by their mcp.yaml name) the operator approved as channels into this agent, each
     * optionally for some of its inbound bindings only (`allowlist`: binding indices). Managed by the
     * admin RPC's channels/*; `nexo/admin/channels/doctor` checks them against mcp.yaml.
     */
    channels: z
      .strictObject({
        approved: z
          .array(
            z.strictObject({
              server_name: z.string().min(1, { error: "must not be empty" }),
              allowlist: z.array(z.int().min(0)).optional(),
            }),
          )
          .refine((entries) => new Set(entries.map((entry) => entry.server_name)).size === entries.length, {
            error: "a server is approved twice",
          })
          .default([]),
      })
      .optional(),
    /** Where file tools work; relative to the config dir. Default `<state_dir>/workspaces/<id>`. */
    workspace: z.string().min(1).optional(),
    approval: AgentApprovalSchema.default({ mode: "default", allow: [] }),
    /** Model calls per inbound message. */
    max_turns: z.int().min(1).max(1000).default(DEFAULT_MAX_TURNS),
    /** Output tokens per model call. */
    max_tokens: z.int().min(1).max(1_000_000).default(DEFAULT_MAX_TOKENS),
    config: z
      .strictObject({ queue_cap: z.int().min(1).max(MAX_QUEUE_CAP).default(DEFAULT_QUEUE_CAP) })
      .default({ queue_cap: DEFAULT_QUEUE_CAP }),
  });

  const AgentsFileSchema = z.strictObject({ agents: z.array(AgentSchema) }).superRefine(
    (file, ctx) => {
      // Also run when some agent has other problems: the value may then be partly unparsed, which
      // the checks tolerate, and the operator learns about a clash in the same pass.
      const list: unknown = isRecord(file) ? file.agents : undefined;
      const agents = Array.isArray(list) ? list.map(agentShape) : [];
      for (const issue of duplicateIds(agents)) ctx.addIssue({ code: "custom", ...issue });
      for (const issue of bindingConflicts(agents)) ctx.addIssue({ code: "custom", ...issue });
    },
    { when: () => true },
  );

  return { InboundBindingSchema, AgentApprovalSchema, AgentSchema, AgentsFileSchema };
}
export const InboundBindingSchema = disposableSchema(() => buildSchemas().InboundBindingSchema);
export const AgentApprovalSchema = disposableSchema(() => buildSchemas().AgentApprovalSchema);
export const AgentSchema = disposableSchema(() => buildSchemas().AgentSchema);
export const AgentsFileSchema = disposableSchema(() => buildSchemas().AgentsFileSchema);
export type InboundBinding = z.output<typeof InboundBindingSchema>;
export type AgentConfig = z.output<typeof AgentSchema>;
export type AgentsFile = z.output<typeof AgentsFileSchema>;

/**
 * An agent after the loader resolved it: `workspace` is absolute and always set, and the skills it
 * lists are read (`loadedSkills`, in the order of `skills`).
 */
export type ResolvedAgent = Omit<AgentConfig, "workspace"> & {
  workspace: string;
  loadedSkills: PromptSkill[];
};

interface LocatedProblem {
  path: (string | number)[];
  message: string;
}

/** What the routing checks need of an agent, read defensively from a possibly invalid value. */
interface AgentShape {
  id: string | undefined;
  active: boolean;
  bindings: (InboundBinding | undefined)[];
}

function agentShape(value: unknown): AgentShape {
  const record = isRecord(value) ? value : {};
  const bindings = Array.isArray(record.inbound_bindings) ? record.inbound_bindings : [];
  return {
    id: typeof record.id === "string" ? record.id : undefined,
    active: record.active !== false,
    bindings: bindings.map((binding: unknown) =>
      isRecord(binding) && typeof binding.plugin === "string"
        ? {
            plugin: binding.plugin,
            ...(typeof binding.instance === "string" ? { instance: binding.instance } : {}),
          }
        : undefined,
    ),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function duplicateIds(agents: readonly AgentShape[]): LocatedProblem[] {
  const first = new Map<string, number>();
  const problems: LocatedProblem[] = [];
  agents.forEach(({ id }, index) => {
    if (id === undefined) return;
    const earlier = first.get(id);
    if (earlier === undefined) first.set(id, index);
    else
      problems.push({
        path: ["agents", index, "id"],
        message: `duplicate agent id "${id}" (also agents[${earlier}])`,
      });
  });
  return problems;
}

/** `telegram` or `telegram (instance "main")`, as an operator would look for it. */
export function describeBinding(binding: InboundBinding): string {
  return binding.instance === undefined
    ? binding.plugin
    : `${binding.plugin} (instance "${binding.instance}")`;
}

function bindingConflicts(agents: readonly AgentShape[]): LocatedProblem[] {
  const owners = new Map<string, { index: number; agent: string; at: string }>();
  const problems: LocatedProblem[] = [];
  agents.forEach((agent, index) => {
    if (!agent.active || agent.id === undefined) return;
    const id = agent.id;
    agent.bindings.forEach((binding, position) => {
      if (binding === undefined) return;
      const key = `${binding.plugin}\u0000${binding.instance ?? ""}`;
      const at = `agents[${index}].inbound_bindings[${position}]`;
      const owner = owners.get(key);
      if (owner === undefined) {
        owners.set(key, { index, agent: id, at });
        return;
      }
      const path = ["agents", index, "inbound_bindings", position];
      const message =
        owner.index === index
          ? `${describeBinding(binding)} is listed twice for agent "${id}" (also ${owner.at})`
          : `${describeBinding(binding)} is bound to both agent "${owner.agent}" (${owner.at}) and agent "${id}"; a message is routed to one agent only, so deactivate one or give them different instances`;
      problems.push({ path, message });
    });
  });
  return problems;
}

/** Makes `workspace` absolute: relative to the config dir, or `<stateDir>/workspaces/<id>`. */
export function resolveAgentPaths(
  agent: AgentConfig,
  configDir: string,
  stateDir: string,
  loadedSkills: PromptSkill[] = [],
): ResolvedAgent {
  const workspace =
    agent.workspace === undefined
      ? join(stateDir, "workspaces", agent.id)
      : resolve(configDir, agent.workspace);
  return { ...agent, workspace, loadedSkills };
}

/**
 * The system prompt the model gets: `system_prompt`, then the output-language line when set, then
 * the agent's skills (skills/prompt.ts).
 */
export function agentSystemPrompt(
  agent: Pick<AgentConfig, "system_prompt" | "language"> & { loadedSkills?: readonly PromptSkill[] },
): string | undefined {
  const parts = [
    agent.system_prompt?.trim(),
    agent.language && `Always reply in ${agent.language}.`,
    renderSkillsSection(agent.loadedSkills ?? []),
  ];
  const text = parts.filter((part) => part !== undefined && part !== "").join("\n\n");
  return text === "" ? undefined : text;
}

/** Whether `allowed_tools` lets the agent use `toolName` (absent list: every tool). */
export function toolAllowed(patterns: readonly string[] | undefined, toolName: string): boolean {
  return patterns === undefined || toolPatternMatcher(patterns)(toolName);
}
