/**
 * The checks no single file can make: a name used in one file must exist in another. Each check
 * runs only when the files it compares are valid themselves, so one typo is reported once rather
 * than again as the failures it causes elsewhere.
 */
import { readFileSync } from "node:fs";
import type { ConfigIssue } from "../../config/index.js";
import { yamlLibrary } from "../../config/yaml-library.js";
import type { LlmConfig } from "../../engine/providers/llm-config.js";
import type { AgentsFile } from "./agents.js";
import { describeBinding } from "./agents.js";
import type { PluginsConfig } from "./plugins.js";
import type { ConfigWarning, FileResult } from "./sources.js";
import { issueAt, warningAt } from "./sources.js";
import type { TenantsFile } from "./tenants.js";

/** Always present, unless llm.yaml redefines it (the provider registry's rule). */
const BUILTIN_PROVIDERS = ["scripted"];

/** Which provider names each tenant can use. */
export class ProviderNames {
  private readonly global: Set<string>;
  private readonly tenants = new Map<string, Set<string>>();
  /**
   * False when a plugin that may contribute providers could not be read: an unknown name may then
   * be that plugin's, and saying otherwise would blame the wrong file.
   */
  readonly complete: boolean;

  constructor(llm: LlmConfig, plugins: PluginsConfig, complete: boolean) {
    const fromPlugins = plugins.plugins.flatMap(
      (entry) => entry.manifest?.manifest.plugin.extends?.llm_providers ?? [],
    );
    this.global = new Set([...BUILTIN_PROVIDERS, ...Object.keys(llm.providers), ...fromPlugins]);
    for (const [tenant, { providers }] of Object.entries(llm.tenants)) {
      this.tenants.set(tenant, new Set(Object.keys(providers)));
    }
    this.complete = complete;
  }

  /** The names `tenant` can use: its own and the global ones. */
  visible(tenant: string | undefined): Set<string> {
    const own = tenant === undefined ? [] : [...(this.tenants.get(tenant) ?? [])];
    return new Set([...this.global, ...own]);
  }

  /** Every name usable by someone. */
  all(): Set<string> {
    return new Set([...this.global, ...[...this.tenants.values()].flatMap((names) => [...names])]);
  }

  /** The tenants that define `name` for themselves. */
  tenantsDefining(name: string): string[] {
    return [...this.tenants].filter(([, names]) => names.has(name)).map(([tenant]) => tenant);
  }

  /** Why `tenant` cannot use `name`, or undefined when it can (or when that cannot be known). */
  problem(name: string, tenant: string | undefined): string | undefined {
    const visible = this.visible(tenant);
    if (visible.has(name) || !this.complete) return undefined;
    const owners = this.tenantsDefining(name);
    const who = tenant === undefined ? "a global agent" : `tenant "${tenant}"`;
    if (owners.length > 0) {
      return `provider "${name}" is defined in llm.yaml only for tenant ${owners.map((owner) => `"${owner}"`).join(", ")}, not for ${who}`;
    }
    return `unknown provider "${name}" (${who} can use: ${[...visible].sort().join(", ")})`;
  }
}

export interface CrossCheckInput {
  agents: FileResult<AgentsFile> | undefined;
  /** undefined: llm.yaml is invalid (no provider checks); absent file: an empty config. */
  llm: { config: LlmConfig; source: FileResult<LlmConfig> | undefined } | undefined;
  tenants: FileResult<TenantsFile> | undefined;
  plugins: { config: PluginsConfig; source: FileResult<unknown> | undefined; complete: boolean } | undefined;
  brokerType: "local" | "nats" | undefined;
}

