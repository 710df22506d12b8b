/**
 * The shared retry policy, exercised through both providers against the real mock server: what
 * is retried, how long it waits (through an injected clock), the `retry` events, and the rule
 * that nothing is retried once output has streamed. Also: aborting stops a request promptly.
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import { LlmConnectionError, LlmRateLimitedError } from "@nexo/wire";
import { AnthropicProvider } from "../../../src/engine/providers/anthropic.js";
import { LlmProviderError } from "../../../src/engine/providers/errors.js";
import { OpenAiProvider } from "../../../src/engine/providers/openai.js";
import {
  backoffDelayMs,
  DEFAULT_RETRY_POLICY,
  type RetryClock,
  type RetryPolicy,
  retryPolicyFromConfig,
  streamWithRetry,
} from "../../../src/engine/providers/retry.js";
import type { ChatRequest, LlmProvider, ProviderEvent } from "../../../src/engine/types.js";
import { waitFor } from "../../helpers/wait.js";

const POLICY: RetryPolicy = {
  maxRetries: 3,
  initialBackoffMs: 10,
  maxBackoffMs: 25,
  multiplier: 2,
  jitter: 0,
  maxRetryAfterMs: 30_000,
};

/** Records every wait instead of waiting; `now` is fixed so HTTP-date arithmetic is exact. */
function recordingClock(now = Date.parse("2030-01-01T00:00:00Z")): RetryClock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    now: () => now,
    random: () => 0.5,
  };
}

async function collect(
  stream: AsyncIterable<ProviderEvent>,
): Promise<{ events: ProviderEvent[]; error?: unknown }> {
  const events: ProviderEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

const request = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "mock-model",
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  maxTokens: 100,
  ...overrides,
});

const text = (events: ProviderEvent[]) =>
  events
    .filter((e) => e.type === "text_delta")
    .map((e) => (e.type === "text_delta" ? e.text : ""))
    .join("");

