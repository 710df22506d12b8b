/**
 * The retry policy every network provider shares.
 *
 * A request is sent again when it failed before anything reached the caller and the failure is
 * transient: 429 (waiting exactly what `retry-after` says), 5xx/overload and broken connections
 * (exponential backoff with jitter). Once one output event has been yielded the stream is part of
 * the turn already (a door may have shown the text), so a later failure is thrown as it is:
 * replaying the request would duplicate output. Each retry is announced with a `retry` event so
 * doors can show "retrying (1/3)"; `attempt` counts retries from 1 and `maxAttempts` is the most
 * retries the policy allows.
 */
import { setTimeout as delay } from "node:timers/promises";
import { z } from "zod";
import type { ProviderEvent } from "../types.js";
import { abortReason, isRetryable, retryAfterMsOf } from "./errors.js";

export interface RetryPolicy {
  /** Retries after the first attempt (0 disables retrying). */
  maxRetries: number;
  /** Backoff before the first retry; each later one multiplies it by `multiplier`. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  multiplier: number;
  /** 0..1: the share of each backoff that is randomised (0.5 waits between half and all of it). */
  jitter: number;
  /** A server asking for a longer wait than this gets its error thrown instead of a stalled turn. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 3,
  initialBackoffMs: 1000,
  maxBackoffMs: 30_000,
  multiplier: 2,
  jitter: 0.5,
  maxRetryAfterMs: 60_000,
});

/** The `retry` section of a provider entry in llm.yaml. */
export const RetryConfigSchema = z.looseObject({
  max_retries: z.int().min(0).max(20).optional(),
  initial_backoff_ms: z.int().min(0).optional(),
  max_backoff_ms: z.int().min(0).optional(),
  backoff_multiplier: z.number().min(1).optional(),
  jitter: z.number().min(0).max(1).optional(),
  max_retry_after_ms: z.int().min(0).optional(),
});
export type RetryConfig = z.infer<typeof RetryConfigSchema>;

export function retryPolicyFromConfig(config: RetryConfig | undefined): RetryPolicy {
  return {
    maxRetries: config?.max_retries ?? DEFAULT_RETRY_POLICY.maxRetries,
    initialBackoffMs: config?.initial_backoff_ms ?? DEFAULT_RETRY_POLICY.initialBackoffMs,
    maxBackoffMs: config?.max_backoff_ms ?? DEFAULT_RETRY_POLICY.maxBackoffMs,
    multiplier: config?.backoff_multiplier ?? DEFAULT_RETRY_POLICY.multiplier,
    jitter: config?.jitter ?? DEFAULT_RETRY_POLICY.jitter,
    maxRetryAfterMs: config?.max_retry_after_ms ?? DEFAULT_RETRY_POLICY.maxRetryAfterMs,
  };
}

/** Time and chance, injectable so tests neither wait nor guess. */
export interface RetryClock {
  /** Resolves after `ms`, rejects with the signal's reason when it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  now(): number;
  /** In [0, 1). */
  random(): number;
}

export const systemClock: RetryClock = {
  sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : undefined),
  now: () => Date.now(),
  random: () => Math.random(),
};

/** Backoff before retry number `retry` (1-based), jittered. */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number): number {
  const base = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * policy.multiplier ** (retry - 1));
  return Math.round(base * (1 - policy.jitter * random()));
}

export interface RetryOptions {
  policy: RetryPolicy;
  clock?: RetryClock;
  signal?: AbortSignal;
}

/**
 * Runs `attempt` until one succeeds, fails for good, or output has been streamed. `attempt`
 * receives its 1-based number and must throw typed errors (see errors.ts) so retryability can be
 * judged.
 */
export async function* streamWithRetry(
  attempt: (attemptNumber: number) => AsyncIterable<ProviderEvent>,
  options: RetryOptions,
): AsyncGenerator<ProviderEvent, void, undefined> {
  const { policy, signal } = options;
  const clock = options.clock ?? systemClock;
  for (let retry = 0; ; retry++) {
    let streamed = false;
    try {
      for await (const event of attempt(retry + 1)) {
        streamed = true;
        yield event;
      }
      return;
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal);
      if (streamed || retry >= policy.maxRetries || !isRetryable(error)) throw error;
      const asked = retryAfterMsOf(error);
      if (asked !== undefined && asked > policy.maxRetryAfterMs) throw error;
      const delayMs = asked ?? backoffDelayMs(retry + 1, policy, clock.random);
      yield {
        type: "retry",
        attempt: retry + 1,
        maxAttempts: policy.maxRetries,
        delayMs,
        reason: error instanceof Error ? error.message : String(error),
      };
      try {
        await clock.sleep(delayMs, signal);
      } catch (sleepError) {
        throw signal?.aborted ? abortReason(signal) : sleepError;
      }
    }
  }
}
