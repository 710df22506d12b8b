/**
 * The model each provider type gets when nobody names one (`nexo agent --provider X`, `nexo init`).
 * One table, so the CLI's doors and the config scaffold never disagree; keep it on models the
 * vendors still serve (their SDKs warn about retired ones).
 */
export const DEFAULT_MODELS = {
  anthropic: "claude-sonnet-5",
  openai: "gpt-4o",
  ollama: "llama3.2",
  scripted: "nexo-scripted-demo",
} as const satisfies Record<string, string>;

export type DefaultModelProvider = keyof typeof DEFAULT_MODELS;

/** The default model of a provider type, when there is one. */
export function defaultModelOf(provider: string): string | undefined {
  return Object.hasOwn(DEFAULT_MODELS, provider)
    ? DEFAULT_MODELS[provider as DefaultModelProvider]
    : undefined;
}
