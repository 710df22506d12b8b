/** LLM providers: the network ones, the offline scripted model, retries, errors and the registry. */
export { AnthropicProvider, type AnthropicProviderOptions, anthropicBaseUrl } from "./anthropic.js";
export { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_TIMEOUT_MS } from "./attempt-guard.js";
export { contextWindow, normalizeModelName } from "./context-windows.js";
export {
  DuplicateProviderError,
  isRetryable,
  LlmProviderError,
  retryAfterMsOf,
  retryAfterSecsFromHeaders,
  toLlmError,
  UnknownProviderError,
} from "./errors.js";
export { type LlmConfig, LlmConfigSchema, loadLlmConfig, TenantProviders } from "./llm-config.js";
export { OpenAiProvider, type OpenAiProviderOptions, openAiBaseUrl } from "./openai.js";
export {
  buildProviderRegistry,
  type CreateProviderOptions,
  createProvider,
  type ProviderConfig,
  ProviderConfigSchema,
  ProviderRegistry,
  ProvidersConfigSchema,
  type ProviderType,
  ProviderTypeSchema,
} from "./registry.js";
export {
  backoffDelayMs,
  DEFAULT_RETRY_POLICY,
  type RetryClock,
  type RetryConfig,
  RetryConfigSchema,
  type RetryPolicy,
  retryPolicyFromConfig,
  streamWithRetry,
  systemClock,
} from "./retry.js";
export { ScriptedProvider, type ScriptedProviderOptions } from "./scripted.js";
