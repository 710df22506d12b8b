/**
 * `workspace/config/schema|update` (`workspaceConfigManagement`): the workspace-wide settings a
 * client's settings page edits, mapped onto the nexo config files that hold them. Each edit goes
 * through the services' comment-preserving YAML writer (the key it concerns changes, every other
 * line and comment stays) and is validated with the whole directory before it is written.
 *
 * | field                          | where nexo keeps it                                          |
 * |--------------------------------|--------------------------------------------------------------|
 * | `model`                        | the workspace agent's `model.model` (agents.yaml)             |
 * | `defaultApprovalPolicy`        | the workspace agent's `approval.mode`: autoApprove = `yolo`   |
 * | `apiKey`                       | the agent's provider's `api_key` (llm.yaml), as `${LLM_<ID>_API_KEY}`, the key itself stored in the state dir's secrets (0600) |
 * | `endPoint`                     | the agent's provider's `base_url` (llm.yaml)                  |
 * | `memoryAutoConsolidateEnabled` | memory.yaml's `long_term.enabled`                             |
 * | `welcomeSuggestionsEnabled`    | appserver.yaml's `welcome_suggestions` (default on; `null` removes the key) |
 * | `skillsSelfLearningEnabled`    | nothing: nexo has no such feature; `false`/`null` are accepted (that is the state), `true` is refused |
 *
 * `null` (and an empty string) clears a field: the model falls back to the provider's
 * `default_model`, the others' keys are removed. The fields of one call are applied file by file;
 * everything that can be refused up front (unknown policy, missing provider) is checked before the
 * first write. The answer never carries the API key: `apiKey` is the reference llm.yaml holds.
 * In the daemon, idle loaded threads are let go after a change, so their next turn runs with it.
 */
import {
  AppServerErrorCode as Code,
  type WorkspaceConfigRegion,
  type WorkspaceConfigSchemaResult,
  type WorkspaceConfigUpdateParams,
  type WorkspaceConfigUpdateResult,
  workspaceConfigMethods,
} from "@nexo/wire/schemas/appserver";
import { providerSecretName } from "../../../admin/domains/llm-providers.js";
import { writeSecretFile } from "../../../config/secret-files.js";
import { MemoryFileSchema } from "../../../daemon/config/memory.js";
import type { AgentEntry, DaemonServices, ProviderRecord } from "../../../daemon/services/index.js";
import { envReference } from "../../../daemon/services/providers.js";
import { ensureBlockMapping, indexById } from "../../../daemon/services/yaml-patch.js";
import { rememberSecret } from "../../../secrets/index.js";
import { patchAppServerFile } from "../appserver-file.js";
import { type Call, defineFamily } from "../family.js";
import { familyError, viaServices } from "../management.js";
import { announceConfigChange, managesConfig, managesLive, servicesOf } from "./managed.js";
import { welcomeEnabled } from "./suggestions.js";
import { findWorkspaceAgent, workspaceAgent } from "./workspace-agent.js";

const FIELDS = [
  "model",
  "apiKey",
  "endPoint",
  "welcomeSuggestionsEnabled",
  "skillsSelfLearningEnabled",
  "memoryAutoConsolidateEnabled",
  "defaultApprovalPolicy",
] as const;

/** The policies the protocol names, as nexo's approval modes. */
const POLICY_MODES: Record<string, "default" | "yolo"> = { default: "default", autoApprove: "yolo" };

/** Features nexo does not have: switching them on is refused, off is already so. */
const ABSENT_FEATURES = {
  skillsSelfLearningEnabled: "nexo's agents do not write skills of their own",
} as const;

function invalid(detail: string) {
  return familyError(Code.invalidParams, "Invalid params", detail);
}

/** `null`, `""` and whitespace clear a string field. */
function cleared(value: string | null): boolean {
  return value === null || value.trim() === "";
}

/** `null`, `""` and "Default" ask for the provider's default model. */
function defaultModel(value: string | null): boolean {
  return value === null || cleared(value) || value.trim().toLowerCase() === "default";
}

/** The llm.yaml entry the agent's provider name resolves to (a tenant's own entry first). */
async function providerOf(services: DaemonServices, agent: AgentEntry): Promise<ProviderRecord | undefined> {
  const providers = await viaServices({}, () => services.providers.list());
  const tenant = agent.tenant_id ?? undefined;
  const name = agent.model.provider;
  return (
    (tenant === undefined ? undefined : providers.find((p) => p.id === name && p.tenantId === tenant)) ??
    providers.find((p) => p.id === name && p.tenantId === undefined)
  );
}

function noProvider(agent: AgentEntry, field: string): Error {
  return invalid(
    `${field}: the workspace's agent "${agent.id}" uses provider "${agent.model.provider}", which llm.yaml does not define (the built-in scripted model takes no key and no endpoint); add the provider to llm.yaml first`,
  );
}

