/**
 * LLM providers: the entries of llm.yaml, global (`providers.<id>`) or a tenant's own
 * (`tenants.<tenant>.providers.<id>`). API keys are never handed out: a listing says where the key
 * comes from (an environment variable by name, a file, written inline, or none). Deleting an entry
 * that an agent, a tenant or a plugin grant still resolves to is refused with ProviderInUseError.
 */
import type { z } from "zod";
import { LlmConfigSchema } from "../../engine/providers/llm-config.js";
import type { ProviderConfigSchema } from "../../engine/providers/registry.js";
import { AgentsFileSchema } from "../config/agents.js";
import { PluginsFileSchema } from "../config/plugins.js";
import { TenantsFileSchema } from "../config/tenants.js";
import type { ReloadReport } from "../types.js";
import type { ConfigFiles } from "./config-files.js";
import { NotFoundError, ProviderInUseError, type ProviderUsers } from "./errors.js";
import { ensureBlockMapping, type Patch, patchMapping, withoutRemovals } from "./yaml-patch.js";

/** A provider entry of llm.yaml as written. */
export type ProviderEntry = z.input<typeof ProviderConfigSchema>;

/** Where a provider's API key comes from; its value is never returned. */
export type ApiKeySource =
  | { kind: "env"; variable: string }
  | { kind: "file"; path: string }
  | { kind: "inline" }
  | { kind: "none" };

export interface ProviderRecord {
  id: string;
  /** The tenant whose own entry this is; undefined for a global provider. */
  tenantId: string | undefined;
  /** The entry as written, without `api_key`. */
  entry: Omit<ProviderEntry, "api_key">;
  apiKey: ApiKeySource;
}

export interface ProviderRef {
  id: string;
  /** The tenant's own entry; absent or undefined: the global one. */
  tenantId?: string | undefined;
}

export interface ProviderUpsert extends ProviderRef {
  /**
   * The keys to set; `null` removes a key. `api_key` is written as given: reference a variable
   * with `${NAME}` (see `envReference`) rather than writing the key itself into the file.
   */
  entry: Patch<ProviderEntry>;
}

export interface ProviderUpsertResult {
  provider: ProviderRecord;
  created: boolean;
  reload: ReloadReport | undefined;
}

export interface ProviderDeleteResult {
  removed: boolean;
  reload: ReloadReport | undefined;
}

/** Always available unless llm.yaml names its own entry of that name. */
const BUILTIN_PROVIDERS = new Set(["scripted"]);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `${NAME}`: how an API key is referenced by environment variable. Throws on a bad name. */
export function envReference(variable: string): string {
  if (!ENV_NAME.test(variable))
    throw new TypeError(
      `"${variable}" is not a variable name (letters, digits and _, not starting with a digit)`,
    );
  return `\${${variable}}`;
}

export class ProvidersService {
  constructor(private readonly files: ConfigFiles) {}

  /** Every entry: the global ones by id, then each tenant's by tenant and id. */
  async list(): Promise<ProviderRecord[]> {
    const llm = await this.llm();
    const global = Object.entries(llm.providers ?? {}).map(([id, entry]) => record(id, undefined, entry));
    const tenants = Object.entries(llm.tenants ?? {}).flatMap(([tenant, { providers }]) =>
      Object.entries(providers ?? {}).map(([id, entry]) => record(id, tenant, entry)),
    );
    const byId = (a: ProviderRecord, b: ProviderRecord) => a.id.localeCompare(b.id);
    return [
      ...global.sort(byId),
      ...tenants.sort((a, b) => (a.tenantId ?? "").localeCompare(b.tenantId ?? "") || byId(a, b)),
    ];
  }

  /** One entry; NotFoundError when llm.yaml has none of that id (for that tenant). */
  async get(ref: ProviderRef): Promise<ProviderRecord> {
    const found = (await this.list()).find((p) => p.id === ref.id && p.tenantId === ref.tenantId);
    if (found === undefined) throw new NotFoundError("llm_provider", ref.id, ownerText(ref.tenantId));
    return found;
  }

