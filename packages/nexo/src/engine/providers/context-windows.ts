/**
 * Context windows of common models, in tokens, for compaction decisions when llm.yaml does not
 * say. Names are matched by longest prefix after dropping a vendor path ("openai/gpt-4o") and an
 * Ollama tag (":8b"), so dated and sized variants inherit their family's window.
 *
 * A local server may run a model with a smaller window than the model supports (Ollama's
 * `num_ctx`); set `context_window` on such a provider in llm.yaml.
 */
const WINDOWS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  // Anthropic
  ["claude-opus-4", 200_000],
  ["claude-sonnet-4", 200_000],
  ["claude-haiku-4", 200_000],
  ["claude-3-7-sonnet", 200_000],
  ["claude-3-5-sonnet", 200_000],
  ["claude-3-5-haiku", 200_000],
  ["claude-3-opus", 200_000],
  ["claude-3-haiku", 200_000],
  ["claude", 200_000],
  // OpenAI
  ["gpt-5", 400_000],
  ["gpt-4.1", 1_047_576],
  ["gpt-4o", 128_000],
  ["gpt-4-turbo", 128_000],
  ["gpt-4", 8_192],
  ["gpt-3.5-turbo", 16_385],
  ["gpt-oss", 131_072],
  ["o1-mini", 128_000],
  ["o1", 200_000],
  ["o3-mini", 200_000],
  ["o3", 200_000],
  ["o4-mini", 200_000],
  // Others commonly reached through OpenAI-compatible endpoints
  ["deepseek", 128_000],
  ["minimax-m1", 1_000_000],
  ["minimax-m2", 204_800],
  ["minimax-text-01", 1_000_192],
  ["gemini-1.5-pro", 2_097_152],
  ["gemini", 1_048_576],
  ["grok-4", 256_000],
  ["grok", 131_072],
  ["kimi-k2", 131_072],
  ["glm-4.6", 200_000],
  ["glm-4.5", 128_000],
  ["mistral-large", 128_000],
  ["mistral-small", 32_000],
  ["mistral", 32_768],
  ["mixtral", 32_768],
  ["codestral", 256_000],
  ["qwen3", 40_960],
  ["qwen2.5", 32_768],
  ["llama3.1", 131_072],
  ["llama3.2", 131_072],
  ["llama3.3", 131_072],
  ["llama-3.1", 131_072],
  ["llama-3.2", 131_072],
  ["llama-3.3", 131_072],
  ["llama3", 8_192],
  ["llama-3", 8_192],
  ["gemma3", 131_072],
  ["gemma2", 8_192],
  ["phi4", 16_384],
  ["phi3", 131_072],
];

/** Longest prefixes first, so "o1-mini" wins over "o1" and "gpt-4o" over "gpt-4". */
const BY_SPECIFICITY = [...WINDOWS].sort((a, b) => b[0].length - a[0].length);

export function normalizeModelName(model: string): string {
  const base = model.trim().toLowerCase().split("/").pop() ?? "";
  return base.split(":")[0] ?? base;
}

/** The model's context window in tokens, or undefined when nexo does not know the model. */
export function contextWindow(model: string): number | undefined {
  const name = normalizeModelName(model);
  if (name === "") return undefined;
  for (const [prefix, tokens] of BY_SPECIFICITY) if (name.startsWith(prefix)) return tokens;
  return undefined;
}
