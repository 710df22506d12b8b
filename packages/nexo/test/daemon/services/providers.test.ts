/**
 * services.providers against a real daemon and the mock LLM server: keys are described, never
 * returned; a new provider is live as soon as upsert returns (an agent switched to it answers
 * through the mock server with the key from the environment); deleting an entry that an agent, a
 * tenant or a plugin grant resolves to is refused with ProviderInUseError.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import {
  envReference,
  InvalidConfigError,
  NotFoundError,
  ProviderInUseError,
} from "../../../src/daemon/services/index.js";
import { type DaemonDir, EXAMPLE_PLUGINS, startFromDir } from "../../helpers/daemon-dir.js";
import { endpoint, say } from "../../helpers/loopback.js";

const LLM = `# Providers of the test deployment.
providers:
  # The hosted one; its key comes from the environment.
  anthropic:
    type: anthropic
    api_key: \${ANTHROPIC_API_KEY:-} # unset in tests
  local:
    type: openai_compatible
    base_url: http://127.0.0.1:9
    api_key: \${file:local.key}
tenants:
  acme:
    providers:
      anthropic:
        type: anthropic
        api_key: sk-inline-secret
`;

const AGENTS = `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: loopback }]
  - id: acme-bot
    tenant_id: acme
    model: { provider: anthropic, model: claude-test }
  - id: gil
    model: { provider: local, model: llama }
`;

describe("services.providers", () => {
  const mock = new MockLlmServer();
  let env: DaemonDir;
  before(async () => {
    await mock.start();
    env = await startFromDir(
      {
        "llm.yaml": LLM,
        "agents.yaml": AGENTS,
        "tenants.yaml": "tenants:\n  - id: acme\n    llm_provider_refs: [anthropic]\n",
        "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n  - dir: ${join(EXAMPLE_PLUGINS, "demo-tools")}\n    grants: { llm_providers: [local] }\n`,
        "local.key": "sk-file-secret\n",
      },
      { env: { PATH: process.env.PATH, MOCK_KEY: "sk-mock" } },
    );
  });
  after(async () => {
    await env.daemon.stop("test over");
    await mock.close();
  });

  it("lists every entry with where its key comes from, and never a key", async () => {
    const list = await env.daemon.services.providers.list();
    assert.deepEqual(
      list.map((p) => [p.tenantId ?? "(global)", p.id, p.apiKey]),
      [
        ["(global)", "anthropic", { kind: "env", variable: "ANTHROPIC_API_KEY" }],
        ["(global)", "local", { kind: "file", path: "local.key" }],
        ["acme", "anthropic", { kind: "inline" }],
      ],
    );
    assert.equal(list[1]?.entry.base_url, "http://127.0.0.1:9");
    const text = JSON.stringify(list);
    assert.doesNotMatch(text, /sk-inline-secret|sk-file-secret/);
    assert.doesNotMatch(text, /api_key/);
    await assert.rejects(
      env.daemon.services.providers.get({ id: "anthropic", tenantId: "other" }),
      (e: unknown) => {
        assert.ok(e instanceof NotFoundError);
        assert.equal(e.subject, "llm_provider");
        return true;
      },
    );
  });

  it("refuses to delete what something resolves to, naming every user, and writes nothing", async () => {
    const { providers } = env.daemon.services;
    const before = env.read("llm.yaml");
    const tenantOwn = await providers.delete({ id: "anthropic", tenantId: "acme" }).then(
      () => assert.fail("accepted"),
      (e: unknown) => e,
    );
    assert.ok(tenantOwn instanceof ProviderInUseError);
    assert.equal(tenantOwn.kind, "conflict");
    assert.deepEqual(tenantOwn.users, { agents: ["acme-bot"], tenants: ["acme"], plugins: [] });
    assert.match(
      tenantOwn.message,
      /"anthropic" of tenant "acme" is in use by agent "acme-bot", tenant "acme"/,
    );

    const local = await providers.delete({ id: "local" }).then(
      () => assert.fail("accepted"),
      (e: unknown) => e,
    );
    assert.ok(local instanceof ProviderInUseError);
    assert.deepEqual(local.users, {
      agents: ["gil"],
      tenants: [],
      plugins: [join(EXAMPLE_PLUGINS, "demo-tools")],
    });
    assert.equal(env.read("llm.yaml"), before);
  });

  it("deletes a global entry that only a tenant's own entry of the same name shadows", async () => {
    const result = await env.daemon.services.providers.delete({ id: "anthropic" });
    assert.equal(result.removed, true);
    assert.equal(result.reload?.providersReloaded, true);
    // Exactly the entry's lines go; every other line (comments too) stays as it was.
    assert.equal(
      env.read("llm.yaml"),
      LLM.replace(
        "  anthropic:\n    type: anthropic\n    api_key: ${ANTHROPIC_API_KEY:-} # unset in tests\n",
        "",
      ),
    );
    assert.deepEqual(await env.daemon.services.providers.delete({ id: "anthropic" }), {
      removed: false,
      reload: undefined,
    });
  });

  it("a new provider is live when upsert returns: an agent switched to it answers through it", async () => {
    const { providers, agents } = env.daemon.services;
    mock.reset([{ text: "hello from the mock provider" }]);
    const created = await providers.upsert({
      id: "mock",
      entry: { type: "openai_compatible", base_url: mock.url, api_key: envReference("MOCK_KEY") },
    });
    assert.equal(created.created, true);
    assert.deepEqual(created.provider.apiKey, { kind: "env", variable: "MOCK_KEY" });
    assert.equal(created.reload?.providersReloaded, true);
    await agents.upsert({ id: "ana", model: { provider: "mock", model: "gpt-test" } });

    assert.equal(await say(await endpoint(env.stateDir), "alice", "hi"), "hello from the mock provider");
    const request = mock.requests().at(-1);
    assert.equal(request?.headers.authorization, "Bearer sk-mock", "the key came from the environment");

    // Changing one key keeps the others, with their placeholders, as written.
    const changed = await providers.upsert({ id: "mock", entry: { timeout_ms: 5000 } });
    assert.equal(changed.created, false);
    assert.match(
      env.read("llm.yaml"),
      /mock:\n {4}type: openai_compatible\n.*\n {4}api_key: \$\{MOCK_KEY\}\n {4}timeout_ms: 5000\n/,
    );
  });

  it("refuses an invalid entry with its location, and bad variable names", async () => {
    const before = env.read("llm.yaml");
    const error = await env.daemon.services.providers
      .upsert({ id: "bad", entry: { type: "openai_compatible" } })
      .then(
        () => assert.fail("accepted"),
        (e: unknown) => e,
      );
    assert.ok(error instanceof InvalidConfigError);
    assert.ok(error.issues[0]?.file?.endsWith("llm.yaml"));
    assert.equal(error.issues[0]?.keyPath, "providers.bad.base_url");
    assert.equal(env.read("llm.yaml"), before);
    assert.throws(() => envReference("1BAD"), TypeError);
  });
});