/** Edits the agent's entry in agents.yaml at `path` below it (`null` removes the key). */
async function editAgent(
  services: DaemonServices,
  agentId: string,
  path: readonly string[],
  value: string | null,
): Promise<boolean> {
  const { changed } = await viaServices({}, () =>
    services.config.edit("agents", (doc) => {
      const index = indexById(doc, ["agents"], agentId);
      if (index < 0) return;
      if (value === null) doc.deleteIn(["agents", index, ...path]);
      else doc.setIn(["agents", index, ...path], value);
    }),
  );
  return changed;
}

async function readMemoryEnabled(services: DaemonServices): Promise<boolean | null> {
  const memory = await viaServices({}, () => services.config.read("memory", MemoryFileSchema));
  return memory?.long_term?.enabled ?? null;
}

/** What the workspace's settings are now, as `workspace/config/update` answers them. */
async function currentSettings(call: Call): Promise<WorkspaceConfigUpdateResult> {
  const services = servicesOf(call);
  const agent = await findWorkspaceAgent(call);
  const provider = agent === undefined ? undefined : await providerOf(services, agent);
  const mode = agent?.approval?.mode;
  const apiKey = provider?.apiKey;
  return {
    model: agent?.model.model ?? null,
    apiKey:
      apiKey === undefined || apiKey.kind === "none"
        ? null
        : apiKey.kind === "env"
          ? envReference(apiKey.variable)
          : apiKey.kind === "file"
            ? apiKey.path
            : "(written in llm.yaml)",
    endPoint: typeof provider?.entry.base_url === "string" ? provider.entry.base_url : null,
    welcomeSuggestionsEnabled: await welcomeEnabled(call.host),
    skillsSelfLearningEnabled: false,
    memoryAutoConsolidateEnabled: await readMemoryEnabled(services),
    defaultApprovalPolicy: mode === undefined ? null : mode === "yolo" ? "autoApprove" : mode,
  };
}

async function update(params: WorkspaceConfigUpdateParams, call: Call): Promise<WorkspaceConfigUpdateResult> {
  const present = FIELDS.filter((field) => params[field] !== undefined);
  if (present.length === 0)
    throw invalid(`at least one of ${FIELDS.map((f) => `'${f}'`).join(", ")} is required`);
  for (const [field, why] of Object.entries(ABSENT_FEATURES)) {
    if (params[field as keyof typeof ABSENT_FEATURES] === true)
      throw invalid(`${field}: ${why}, so it cannot be switched on`);
  }
  const policy = params.defaultApprovalPolicy;
  if (typeof policy === "string" && !cleared(policy) && POLICY_MODES[policy] === undefined)
    throw invalid(
      `defaultApprovalPolicy: "${policy}" is not one of: ${Object.keys(POLICY_MODES).join(", ")}`,
    );

  const services = servicesOf(call);
  const needsAgent = ["model", "apiKey", "endPoint", "defaultApprovalPolicy"].some(
    (field) => params[field as keyof WorkspaceConfigUpdateParams] !== undefined,
  );
  const agent = needsAgent ? await workspaceAgent(call) : undefined;
  const needsProvider =
    params.apiKey !== undefined ||
    params.endPoint !== undefined ||
    (params.model !== undefined && defaultModel(params.model));
  const provider = agent !== undefined && needsProvider ? await providerOf(services, agent) : undefined;
  if (agent !== undefined && needsProvider && provider === undefined) {
    throw noProvider(
      agent,
      params.apiKey !== undefined ? "apiKey" : params.endPoint !== undefined ? "endPoint" : "model",
    );
  }
  let model: string | undefined;
  if (params.model !== undefined && agent !== undefined) {
    if (params.model !== null && !defaultModel(params.model)) {
      model = params.model.trim();
    } else {
      const fallback = provider?.entry.default_model;
      if (typeof fallback !== "string")
        throw invalid(
          `model: provider "${agent.model.provider}" has no default_model in llm.yaml to fall back to; name a model instead`,
        );
      model = fallback;
    }
  }

  const regions: WorkspaceConfigRegion[] = [];
  if (agent !== undefined && model !== undefined) {
    if (await editAgent(services, agent.id, ["model", "model"], model)) regions.push("workspace.model");
  }
  if (agent !== undefined && policy !== undefined) {
    const mode = policy === null || cleared(policy) ? null : POLICY_MODES[policy]!;
    if (await editAgent(services, agent.id, ["approval", "mode"], mode))
      regions.push("workspace.defaultApprovalPolicy");
  }
  if (provider !== undefined && (params.apiKey !== undefined || params.endPoint !== undefined)) {
    const entry: { api_key?: string | null; base_url?: string | null } = {};
    if (params.apiKey !== undefined) entry.api_key = await storedKey(services, provider.id, params.apiKey);
    if (params.endPoint !== undefined)
      entry.base_url = params.endPoint === null || cleared(params.endPoint) ? null : params.endPoint.trim();
    const before = await currentSettings(call);
    const { reload } = await viaServices({}, () =>
      services.providers.upsert({ id: provider.id, tenantId: provider.tenantId, entry }),
    );
    const after = await currentSettings(call);
    const newKey = typeof entry.api_key === "string";
    // A new key under the same reference leaves llm.yaml as it was: reload so the provider reads it.
    if (newKey && reload === undefined) await viaServices({}, () => services.config.reload());
    if (newKey || before.apiKey !== after.apiKey) regions.push("workspace.apiKey");
    if (before.endPoint !== after.endPoint) regions.push("workspace.endpoint");
  }
  const memory = params.memoryAutoConsolidateEnabled;
  if (memory !== undefined) {
    const { changed } = await viaServices({}, () =>
      services.config.edit("memory", (doc) => {
        if (memory === null) {
          doc.deleteIn(["long_term", "enabled"]);
          return;
        }
        ensureBlockMapping(doc, ["long_term"]);
        doc.setIn(["long_term", "enabled"], memory);
      }),
    );
    if (changed) regions.push("memory");
  }
  const welcome = params.welcomeSuggestionsEnabled;
  if (welcome !== undefined) {
    const { changed } = await viaServices({}, () =>
      patchAppServerFile(services, [], { welcome_suggestions: welcome }),
    );
    if (changed) regions.push("welcomeSuggestions");
  }
  if (regions.length > 0) {
    // Where the agent runs here, loaded threads pick the new settings up at their next turn.
    if (managesLive(call.host)) await call.host.threads.releaseIdle();
    announceConfigChange(call.host, "workspace/config/update", regions);
  }
  return currentSettings(call);
}

