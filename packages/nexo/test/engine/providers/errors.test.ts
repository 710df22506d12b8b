/**
 * Mapping SDK and network failures to the typed LLM errors, including the wordings of vendors the
 * mock server does not imitate (vLLM, llama.cpp, Gemini, DeepSeek) and errors sent inside a stream.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { MockLlmServer } from "@nexo/mock-llm";
import {
  LlmAuthenticationError,
  LlmConnectionError,
  LlmContextOverflowError,
  LlmModelNotFoundError,
  LlmRateLimitedError,
} from "@nexo/wire";
import OpenAI from "openai";

/** Both vendors' error classes, as each provider passes its own. */
const SDKS = [Anthropic, OpenAI] as const;

import {
  isRetryable,
  LlmProviderError,
  retryAfterMsOf,
  retryAfterSecsFromHeaders,
  toLlmError,
} from "../../../src/engine/providers/errors.js";
import { createProvider } from "../../../src/engine/providers/registry.js";
import type { ProviderEvent } from "../../../src/engine/types.js";

const ctx = {
  provider: "test",
  baseUrl: "http://llm",
  model: "m-1",
  now: () => Date.parse("2030-01-01T00:00:00Z"),
};

const anthropicError = (status: number, type: string, message: string, headers = new Headers()) =>
  Anthropic.APIError.generate(status, { type: "error", error: { type, message } }, undefined, headers);
/** What the SDK throws for an `event: error` inside a stream: no status, the error type only. */
const anthropicStreamError = (type: string, message: string) =>
  new Anthropic.APIError(
    undefined,
    { type: "error", error: { type, message } },
    undefined,
    new Headers(),
    type as never,
  );
const openAiError = (status: number, error: Record<string, unknown>, headers = new Headers()) =>
  OpenAI.APIError.generate(status, { error }, undefined, headers);

describe("retry-after parsing", () => {
  it("reads seconds, HTTP dates and retry-after-ms", () => {
    assert.equal(retryAfterSecsFromHeaders(new Headers({ "retry-after": "12" })), 12);
    assert.equal(retryAfterSecsFromHeaders(new Headers({ "retry-after": "1.5" })), 1.5);
    assert.equal(
      retryAfterSecsFromHeaders(new Headers({ "retry-after": "Tue, 01 Jan 2030 00:00:30 GMT" }), ctx.now),
      30,
    );
    assert.equal(
      retryAfterSecsFromHeaders(new Headers({ "retry-after": "Mon, 31 Dec 2029 00:00:00 GMT" }), ctx.now),
      0,
      "a date in the past means now",
    );
    assert.equal(
      retryAfterSecsFromHeaders(new Headers({ "retry-after-ms": "250", "retry-after": "9" })),
      0.25,
    );
    assert.equal(retryAfterSecsFromHeaders(new Headers({ "retry-after": "soon" })), undefined);
    assert.equal(retryAfterSecsFromHeaders(new Headers()), undefined);
  });
});

