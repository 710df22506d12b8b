/**
 * `nexo/admin/llm_providers/*` (llm_keys_crud): the provider entries of llm.yaml — global
 * `providers.<id>`, or a tenant's own `tenants.<tenant_id>.providers.<id>` — through the daemon's
 * services facade. Keys are never returned, and never written into llm.yaml: `api_key_env` and
 * `api_key_secret_id` are written as a `${NAME}` reference, and `api_key_secret_value` is first
 * stored as the secret `LLM_<ID>_API_KEY` (in the state dir, where `${NAME}` is read; the value is
 * blanked in the audit log) and then referenced the same way. An entry an agent, a tenant or a
 * plugin grant still resolves to is not deleted (-32602 `in_use`, naming them).
 */
import { InternalError, InvalidParamsError } from "@nexo/wire";
import type { admin } from "@nexo/wire/schemas";
import { secretNameProblem, writeSecretFile } from "../../config/secret-files.js";
import type { Patch } from "../../daemon/services/index.js";
import { envReference, type ProviderEntry, type ProviderRecord } from "../../daemon/services/index.js";
import { ProviderTypeSchema } from "../../engine/providers/registry.js";
import { defineAdminDomain } from "../domain.js";
import { viaService } from "../service-errors.js";
import type { SecretsTarget } from "../services.js";

export const llmProvidersDomain = defineAdminDomain({
  domain: "llm_providers",
  handlers: ({ daemon, secrets }) =>
    daemon && {
      "nexo/admin/llm_providers/list": (params) =>
        viaService(async () => ({
          providers: (await daemon.providers.list())
            .filter((provider) => provider.tenantId === params?.tenant_id)
            .map(providerSummary),
        })),

      "nexo/admin/llm_providers/upsert": (params) =>
        viaService(async () => {
          const existing = (await daemon.providers.list()).find(
            (provider) => provider.id === params.id && provider.tenantId === params.tenant_id,
          );
          const entry: Patch<ProviderEntry> = { base_url: params.base_url };
          const type = params.factory_type ?? (existing === undefined ? params.id : undefined);
          if (type !== undefined) {
            const known = ProviderTypeSchema.safeParse(type);
            if (!known.success)
              throw new InvalidParamsError(
                `invalid params: factory_type: "${type}" is not a provider type nexo has (${ProviderTypeSchema.options.join(", ")}); name one with factory_type`,
              );
            entry.type = known.data;
          }
          const apiKey = await apiKeyReference(params, secrets);
          if (apiKey !== undefined) entry.api_key = apiKey;
          if (params.headers !== undefined) entry.headers = params.headers;
          const { provider } = await daemon.providers.upsert({
            id: params.id,
            tenantId: params.tenant_id,
            entry,
          });
          return providerSummary(provider);
        }),

      "nexo/admin/llm_providers/delete": ({ provider_id, tenant_id }) =>
        viaService(async () => ({
          removed: (await daemon.providers.delete({ id: provider_id, tenantId: tenant_id })).removed,
        })),
    },
});

/** How llm.yaml refers to the key the call names; undefined when it names none (kept as it is). */
async function apiKeyReference(
  params: admin.LlmProvidersUpsertParams,
  secrets: SecretsTarget | undefined,
): Promise<string | undefined> {
  if (params.api_key_env !== undefined && params.api_key_env !== "") {
    try {
      return envReference(params.api_key_env);
    } catch (error) {
      throw new InvalidParamsError(`invalid params: api_key_env: ${(error as Error).message}`);
    }
  }
  if (params.api_key_secret_id !== undefined) {
    const problem = secretNameProblem(params.api_key_secret_id);
    if (problem !== undefined) throw new InvalidParamsError(`invalid params: api_key_secret_id: ${problem}`);
    return envReference(params.api_key_secret_id);
  }
  if (params.api_key_secret_value !== undefined) {
    if (secrets === undefined)
      throw new InternalError("internal: this daemon has no secret store for api_key_secret_value", {
        reason: "unavailable",
      });
    const name = providerSecretName(params.id);
    await writeSecretFile(secrets.stateDir, name, params.api_key_secret_value);
    secrets.remember?.(params.api_key_secret_value);
    return envReference(name);
  }
  return undefined;
}

/** `LLM_<ID>_API_KEY`, the id upper-cased with anything but A-Z and 0-9 as `_`. */
export function providerSecretName(id: string): string {
  return `LLM_${id.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`.slice(0, 64);
}

function providerSummary(provider: ProviderRecord): admin.LlmProviderSummary {
  return {
    id: provider.id,
    base_url: typeof provider.entry.base_url === "string" ? provider.entry.base_url : "",
    api_key_env: provider.apiKey.kind === "env" ? provider.apiKey.variable : "",
    ...(provider.tenantId === undefined ? {} : { tenant_scope: provider.tenantId }),
    // Loose fields: the factory, and where the key comes from (never its value).
    type: provider.entry.type,
    api_key_source: provider.apiKey.kind,
  };
}