/**
 * How llm.yaml refers to the new key: the key goes to the state dir's secret store (0600) under
 * the provider's secret name, and the file gets `${NAME}` — never the key itself. `null` removes
 * the reference (the stored secret stays until the operator deletes it).
 */
async function storedKey(
  services: DaemonServices,
  providerId: string,
  apiKey: string | null,
): Promise<string | null> {
  if (apiKey === null || cleared(apiKey)) return null;
  const stateDir = await viaServices({}, () => services.config.stateDir());
  if (stateDir === undefined)
    throw invalid("apiKey: daemon.yaml is not valid, so there is no state directory to store the key in");
  const name = providerSecretName(providerId);
  await writeSecretFile(stateDir, name, apiKey.trim());
  rememberSecret(apiKey.trim());
  return envReference(name);
}

function schema(agentId: string | undefined, provider: string | undefined): WorkspaceConfigSchemaResult {
  const agentPath = ["agents.yaml", "agents", agentId ?? "(the workspace's agent)"];
  const providerPath = ["llm.yaml", "providers", provider ?? "(the agent's provider)"];
  return {
    sections: [
      {
        section: "agent",
        order: 0,
        path: agentPath,
        fields: [
          {
            key: "model",
            displayName: "Model",
            type: "string",
            sensitive: false,
            reload: "hot",
            hint: "model.model",
          },
          {
            key: "defaultApprovalPolicy",
            displayName: "Approval policy",
            type: "enum",
            options: Object.keys(POLICY_MODES),
            sensitive: false,
            reload: "hot",
            hint: "approval.mode (autoApprove is yolo)",
          },
        ],
      },
      {
        section: "provider",
        order: 1,
        path: providerPath,
        fields: [
          {
            key: "apiKey",
            displayName: "API key",
            type: "string",
            sensitive: true,
            reload: "hot",
            hint: "api_key",
          },
          {
            key: "endPoint",
            displayName: "Endpoint",
            type: "string",
            sensitive: false,
            reload: "hot",
            hint: "base_url",
          },
        ],
      },
      {
        section: "memory",
        order: 2,
        path: ["memory.yaml", "long_term"],
        fields: [
          {
            key: "memoryAutoConsolidateEnabled",
            displayName: "Long-term memory",
            type: "boolean",
            sensitive: false,
            reload: "hot",
            hint: "long_term.enabled",
          },
        ],
      },
      {
        section: "appserver",
        order: 3,
        path: ["appserver.yaml"],
        fields: [
          {
            key: "welcomeSuggestionsEnabled",
            displayName: "Welcome suggestions",
            type: "boolean",
            sensitive: false,
            reload: "hot",
            hint: "welcome_suggestions",
          },
        ],
      },
    ],
  };
}

export const workspaceConfigFamily = defineFamily({
  name: "workspace-config",
  methods: workspaceConfigMethods,
  available: managesConfig,
  capabilities: () => ({ workspaceConfigManagement: true }),
  handlers: {
    "workspace/config/schema": async (_params, call) => {
      const agent = await findWorkspaceAgent(call);
      const provider = agent === undefined ? undefined : await providerOf(servicesOf(call), agent);
      return schema(agent?.id, provider?.id ?? agent?.model.provider);
    },
    "workspace/config/update": (params, call) => update(params, call),
  },
});