export function crossCheck(input: CrossCheckInput): { issues: ConfigIssue[]; warnings: ConfigWarning[] } {
  const issues: ConfigIssue[] = [];
  const warnings: ConfigWarning[] = [];
  const agents = input.agents?.ok ? input.agents : undefined;
  const tenants = input.tenants?.ok ? input.tenants : undefined;
  const knownTenants =
    tenants === undefined ? undefined : new Set(tenants.value.tenants.map((tenant) => tenant.id));
  const providers =
    input.llm === undefined || input.plugins === undefined
      ? undefined
      : new ProviderNames(input.llm.config, input.plugins.config, input.plugins.complete);

  if (agents !== undefined) {
    agents.value.agents.forEach((agent, index) => {
      if (agent.tenant_id !== undefined && knownTenants !== undefined && !knownTenants.has(agent.tenant_id)) {
        issues.push(
          issueAt(
            agents.file,
            agents.locate,
            ["agents", index, "tenant_id"],
            `unknown tenant "${agent.tenant_id}" (not in tenants.yaml)`,
          ),
        );
      }
      const problem = providers?.problem(agent.model.provider, agent.tenant_id);
      if (problem !== undefined) {
        issues.push(issueAt(agents.file, agents.locate, ["agents", index, "model", "provider"], problem));
      }
    });
  }

  const llmSource = input.llm?.source;
  if (llmSource?.ok && knownTenants !== undefined) {
    for (const tenant of Object.keys(llmSource.value.tenants)) {
      if (!knownTenants.has(tenant)) {
        issues.push(
          issueAt(
            llmSource.file,
            llmSource.locate,
            ["tenants", tenant],
            `unknown tenant "${tenant}" (not in tenants.yaml)`,
          ),
        );
      }
    }
  }

  if (tenants !== undefined && providers !== undefined) {
    tenants.value.tenants.forEach((tenant, index) => {
      (tenant.llm_provider_refs ?? []).forEach((name, position) => {
        const problem = providers.problem(name, tenant.id);
        if (problem !== undefined) {
          issues.push(
            issueAt(tenants.file, tenants.locate, ["tenants", index, "llm_provider_refs", position], problem),
          );
        }
      });
    });
  }

  issues.push(...grantProblems(input, agents, providers));
  warnings.push(...unservedBindings(input, agents));
  warnings.push(...nobodyAnswers(agents));
  warnings.push(...keylessProviders(input, agents));
  return { issues, warnings };
}

/** A directory whose agents.yaml lists no active agent starts a daemon that answers nobody. */
function nobodyAnswers(agents: Extract<FileResult<AgentsFile>, { ok: true }> | undefined): ConfigWarning[] {
  if (agents === undefined) return [];
  const list = agents.value.agents;
  if (list.some((agent) => agent.active)) return [];
  const problem =
    list.length === 0
      ? "no agents: the daemon starts, but no message is ever answered (add one under agents:)"
      : `none of the ${list.length} agents is active: no message is ever answered (set active: true on one)`;
  return [warningAt(agents.file, agents.locate, ["agents"], problem)];
}

/** The vendors whose API needs a key, and the variable their examples read it from. */
const KEY_VARIABLES: Record<string, string> = { anthropic: "ANTHROPIC_API_KEY", openai: "OPENAI_API_KEY" };

/**
 * An active agent whose provider has no API key boots fine and then fails every turn: say so
 * before, naming the environment variable llm.yaml reads the key from (issue 14.2).
 */
function keylessProviders(
  input: CrossCheckInput,
  agents: Extract<FileResult<AgentsFile>, { ok: true }> | undefined,
): ConfigWarning[] {
  const llm = input.llm;
  if (agents === undefined || llm === undefined) return [];
  const warnings: ConfigWarning[] = [];
  agents.value.agents.forEach((agent, index) => {
    if (!agent.active) return;
    const name = agent.model.provider;
    const tenantOwn =
      agent.tenant_id === undefined ? undefined : llm.config.tenants[agent.tenant_id]?.providers[name];
    const provider = tenantOwn ?? llm.config.providers[name];
    if (provider === undefined || !(provider.type in KEY_VARIABLES) || provider.api_key) return;
    const path =
      tenantOwn === undefined
        ? ["providers", name, "api_key"]
        : ["tenants", agent.tenant_id!, "providers", name, "api_key"];
    const variable = llm.source?.ok ? referencedVariable(llm.source.file, path) : undefined;
    const fix =
      variable === undefined
        ? `set api_key for "${name}" in llm.yaml, e.g. api_key: \${${KEY_VARIABLES[provider.type]}}`
        : `set ${variable} in the daemon's environment (llm.yaml reads the key from it)`;
    warnings.push(
      warningAt(
        agents.file,
        agents.locate,
        ["agents", index, "model", "provider"],
        `provider "${name}" has no API key, so every turn of agent "${agent.id}" will fail: ${fix}`,
      ),
    );
  });
  return warnings;
}

