import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import { ConfigError } from "../../../src/config/index.js";
import { UnknownProviderError } from "../../../src/engine/providers/errors.js";
import { loadLlmConfig, TenantProviders } from "../../../src/engine/providers/llm-config.js";

function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-llm-"));
  const path = join(dir, "llm.yaml");
  writeFileSync(path, text);
  return path;
}

describe("llm.yaml", () => {
  test("global providers, per-tenant overrides with fallback, keys from the environment", async () => {
    const mock = new MockLlmServer({ script: [{ text: "global" }, { text: "acme" }] });
    const url = await mock.start();
    try {
      const path = file(`# providers every agent can name
providers:
  main:
    type: anthropic
    api_key: \${GLOBAL_KEY}
    base_url: ${url}
  local:
    type: openai_compatible
    base_url: http://127.0.0.1:1
retry:
  max_retries: 0
tenants:
  acme:
    providers:
      main:
        type: anthropic
        api_key: \${ACME_KEY:-acme-default}
        base_url: ${url}
`);
      const config = await loadLlmConfig(path, { GLOBAL_KEY: "sk-global" });
      const providers = new TenantProviders(config);
      assert.deepEqual(providers.ids(), ["local", "main", "scripted"]);
      assert.deepEqual(providers.tenantIds(), ["acme"]);
      const global = providers.resolve("main");
      const acme = providers.resolve("main", "acme");
      assert.notEqual(global, acme, "the tenant's own entry wins");
      assert.equal(
        providers.resolve("local", "acme"),
        providers.resolve("local"),
        "others fall back to global",
      );
      for (const provider of [global, acme]) {
        for await (const _ of provider.stream({
          model: "m",
          messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
          maxTokens: 10,
        })) {
          // drain
        }
      }
      const keys = mock.requests().map((r) => r.headers["x-api-key"] ?? r.headers.authorization);
      assert.match(String(keys[0]), /sk-global/);
      assert.match(String(keys[1]), /acme-default/);
      assert.throws(
        () => providers.resolve("nope", "acme"),
        (e: unknown) => e instanceof UnknownProviderError && /local, main, scripted/.test(e.message),
      );
    } finally {
      await mock.close();
    }
  });

  test("a bad entry is reported with file, line and key path; unknown keys are errors", async () => {
    const path = file("providers:\n  main:\n    type: antropic\nproviderz: {}\n");
    await assert.rejects(loadLlmConfig(path, {}), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /llm\.yaml:3:\d+: providers\.main\.type/);
      assert.match(e.message, /providerz/);
      return true;
    });
  });
});