  /** Creates the entry (a new one needs `type`) or changes the keys the patch carries. */
  async upsert(request: ProviderUpsert): Promise<ProviderUpsertResult> {
    const path = entryPath(request);
    let created = false;
    const edit = await this.files.edit("llm", (doc) => {
      created = !doc.hasIn(path);
      if (created) {
        ensureBlockMapping(doc, path.slice(0, -1));
        doc.setIn(path, doc.createNode(withoutRemovals(request.entry)));
      } else {
        patchMapping(doc, path, request.entry);
      }
    });
    return { provider: await this.get(request), created, reload: edit.reload };
  }

  /** Removes the entry; refused with ProviderInUseError while something resolves to it. */
  async delete(ref: ProviderRef): Promise<ProviderDeleteResult> {
    const users = await this.usersOf(ref);
    if (users.agents.length + users.tenants.length + users.plugins.length > 0)
      throw new ProviderInUseError(ref.id, ref.tenantId, users);
    let removed = false;
    const path = entryPath(ref);
    const edit = await this.files.edit("llm", (doc) => {
      removed = doc.hasIn(path);
      if (removed) doc.deleteIn(path);
    });
    return { removed, reload: edit.reload };
  }

  /** Who resolves the name to this very entry now (a tenant's own entry shadows the global one). */
  private async usersOf(ref: ProviderRef): Promise<ProviderUsers> {
    const users: ProviderUsers = { agents: [], tenants: [], plugins: [] };
    const llm = await this.llm();
    const exists =
      ref.tenantId === undefined
        ? llm.providers?.[ref.id] !== undefined
        : llm.tenants?.[ref.tenantId]?.providers?.[ref.id] !== undefined;
    if (!exists || (ref.tenantId === undefined && BUILTIN_PROVIDERS.has(ref.id))) return users;
    const ownedBy = (tenant: string | null | undefined) =>
      tenant ? llm.tenants?.[tenant]?.providers?.[ref.id] !== undefined : false;
    const resolvesHere = (tenant: string | null | undefined) =>
      ref.tenantId === undefined ? !ownedBy(tenant) : tenant === ref.tenantId;

    const agents = (await this.files.read("agents", AgentsFileSchema))?.agents ?? [];
    for (const agent of agents) {
      if (agent.model.provider === ref.id && resolvesHere(agent.tenant_id)) users.agents.push(agent.id);
    }
    const tenants = (await this.files.read("tenants", TenantsFileSchema))?.tenants ?? [];
    for (const tenant of tenants) {
      if ((tenant.llm_provider_refs ?? []).includes(ref.id) && resolvesHere(tenant.id))
        users.tenants.push(tenant.id);
    }
    // A grant names a provider by name only: it breaks when no entry of that name is left.
    const elsewhere =
      (ref.tenantId !== undefined && llm.providers?.[ref.id] !== undefined) ||
      Object.entries(llm.tenants ?? {}).some(
        ([tenant, own]) => tenant !== ref.tenantId && own.providers?.[ref.id] !== undefined,
      );
    if (!elsewhere) {
      const plugins = (await this.files.read("plugins", PluginsFileSchema))?.plugins ?? [];
      for (const plugin of plugins) {
        const granted = plugin.grants?.llm_providers;
        if (Array.isArray(granted) && granted.includes(ref.id)) users.plugins.push(plugin.dir);
      }
    }
    return users;
  }

  private async llm(): Promise<z.input<typeof LlmConfigSchema>> {
    return (await this.files.read("llm", LlmConfigSchema)) ?? {};
  }
}

function entryPath(ref: ProviderRef): string[] {
  return ref.tenantId === undefined ? ["providers", ref.id] : ["tenants", ref.tenantId, "providers", ref.id];
}

function ownerText(tenantId: string | undefined): string {
  return tenantId === undefined ? "in llm.yaml" : `for tenant "${tenantId}" in llm.yaml`;
}

function record(id: string, tenantId: string | undefined, entry: ProviderEntry): ProviderRecord {
  const { api_key: apiKey, ...rest } = entry;
  return { id, tenantId, entry: rest, apiKey: keySource(apiKey) };
}

/** Reads where a key comes from off its text as written. */
function keySource(text: string | undefined): ApiKeySource {
  if (text === undefined || text === "") return { kind: "none" };
  const variable = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-[^}]*)?\}$/.exec(text);
  if (variable?.[1] !== undefined) return { kind: "env", variable: variable[1] };
  const file = /^\$\{file:([^}]+)\}$/.exec(text);
  if (file?.[1] !== undefined) return { kind: "file", path: file[1] };
  return { kind: "inline" };
}