describe("toLlmError", () => {
  it("maps 401 and 403 to authentication errors", () => {
    assert.ok(
      toLlmError(anthropicError(401, "authentication_error", "invalid x-api-key"), ctx, SDKS) instanceof
        LlmAuthenticationError,
    );
    assert.ok(
      toLlmError(anthropicError(403, "permission_error", "no access"), ctx, SDKS) instanceof
        LlmAuthenticationError,
    );
    assert.ok(
      toLlmError(
        openAiError(401, { message: "Incorrect API key", code: "invalid_api_key" }),
        ctx,
        SDKS,
      ) instanceof LlmAuthenticationError,
    );
  });

  it("maps 429 to rate limited with the wait the server asked for", () => {
    const error = toLlmError(
      anthropicError(429, "rate_limit_error", "slow down", new Headers({ "retry-after": "17" })),
      ctx,
      SDKS,
    );
    assert.ok(error instanceof LlmRateLimitedError);
    assert.equal(error.retryAfterSecs, 17);
    assert.deepEqual((error.data as Record<string, unknown>).retry_after_secs, 17);
    assert.equal(retryAfterMsOf(error), 17_000);
    assert.equal(isRetryable(error), true);
  });

  it("maps 404 and vendors' 'model does not exist' 400s to model not found", () => {
    const e404 = toLlmError(anthropicError(404, "not_found_error", "model: claude-x"), ctx, SDKS);
    assert.ok(e404 instanceof LlmModelNotFoundError);
    assert.match(e404.message, /"m-1"/);
    assert.ok(
      toLlmError(openAiError(400, { message: "Model Not Exist" }), ctx, SDKS) instanceof
        LlmModelNotFoundError,
    );
    assert.ok(
      toLlmError(
        openAiError(404, { message: 'model "llama9" not found, try pulling it first' }),
        ctx,
        SDKS,
      ) instanceof LlmModelNotFoundError,
    );
  });

  it("recognises context overflow in every vendor's wording", () => {
    const wordings = [
      "prompt is too long: 210443 tokens > 200000 maximum",
      "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again",
      "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens.",
      "the request exceeds the available context size, try increasing it",
      "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
      "Please reduce the length of the messages or completion.",
      "invalid params, context window exceeds limit",
    ];
    for (const message of wordings) {
      assert.ok(
        toLlmError(openAiError(400, { message }), ctx, SDKS) instanceof LlmContextOverflowError,
        message,
      );
    }
    assert.ok(
      toLlmError(
        openAiError(400, { message: "too long", code: "context_length_exceeded" }),
        ctx,
        SDKS,
      ) instanceof LlmContextOverflowError,
    );
    assert.ok(
      toLlmError(anthropicError(413, "request_too_large", "request too large"), ctx, SDKS) instanceof
        LlmContextOverflowError,
    );
  });

  it("maps other 4xx to a non-retryable provider error and 5xx to a retryable one", () => {
    const bad = toLlmError(openAiError(400, { message: "tools[0].function.name is invalid" }), ctx, SDKS);
    assert.ok(bad instanceof LlmProviderError);
    assert.equal(bad.retryable, false);
    assert.equal(bad.status, 400);
    const down = toLlmError(anthropicError(529, "overloaded_error", "Overloaded"), ctx, SDKS);
    assert.ok(down instanceof LlmProviderError);
    assert.equal(isRetryable(down), true);
  });

  it("maps errors sent inside a stream by their type", () => {
    const overloaded = toLlmError(anthropicStreamError("overloaded_error", "Overloaded"), ctx, SDKS);
    assert.ok(overloaded instanceof LlmProviderError && overloaded.retryable);
    assert.ok(
      toLlmError(anthropicStreamError("rate_limit_error", "x"), ctx, SDKS) instanceof LlmRateLimitedError,
    );
    const streamed = new OpenAI.APIError(
      undefined,
      { message: "context_length_exceeded", code: "context_length_exceeded" },
      undefined,
      undefined,
    );
    assert.ok(toLlmError(streamed, ctx, SDKS) instanceof LlmContextOverflowError);
  });

  it("maps SDK connection errors and broken sockets to connection errors", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    const sdk = new OpenAI.APIConnectionError({ cause: new TypeError("fetch failed", { cause: refused }) });
    const mapped = toLlmError(sdk, ctx, SDKS);
    assert.ok(mapped instanceof LlmConnectionError);
    assert.match(mapped.message, /ECONNREFUSED/);
    assert.ok(toLlmError(new Anthropic.APIConnectionTimeoutError(), ctx, SDKS) instanceof LlmConnectionError);
    const terminated = new TypeError("terminated", {
      cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
    });
    assert.ok(toLlmError(terminated, ctx, SDKS) instanceof LlmConnectionError);
    assert.ok(
      toLlmError(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }), ctx, SDKS) instanceof
        LlmConnectionError,
    );
  });

  it("leaves typed errors and unrelated bugs alone", () => {
    const typed = new LlmAuthenticationError("already typed");
    assert.equal(toLlmError(typed, ctx, SDKS), typed);
    const bug = new RangeError("index out of range");
    assert.equal(toLlmError(bug, ctx, SDKS), bug);
    assert.equal(isRetryable(bug), false);
  });
});

describe("provider errors never carry the key", () => {
  const KEY = "proxy-key-7f3kQ92LmZp0Xr8s";
  const server = new MockLlmServer();
  before(() => server.start());
  after(() => server.close());

  for (const type of ["anthropic", "openai_compatible"] as const) {
    it(`${type}: an error body echoing the key, retried then thrown, is scrubbed everywhere`, async () => {
      const echo = `invalid api key ${KEY}; you sent Authorization: Bearer ${KEY}`;
      server.reset([
        { status: 500, message: echo },
        { status: 401, message: echo },
      ]);
      const provider = createProvider(
        {
          type,
          base_url: server.url,
          api_key: KEY,
          retry: { max_retries: 1, initial_backoff_ms: 1, jitter: 0 },
        },
        { id: type },
      );
      const events: ProviderEvent[] = [];
      let thrown: unknown;
      try {
        for await (const event of provider.stream({ model: "m-1", messages: [], maxTokens: 16 }))
          events.push(event);
      } catch (error) {
        thrown = error;
      }
      // The key did go to the server…
      const headers = server.requests()[0]!.headers;
      assert.ok(headers["x-api-key"] === KEY || headers.authorization === `Bearer ${KEY}`);
      // …and comes back neither in the retry notice nor in the error, its message or its stack.
      assert.ok(thrown instanceof LlmAuthenticationError, String(thrown));
      const retry = events.find((event) => event.type === "retry");
      assert.ok(retry !== undefined && retry.type === "retry");
      for (const text of [retry.reason, thrown.message, thrown.stack ?? "", JSON.stringify(thrown.data)]) {
        assert.ok(!text.includes(KEY), `the key leaked: ${text}`);
      }
      assert.match(
        thrown.message,
        /rejected the credentials \(HTTP 401\): invalid api key \[REDACTED:secret\]/,
      );
    });
  }
});