/** The variable a `${VAR}` / `${VAR:-default}` reference at `path` of a YAML file names, if any. */
function referencedVariable(file: string, path: readonly (string | number)[]): string | undefined {
  try {
    const raw = yamlLibrary().parseDocument(readFileSync(file, "utf8")).getIn(path);
    return typeof raw === "string" ? /\$\{([A-Za-z_][A-Za-z0-9_]*)/.exec(raw)?.[1] : undefined;
  } catch {
    return undefined;
  }
}

/** Grants must name agents and providers that exist; a typo there reads as "no grant" at run time. */
function grantProblems(
  input: CrossCheckInput,
  agents: Extract<FileResult<AgentsFile>, { ok: true }> | undefined,
  providers: ProviderNames | undefined,
): ConfigIssue[] {
  const source = input.plugins?.source;
  if (input.plugins === undefined || source === undefined || !source.ok) return [];
  const agentIds = agents === undefined ? undefined : new Set(agents.value.agents.map((agent) => agent.id));
  const providerNames = providers?.complete ? providers.all() : undefined;
  const issues: ConfigIssue[] = [];
  input.plugins.config.plugins.forEach((entry, index) => {
    const { memory_agents: memoryAgents, llm_providers: llmProviders } = entry.grants ?? {};
    if (agentIds !== undefined && Array.isArray(memoryAgents)) {
      memoryAgents.forEach((id, position) => {
        if (!agentIds.has(id)) {
          const path = ["plugins", index, "grants", "memory_agents", position];
          issues.push(
            issueAt(source.file, source.locate, path, `unknown agent "${id}" (not in agents.yaml)`),
          );
        }
      });
    }
    if (providerNames !== undefined && Array.isArray(llmProviders)) {
      llmProviders.forEach((name, position) => {
        if (!providerNames.has(name)) {
          const path = ["plugins", index, "grants", "llm_providers", position];
          const known = [...providerNames].sort().join(", ");
          issues.push(
            issueAt(source.file, source.locate, path, `unknown provider "${name}" (known: ${known})`),
          );
        }
      });
    }
  });
  return issues;
}

/**
 * With the in-process broker only this daemon's plugins publish inbound traffic, so a binding to a
 * channel kind none of them serves can never receive anything. With NATS another daemon may serve
 * it, so nothing is said.
 */
function unservedBindings(
  input: CrossCheckInput,
  agents: Extract<FileResult<AgentsFile>, { ok: true }> | undefined,
): ConfigWarning[] {
  if (agents === undefined || input.plugins === undefined || !input.plugins.complete) return [];
  if (input.brokerType !== "local") return [];
  const served = new Set(input.plugins.config.plugins.flatMap((entry) => entry.manifest?.channelKinds ?? []));
  const warnings: ConfigWarning[] = [];
  agents.value.agents.forEach((agent, index) => {
    if (!agent.active) return;
    agent.inbound_bindings.forEach((binding, position) => {
      if (served.has(binding.plugin)) return;
      warnings.push(
        warningAt(
          agents.file,
          agents.locate,
          ["agents", index, "inbound_bindings", position],
          `no enabled plugin serves channel kind "${binding.plugin}", so this binding (${describeBinding(binding)}) receives nothing with the local broker`,
        ),
      );
    });
  });
  return warnings;
}
