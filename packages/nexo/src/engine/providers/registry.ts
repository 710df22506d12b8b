/**
 * Where providers are found by name, and how a provider entry of llm.yaml becomes one.
 *
 * The engine resolves an agent's `model.provider` here. Entries of llm.yaml are built by
 * `createProvider`; plugins that contribute `llm.chat` providers are registered by the plugin host
 * with their own LlmProvider implementation, under the names their manifests declare. `scripted`
 * is always present unless llm.yaml redefines it, so nexo runs with no configuration at all.
 */
import { z } from "zod";
import { disposableSchema } from "../../config/disposable-schema.js";
import { rememberSecret } from "../../secrets/index.js";
import type { LlmProvider } from "../types.js";
import { AnthropicProvider } from "./anthropic.js";
import { contextWindow } from "./context-windows.js";
import { DuplicateProviderError, UnknownProviderError } from "./errors.js";
import { OpenAiProvider } from "./openai.js";
import { type RetryClock, RetryConfigSchema, retryPolicyFromConfig } from "./retry.js";
import { ScriptedProvider } from "./scripted.js";

export { contextWindow } from "./context-windows.js";

export const ProviderTypeSchema = z.enum(["anthropic", "openai", "openai_compatible", "scripted"]);
export type ProviderType = z.infer<typeof ProviderTypeSchema>;

/**
 * The `providers` map of llm.yaml and its entry, built fresh on each call: llm.yaml's schema
 * composes it inside its own builder (llm-config.ts), so that a collection frees both once a load
 * is done. The daemon reads llm.yaml at start and on reload only; nothing per message parses it.
 */
export function buildProviderSchemas() {
  /** `${VAR}` substitution leaves "" for an unset variable; that means "no key", not an empty key. */
  const optionalSecret = z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v));

  /** One provider entry of llm.yaml (`providers.<name>`). Unknown keys are kept for forward compatibility. */
  const entry = z
    .looseObject({
      type: ProviderTypeSchema,
      /** API root, with or without `/v1`. Required for openai_compatible. */
      base_url: z.url({ protocol: /^https?$/, error: "base_url must be an http(s) URL" }).optional(),
      api_key: optionalSecret,
      /** Used when an agent names this provider but no model. */
      default_model: z.string().min(1).optional(),
      /** Overrides nexo's table of known context windows (e.g. Ollama's num_ctx). */
      context_window: z.int().positive().optional(),
      /** Longest wait for response headers. */
      timeout_ms: z.int().positive().optional(),
      /** Longest silence inside a stream; 0 disables the check. */
      idle_timeout_ms: z.int().min(0).optional(),
      headers: z.record(z.string(), z.string()).optional(),
      retry: RetryConfigSchema.optional(),
      /** anthropic: cache breakpoints on system prompt and tools (default true). */
      prompt_caching: z.boolean().optional(),
      /** openai: organization and project headers. */
      organization: z.string().min(1).optional(),
      project: z.string().min(1).optional(),
      /** openai / openai_compatible: which name the output limit is sent under. */
      max_tokens_param: z.enum(["max_tokens", "max_completion_tokens"]).optional(),
      /** openai / openai_compatible: request the final usage chunk (default true). */
      include_usage: z.boolean().optional(),
      /** scripted: pause between deltas, for demos. */
      chunk_delay_ms: z.int().min(0).optional(),
    })
    .superRefine((config, ctx) => {
      if (config.type === "openai_compatible" && config.base_url === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["base_url"],
          message:
            "base_url is required for an openai_compatible provider (e.g. http://localhost:11434 for Ollama)",
        });
      }
    });

  /** The `providers` map of llm.yaml: name → entry. */
  const providers = z.record(
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "provider names use letters, digits, '_', '.', '-'"),
    entry,
  );
  return { entry, providers };
}

/**
 * One provider entry of llm.yaml (`providers.<name>`), built on use and let go (disposableSchema):
 * `nexo agent`'s one-shot bootstrap parses one entry, an idle daemon none.
 */
export const ProviderConfigSchema = disposableSchema(() => buildProviderSchemas().entry);
export type ProviderConfig = z.infer<typeof ProviderConfigSchema>;

