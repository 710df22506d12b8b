/**
 * Measures every model request of a provider for the `/metrics` LLM latency histogram: from the
 * request until its stream ends (or fails), labelled with the provider and the outcome.
 */

import { monotonicMs } from "@nexo/wire";
import type { ChatRequest, LlmProvider, ProviderEvent } from "../engine/types.js";

export type LlmObserver = (provider: string, outcome: "ok" | "error", seconds: number) => void;

const timed = new WeakMap<LlmProvider, LlmProvider>();

export function timedProvider(provider: LlmProvider, observe: LlmObserver): LlmProvider {
  const cached = timed.get(provider);
  if (cached) return cached;
  const wrapper: LlmProvider = {
    id: provider.id,
    ...(provider.contextWindow ? { contextWindow: (model: string) => provider.contextWindow?.(model) } : {}),
    async *stream(request: ChatRequest): AsyncIterable<ProviderEvent> {
      const started = monotonicMs();
      let outcome: "ok" | "error" = "error";
      try {
        yield* provider.stream(request);
        outcome = "ok";
      } finally {
        observe(provider.id, outcome, (monotonicMs() - started) / 1000);
      }
    },
  };
  timed.set(provider, wrapper);
  return wrapper;
}
