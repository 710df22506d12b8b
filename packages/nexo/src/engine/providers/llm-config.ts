/**
 * `llm.yaml`: the providers agents can name, globally and per tenant (admin-rpc spec, Phase
 * 83.8.12.5). A tenant's own entry of a name wins over the global one; names a tenant does not
 * define fall back to the global providers, so single-tenant setups never mention tenants.
 *
 *   providers:
 *     anthropic: { type: anthropic, api_key: "${ANTHROPIC_API_KEY}" }
 *     local:     { type: openai_compatible, base_url: "http://localhost:11434" }
 *   retry: { max_retries: 3 }            # default for entries without their own `retry`
 *   tenants:
 *     acme:
 *       providers:
 *         anthropic: { type: anthropic, api_key: "${ACME_ANTHROPIC_KEY}" }
 */
import { z } from "zod";
import { disposableSchema } from "../../config/disposable-schema.js";
import { type Env, loadConfigFile } from "../../config/index.js";
import type { LlmProvider } from "../types.js";
import { UnknownProviderError } from "./errors.js";
import { buildProviderSchemas, createProvider, ProviderRegistry } from "./registry.js";
import { type RetryClock, RetryConfigSchema } from "./retry.js";
import { ScriptedProvider } from "./scripted.js";

/**
 * llm.yaml's schema, built on use and let go (disposableSchema): the daemon parses the file at
 * start, on reload and when the admin services edit it; an idle daemon keeps none of it. The
 * provider schemas are built here from plain ones (buildProviderSchemas), not composed from the
 * exported stand-ins, so one build serves a whole parse.
 */
export const LlmConfigSchema = disposableSchema(() => {
  const { providers } = buildProviderSchemas();
  const tenantId = z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "tenant ids use lowercase letters, digits, '_' and '-'");
  return z.strictObject({
    providers: providers.default({}),
    /** The retry policy of every provider entry that has none of its own. */
    retry: RetryConfigSchema.optional(),
    tenants: z.record(tenantId, z.strictObject({ providers: providers.default({}) })).default({}),
  });
});
export type LlmConfig = z.output<typeof LlmConfigSchema>;

/** Global providers plus per-tenant overrides, resolved by (name, tenant). */
export class TenantProviders {
  /** Global providers: llm.yaml's, `scripted`, and those plugins register (llm.chat). */
  readonly global = new ProviderRegistry();
  private readonly tenants = new Map<string, ProviderRegistry>();
  /** Removes the providers llm.yaml put into `global` (not the plugins'), for a reload. */
  private removeConfigured: Array<() => void> = [];

  constructor(
    config: LlmConfig,
    private readonly options: { clock?: RetryClock } = {},
  ) {
    this.update(config);
  }

  /**
   * Applies a new llm.yaml (hot reload): its providers replace the previous file's, tenants are
   * rebuilt, and providers contributed by plugins stay. A new entry may not take a plugin's name.
   */
  update(config: LlmConfig): void {
    const withDefaults = (providers: LlmConfig["providers"]) =>
      Object.fromEntries(
        Object.entries(providers).map(([name, entry]) => [
          name,
          { ...entry, retry: entry.retry ?? config.retry },
        ]),
      );
    for (const remove of this.removeConfigured.splice(0)) remove();
    const configured = withDefaults(config.providers);
    for (const [name, entry] of Object.entries(configured)) {
      this.removeConfigured.push(
        this.global.register(createProvider(entry, { id: name, ...this.options }), {
          replace: name === "scripted",
        }),
      );
    }
    // The offline model is always there unless llm.yaml names its own `scripted`.
    if (!this.global.has("scripted"))
      this.removeConfigured.push(this.global.register(new ScriptedProvider()));
    this.tenants.clear();
    for (const [tenant, { providers }] of Object.entries(config.tenants)) {
      const registry = new ProviderRegistry();
      for (const [name, entry] of Object.entries(withDefaults(providers))) {
        registry.register(createProvider(entry, { id: name, ...this.options }));
      }
      this.tenants.set(tenant, registry);
    }
  }

  /** The provider `name` as `tenant` sees it; UnknownProviderError lists what it could have named. */
  resolve(name: string, tenant?: string | null): LlmProvider {
    const own = tenant ? this.tenants.get(tenant)?.get(name) : undefined;
    const provider = own ?? this.global.get(name);
    if (!provider) throw new UnknownProviderError(name, this.ids(tenant));
    return provider;
  }

  /** Every name `tenant` can use (its own and the global ones), sorted. */
  ids(tenant?: string | null): string[] {
    const own = tenant ? (this.tenants.get(tenant)?.ids() ?? []) : [];
    return [...new Set([...own, ...this.global.ids()])].sort();
  }

  tenantIds(): string[] {
    return [...this.tenants.keys()].sort();
  }
}

/** Reads and validates llm.yaml (with `${VAR}` substitution); errors name file, line and key. */
export async function loadLlmConfig(path: string, env: Env): Promise<LlmConfig> {
  return loadConfigFile(path, LlmConfigSchema, { env });
}