/** The `providers` map of llm.yaml: name → entry (built on use and let go, as the entry is). */
export const ProvidersConfigSchema = disposableSchema(() => buildProviderSchemas().providers);

export interface CreateProviderOptions {
  /** The registry name; defaults to the config's type. */
  id?: string;
  /** Time and chance for the retry policy (tests inject their own). */
  clock?: RetryClock;
}

/** Builds the provider an llm.yaml entry describes (already validated by ProviderConfigSchema). */
export function createProvider(config: ProviderConfig, options: CreateProviderOptions = {}): LlmProvider {
  const id = options.id ?? config.type;
  rememberCredentials(config);
  const common = {
    id,
    apiKey: config.api_key,
    baseUrl: config.base_url,
    defaultModel: config.default_model,
    timeoutMs: config.timeout_ms,
    idleTimeoutMs: config.idle_timeout_ms,
    headers: config.headers,
    contextWindow: config.context_window,
    retry: retryPolicyFromConfig(config.retry),
    clock: options.clock,
  };
  switch (config.type) {
    case "anthropic":
      return new AnthropicProvider({ ...common, promptCaching: config.prompt_caching });
    case "openai":
    case "openai_compatible":
      return new OpenAiProvider({
        ...common,
        flavor: config.type,
        organization: config.organization,
        project: config.project,
        maxTokensParam: config.max_tokens_param,
        includeUsage: config.include_usage,
      });
    case "scripted":
      return new ScriptedProvider({
        id,
        contextWindow: config.context_window,
        chunkDelayMs: config.chunk_delay_ms,
      });
  }
}

/** Header names whose values are credentials (`Authorization`, `x-api-key`, `api-key`, `X-Auth-Token`, …). */
const CREDENTIAL_HEADER = /authorization|api[-_]?key|token|secret/i;

/**
 * The entry's key and credential headers are remembered as secrets, so that the redactor scrubs
 * them from anything — a provider's error echoing what it was sent included — whatever they look like.
 */
function rememberCredentials(config: ProviderConfig): void {
  rememberSecret(config.api_key);
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    if (!CREDENTIAL_HEADER.test(name)) continue;
    rememberSecret(value);
    rememberSecret(/^(?:bearer|basic|token)\s+(.+)$/i.exec(value)?.[1]);
  }
}

export class ProviderRegistry {
  private readonly providers = new Map<string, LlmProvider>();

  /**
   * Adds a provider under its `id`. Returns a function that removes it again, and only it: a
   * plugin that restarted and re-registered is not removed by its previous incarnation's cleanup.
   */
  register(provider: LlmProvider, options: { replace?: boolean } = {}): () => void {
    if (this.providers.has(provider.id) && !options.replace) throw new DuplicateProviderError(provider.id);
    this.providers.set(provider.id, provider);
    return () => {
      if (this.providers.get(provider.id) === provider) this.providers.delete(provider.id);
    };
  }

  unregister(id: string): boolean {
    return this.providers.delete(id);
  }

  get(id: string): LlmProvider | undefined {
    return this.providers.get(id);
  }

  /** Like `get`, but an unknown name is an UnknownProviderError listing the known ones. */
  require(id: string): LlmProvider {
    const provider = this.providers.get(id);
    if (!provider) throw new UnknownProviderError(id, this.ids());
    return provider;
  }

  has(id: string): boolean {
    return this.providers.has(id);
  }

  ids(): string[] {
    return [...this.providers.keys()].sort();
  }

  /** The window of `model` on provider `id`: what the provider says, else nexo's table. */
  contextWindow(id: string, model: string): number | undefined {
    return this.providers.get(id)?.contextWindow?.(model) ?? contextWindow(model);
  }
}

/** A registry holding `scripted` plus every entry of llm.yaml's `providers` map. */
export function buildProviderRegistry(
  configs: Record<string, ProviderConfig> = {},
  options: { clock?: RetryClock } = {},
): ProviderRegistry {
  const registry = new ProviderRegistry();
  if (!("scripted" in configs)) registry.register(new ScriptedProvider());
  for (const [id, config] of Object.entries(configs))
    registry.register(createProvider(config, { id, ...options }));
  return registry;
}
