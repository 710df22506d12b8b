/**
 * What the Anthropic provider loads on its first request (engine/providers/anthropic-sdk.ts): the
 * SDK's client and Messages API, not the APIs nexo never calls. The SDK's default export builds
 * all of them, which made the provider's chunk 1.09 MB that a one-shot `nexo agent` compiled
 * before its first answer. Read from the bundle's static imports, as the start-up tests do.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { staticClosure } from "../../helpers/bundle.js";

const BUNDLE = fileURLToPath(new URL("../../../bundle/", import.meta.url));

test("the Anthropic provider's SDK chunk holds the client and the Messages API only", () => {
  const entry = readdirSync(BUNDLE).find((name) => /^anthropic-sdk-[^.]+\.js$/.test(name));
  assert.ok(entry !== undefined, "the bundle has no anthropic-sdk chunk loaded on demand");
  const sources = staticClosure(entry).join("\n");
  for (const present of [
    "node_modules/@anthropic-ai/sdk/client.mjs",
    "node_modules/@anthropic-ai/sdk/resources/messages/messages.mjs",
    "node_modules/@anthropic-ai/sdk/core/error.mjs",
  ]) {
    assert.ok(sources.includes(`// ${present}`), `${present} is missing`);
  }
  for (const absent of [
    "node_modules/@anthropic-ai/sdk/resources/index.mjs",
    "node_modules/@anthropic-ai/sdk/resources/beta/messages/",
    "node_modules/@anthropic-ai/sdk/resources/models.mjs",
    "node_modules/@anthropic-ai/sdk/lib/tools/",
    "node_modules/standardwebhooks/",
  ]) {
    assert.ok(!sources.includes(`// ${absent}`), `${absent} is loaded with the provider`);
  }
  // A third of the SDK's 1.09 MB: what is left is the client, Messages, their errors and tracing.
  assert.ok(sources.length < 500_000, `the provider's chunks are ${sources.length} bytes`);
});