/** A port nothing listens on: bind one, then close it. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("retries against the mock server", () => {
  const server = new MockLlmServer();
  let clock: ReturnType<typeof recordingClock>;
  const providers: Record<string, () => LlmProvider> = {};

  before(async () => {
    const url = await server.start();
    providers.anthropic = () => new AnthropicProvider({ apiKey: "k", baseUrl: url, retry: POLICY, clock });
    providers.openai = () => new OpenAiProvider({ apiKey: "k", baseUrl: url, retry: POLICY, clock });
  });
  after(() => server.close());
  beforeEach(() => {
    clock = recordingClock();
    server.reset({ responses: [] });
  });

  for (const vendor of ["anthropic", "openai"]) {
    describe(vendor, () => {
      it("honours retry-after on a 429, announces the retry, then succeeds", async () => {
        server.reset([{ status: 429, retry_after: 2 }, { text: "after the wait" }]);
        const { events, error } = await collect(providers[vendor]!().stream(request()));
        assert.equal(error, undefined);
        assert.deepEqual(clock.sleeps, [2000]);
        const retry = events[0];
        assert.equal(retry?.type, "retry");
        assert.deepEqual(
          { ...retry, reason: undefined },
          { type: "retry", attempt: 1, maxAttempts: 3, delayMs: 2000, reason: undefined },
        );
        assert.match(retry?.type === "retry" ? retry.reason : "", /rate limit/i);
        assert.equal(text(events), "after the wait");
        assert.equal(server.requests().length, 2);
      });

      it("honours retry-after given as an HTTP date", async () => {
        const at = new Date(Date.parse("2030-01-01T00:00:07Z")).toUTCString();
        server.reset([{ status: 429, retry_after: at }, { text: "ok" }]);
        const { error } = await collect(providers[vendor]!().stream(request()));
        assert.equal(error, undefined);
        assert.deepEqual(clock.sleeps, [7000]);
      });

      it("backs off exponentially on 5xx, then succeeds", async () => {
        server.reset([{ status: 500 }, { status: 503 }, { status: 529 }, { text: "finally" }]);
        const { events, error } = await collect(providers[vendor]!().stream(request()));
        assert.equal(error, undefined);
        assert.deepEqual(clock.sleeps, [10, 20, 25], "doubling, capped at maxBackoffMs");
        assert.deepEqual(
          events.filter((e) => e.type === "retry").map((e) => (e.type === "retry" ? e.attempt : 0)),
          [1, 2, 3],
        );
        assert.equal(text(events), "finally");
      });

      it("gives up after maxRetries with the last error", async () => {
        server.reset([
          { status: 500 },
          { status: 500 },
          { status: 500 },
          { status: 500 },
          { text: "unreached" },
        ]);
        const { error } = await collect(providers[vendor]!().stream(request()));
        assert.ok(error instanceof LlmProviderError && error.status === 500, String(error));
        assert.equal(server.requests().length, 4);
      });

      it("retries a connection cut before any output", async () => {
        server.reset([{ disconnect_after: 0 }, { text: "second try" }]);
        const { events, error } = await collect(providers[vendor]!().stream(request()));
        assert.equal(error, undefined);
        assert.equal(events[0]?.type, "retry");
        assert.equal(text(events), "second try");
      });

      it("never retries once output has streamed: a mid-stream disconnect is an error", async () => {
        server.reset([
          { text: "one two three four five six seven eight", disconnect_after: 6 },
          { text: "must not be used" },
        ]);
        const { events, error } = await collect(providers[vendor]!().stream(request()));
        assert.ok(error instanceof LlmConnectionError, String(error));
        assert.ok(text(events).length > 0, "some output was streamed first");
        assert.equal(
          events.some((e) => e.type === "retry"),
          false,
        );
        assert.equal(server.requests().length, 1);
        assert.equal(server.remaining(), 1);
      });

      it("does not wait for a retry-after longer than the policy allows", async () => {
        server.reset([{ status: 429, retry_after: 3600 }, { text: "unreached" }]);
        const { error } = await collect(providers[vendor]!().stream(request()));
        assert.ok(error instanceof LlmRateLimitedError);
        assert.equal(error.retryAfterSecs, 3600);
        assert.deepEqual(clock.sleeps, []);
      });

      it("stops promptly when the signal aborts mid-stream", async () => {
        // A second between events: the whole stream would take about ten seconds.
        server.reset([{ text: "slow words arrive one by one here", delay_ms: 1000 }]);
        const controller = new AbortController();
        let abortedAt = 0;
        let afterAbort = 0;
        let error: unknown;
        try {
          for await (const event of providers[vendor]!().stream(request({ signal: controller.signal }))) {
            if (abortedAt) afterAbort++;
            if (event.type === "text_delta" && !abortedAt) {
              abortedAt = Date.now();
              controller.abort();
            }
          }
        } catch (e) {
          error = e;
        }
        assert.equal((error as Error | undefined)?.name, "AbortError", String(error));
        assert.equal(afterAbort, 0, "no event is delivered after the abort");
        // Generous (the machine may be loaded): only "not after the rest of the stream".
        assert.ok(Date.now() - abortedAt < 8000, "well before the stream would have ended");
        // The server sees the connection go away before it has sent the whole stream.
        await waitFor(
          "the server to see the client go",
          () => server.requests()[0]?.clientClosed || undefined,
        );
      });
    });
  }

  it("does not retry a 429 for a spent quota", async () => {
    server.reset([
      {
        status: 429,
        body: {
          error: {
            message: "You exceeded your current quota",
            type: "insufficient_quota",
            code: "insufficient_quota",
          },
        },
      },
      { text: "unreached" },
    ]);
    const { error } = await collect(providers.openai!().stream(request()));
    assert.ok(error instanceof LlmRateLimitedError);
    assert.equal(server.requests().length, 1);
  });

  it("gives up on a stream that goes silent for idle_timeout_ms", async () => {
    for (const make of [
      () =>
        new AnthropicProvider({
          apiKey: "k",
          baseUrl: server.url,
          idleTimeoutMs: 100,
          retry: { ...POLICY, maxRetries: 0 },
        }),
      () =>
        new OpenAiProvider({
          apiKey: "k",
          baseUrl: server.url,
          idleTimeoutMs: 100,
          retry: { ...POLICY, maxRetries: 0 },
        }),
    ]) {
      // Without the idle timeout this stream would complete (no error) after its pause; no bound
      // on the time taken: on a loaded machine the 100 ms may run out before the server answers.
      server.reset([{ text: "slow", delay_ms: 2000 }]);
      const { error } = await collect(make().stream(request()));
      assert.ok(error instanceof LlmConnectionError, String(error));
      assert.match(error.message, /no data .* for 100 ms/);
    }
  });

  it("honours retry-after on a 503", async () => {
    server.reset([{ status: 503, retry_after: 4 }, { text: "ok" }]);
    const { error } = await collect(providers.anthropic!().stream(request()));
    assert.equal(error, undefined);
    assert.deepEqual(clock.sleeps, [4000]);
  });
});

describe("retries without a server", () => {
  it("maps connection refused to LlmConnectionError after the retries", async () => {
    const port = await closedPort();
    const clock = recordingClock();
    for (const provider of [
      new AnthropicProvider({
        apiKey: "k",
        baseUrl: `http://127.0.0.1:${port}`,
        retry: { ...POLICY, maxRetries: 2 },
        clock,
      }),
      new OpenAiProvider({
        apiKey: "k",
        baseUrl: `http://127.0.0.1:${port}`,
        retry: { ...POLICY, maxRetries: 2 },
        clock,
      }),
    ]) {
      const { events, error } = await collect(provider.stream(request()));
      assert.ok(error instanceof LlmConnectionError, String(error));
      assert.match(error.message, /ECONNREFUSED|cannot reach/);
      assert.equal(events.filter((e) => e.type === "retry").length, 2);
    }
  });

  it("stops waiting between retries when the signal aborts", async () => {
    const port = await closedPort();
    const controller = new AbortController();
    const provider = new OpenAiProvider({
      apiKey: "k",
      baseUrl: `http://127.0.0.1:${port}`,
      retry: { ...POLICY, initialBackoffMs: 60_000, maxBackoffMs: 60_000 },
    });
    const started = Date.now();
    let error: unknown;
    try {
      for await (const event of provider.stream(request({ signal: controller.signal }))) {
        if (event.type === "retry") setTimeout(() => controller.abort(), 20);
      }
    } catch (e) {
      error = e;
    }
    assert.equal((error as Error | undefined)?.name, "AbortError");
    assert.ok(Date.now() - started < 30_000, "well before the 60 s backoff ends");
  });

  it("does not start a request when the signal is already aborted", async () => {
    const server = new MockLlmServer({ script: [{ text: "unreached" }] });
    const url = await server.start();
    try {
      const provider = new AnthropicProvider({ apiKey: "k", baseUrl: url });
      const { error } = await collect(provider.stream(request({ signal: AbortSignal.abort() })));
      assert.equal((error as Error | undefined)?.name, "AbortError");
      assert.equal(server.remaining(), 1);
    } finally {
      await server.close();
    }
  });
});

describe("retry policy", () => {
  it("computes jittered exponential backoff", () => {
    const policy = { ...DEFAULT_RETRY_POLICY, initialBackoffMs: 1000, maxBackoffMs: 10_000, jitter: 0.5 };
    assert.equal(
      backoffDelayMs(1, policy, () => 0),
      1000,
    );
    assert.equal(
      backoffDelayMs(1, policy, () => 0.999999),
      500,
    );
    assert.equal(
      backoffDelayMs(3, policy, () => 0),
      4000,
    );
    assert.equal(
      backoffDelayMs(10, policy, () => 0),
      10_000,
    );
    assert.equal(backoffDelayMs(2, { ...policy, jitter: 0 }, Math.random), 2000);
  });

  it("reads the retry section of llm.yaml", () => {
    assert.deepEqual(retryPolicyFromConfig({ max_retries: 0, initial_backoff_ms: 5 }), {
      ...DEFAULT_RETRY_POLICY,
      maxRetries: 0,
      initialBackoffMs: 5,
    });
    assert.deepEqual(retryPolicyFromConfig(undefined), { ...DEFAULT_RETRY_POLICY });
  });

  it("passes non-retryable errors through on the first attempt", async () => {
    let attempts = 0;
    const boom = new TypeError("a bug, not a flaky network");
    const { error } = await collect(
      streamWithRetry(
        // biome-ignore lint/correctness/useYield: the attempt fails before producing anything
        async function* () {
          attempts++;
          throw boom;
        },
        { policy: POLICY, clock: recordingClock() },
      ),
    );
    assert.equal(error, boom);
    assert.equal(attempts, 1);
  });
});
