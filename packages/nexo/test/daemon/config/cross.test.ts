/**
 * The checks that span files: providers agents name exist for their tenant, tenants exist, grants
 * name real agents and providers, one owner per binding, `${VAR}` in secrets, and the warning for
 * a binding nothing serves.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { after, describe, it } from "node:test";
import { formatIssue } from "../../../src/config/index.js";
import { inspectDaemonConfig, loadDaemonConfig } from "../../../src/daemon/config/index.js";
import { formatWarning } from "../../../src/daemon/config/report.js";

function configDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-daemon-config-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

async function report(files: Record<string, string>, env: Record<string, string | undefined> = {}) {
  const dir = configDir(files);
  const found = await inspectDaemonConfig(dir, { env: { PATH: process.env.PATH, ...env } });
  const relativeTo = <T extends { file?: string }>(entry: T): T => ({
    ...entry,
    file: relative(dir, entry.file ?? dir),
  });
  return {
    dir,
    config: found.config,
    problems: found.issues.map((issue) => formatIssue(relativeTo(issue))),
    warnings: found.warnings.map((warning) => formatWarning(relativeTo(warning))),
  };
}

const LLM = `providers:
  anthropic:
    type: anthropic
    api_key: \${ANTHROPIC_API_KEY:-}
tenants:
  acme:
    providers:
      acme_llm: { type: scripted }
`;

const CHANNEL_PLUGIN = `[plugin]
id = "chat"
version = "0.1.0"
name = "Chat"
description = "A channel plugin that also provides a model"
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = "node"

[plugin.extends]
channels = ["chat"]
llm_providers = ["chat_llm"]
`;

describe("providers across agents.yaml, llm.yaml and plugins", () => {
  it("refuses an unknown provider and lists what the agent could use", async () => {
    const { problems } = await report({
      "agents.yaml": `agents:
  - id: ana
    model: { provider: antropic, model: m }
  - id: bob
    tenant_id: acme
    model: { provider: nope, model: m }
`,
      "llm.yaml": LLM,
    });
    assert.deepEqual(problems, [
      'agents.yaml:3:14: agents[0].model.provider: unknown provider "antropic" (a global agent can use: anthropic, scripted)',
      'agents.yaml:6:14: agents[1].model.provider: unknown provider "nope" (tenant "acme" can use: acme_llm, anthropic, scripted)',
    ]);
  });

  it("lets a tenant's agent use its tenant-scoped provider, and only that tenant's agents", async () => {
    const agents = `agents:
  - id: ana
    tenant_id: acme
    model: { provider: acme_llm, model: m }
  - id: bob
    tenant_id: beta
    model: { provider: acme_llm, model: m }
  - id: cleo
    model: { provider: acme_llm, model: m }
`;
    const { problems } = await report({ "agents.yaml": agents, "llm.yaml": LLM });
    assert.deepEqual(problems, [
      'agents.yaml:7:14: agents[1].model.provider: provider "acme_llm" is defined in llm.yaml only for tenant "acme", not for tenant "beta"',
      'agents.yaml:9:14: agents[2].model.provider: provider "acme_llm" is defined in llm.yaml only for tenant "acme", not for a global agent',
    ]);
  });

  it("accepts scripted without llm.yaml, and providers that enabled plugins contribute", async () => {
    const { problems, config } = await report({
      "agents.yaml": `agents:
  - id: ana
    model: { provider: scripted, model: echo }
  - id: bob
    model: { provider: chat_llm, model: tiny }
`,
      "plugins.yaml": "plugins:\n  - dir: chat\n",
      "chat/nexo-plugin.toml": CHANNEL_PLUGIN,
    });
    assert.deepEqual(problems, []);
    assert.equal(config?.agents.length, 2);
  });

  it("does not blame agents.yaml when llm.yaml is itself broken", async () => {
    const { problems } = await report({
      "agents.yaml": "agents:\n  - id: ana\n    model: { provider: anthropic, model: m }\n",
      "llm.yaml": "providers:\n  anthropic: { type: antropic }\n",
    });
    assert.deepEqual(problems, [
      'llm.yaml:2:16: providers.anthropic.type: expected one of anthropic|openai|openai_compatible|scripted, got "antropic"',
    ]);
  });

  it("substitutes ${VAR} in secrets such as api_key, and reports an unset one at its value", async () => {
    const files = {
      "agents.yaml": "agents:\n  - id: ana\n    model: { provider: openai, model: gpt-4o }\n",
      "llm.yaml":
        "providers:\n  openai:\n    type: openai\n    api_key: ${TEST_OPENAI_KEY}\n    organization: ${file:org.txt}\n",
      "org.txt": "org-123\n",
    };
    const dir = configDir(files);
    const config = await loadDaemonConfig(dir, { env: { TEST_OPENAI_KEY: "sk-from-env" } });
    assert.equal(config.llm.providers.openai?.api_key, "sk-from-env");
    assert.equal(config.llm.providers.openai?.organization, "org-123");
    const unset = await report(files);
    assert.deepEqual(unset.problems, [
      "llm.yaml:4:14: providers.openai.api_key: environment variable TEST_OPENAI_KEY is not set (used as ${TEST_OPENAI_KEY})",
    ]);
    // `${VAR:-}` makes the key optional: unset reads as "no key".
    const optional = await report({
      "agents.yaml": files["agents.yaml"],
      "llm.yaml": LLM.replace("anthropic:\n    type: anthropic", "openai:\n    type: openai"),
    });
    assert.deepEqual(optional.problems, []);
    assert.equal(optional.config?.llm.providers.openai?.api_key, undefined);
  });
});

describe("tenants across files", () => {
  const tenants = "tenants:\n  - id: acme\n    llm_provider_refs: [acme_llm, anthropic, beta_llm]\n";

  it("requires tenant ids used in agents.yaml and llm.yaml to be listed in tenants.yaml", async () => {
    const { problems } = await report({
      "agents.yaml": `agents:
  - id: ana
    tenant_id: acme
    model: { provider: scripted, model: m }
  - id: bob
    tenant_id: beta
    model: { provider: scripted, model: m }
`,
      "llm.yaml": `${LLM}  beta:\n    providers:\n      beta_llm: { type: scripted }\n`,
      "tenants.yaml": tenants,
    });
    assert.deepEqual(problems, [
      'agents.yaml:6:5: agents[1].tenant_id: unknown tenant "beta" (not in tenants.yaml)',
      'llm.yaml:9:3: tenants.beta: unknown tenant "beta" (not in tenants.yaml)',
      'tenants.yaml:3:46: tenants[0].llm_provider_refs[2]: provider "beta_llm" is defined in llm.yaml only for tenant "beta", not for tenant "acme"',
    ]);
  });

  it("accepts any well-formed tenant id when there is no tenants.yaml", async () => {
    const { problems } = await report({
      "agents.yaml":
        "agents:\n  - id: ana\n    tenant_id: anyone\n    model: { provider: scripted, model: m }\n",
    });
    assert.deepEqual(problems, []);
  });
});

describe("plugin grants", () => {
  it("must name agents of agents.yaml and providers someone defines", async () => {
    const { problems } = await report({
      "agents.yaml": "agents:\n  - id: ana\n    model: { provider: scripted, model: m }\n",
      "llm.yaml": LLM,
      "plugins.yaml": `plugins:
  - dir: chat
    grants:
      memory_agents: [ana, anna]
      llm_providers: [anthropic, acme_llm, chat_llm, openai]
  - dir: other
    enabled: false
    grants: { memory_agents: "*", llm_providers: [ghost] }
`,
      "chat/nexo-plugin.toml": CHANNEL_PLUGIN,
    });
    assert.deepEqual(problems, [
      'plugins.yaml:4:28: plugins[0].grants.memory_agents[1]: unknown agent "anna" (not in agents.yaml)',
      'plugins.yaml:5:54: plugins[0].grants.llm_providers[3]: unknown provider "openai" (known: acme_llm, anthropic, chat_llm, scripted)',
      'plugins.yaml:8:51: plugins[1].grants.llm_providers[0]: unknown provider "ghost" (known: acme_llm, anthropic, chat_llm, scripted)',
    ]);
  });
});

describe("bindings", () => {
  it("route once: two active agents on one (plugin, instance) is an error naming both", async () => {
    const { problems } = await report({
      "agents.yaml": `agents:
  - id: ana
    model: { provider: scripted, model: m }
    inbound_bindings: [{ plugin: chat, instance: support }]
  - id: bob
    model: { provider: scripted, model: m }
    inbound_bindings: [{ plugin: chat }, { plugin: chat, instance: support }]
`,
    });
    assert.deepEqual(problems, [
      'agents.yaml:7:42: agents[1].inbound_bindings[1]: chat (instance "support") is bound to both agent "ana" (agents[0].inbound_bindings[0]) and agent "bob"; a message is routed to one agent only, so deactivate one or give them different instances',
    ]);
  });

  it("warns when no plugin serves a bound channel kind on the local broker, not with NATS", async () => {
    const files = {
      "agents.yaml": `agents:
  - id: ana
    model: { provider: scripted, model: m }
    inbound_bindings: [{ plugin: chat }, { plugin: telegram, instance: main }]
`,
      "plugins.yaml": "plugins:\n  - dir: chat\n",
      "chat/nexo-plugin.toml": CHANNEL_PLUGIN,
    };
    const local = await report(files);
    assert.deepEqual(local.problems, []);
    assert.ok(local.config !== undefined);
    assert.deepEqual(local.warnings, [
      'warning: agents.yaml:4:42: agents[0].inbound_bindings[1]: no enabled plugin serves channel kind "telegram", so this binding (telegram (instance "main")) receives nothing with the local broker',
    ]);
    const nats = await report({
      ...files,
      "broker.yaml": "broker: { type: nats, url: nats://127.0.0.1:4222 }\n",
    });
    assert.deepEqual(nats.warnings, []);
  });

  it("warns when no agent would answer (issue 14.12)", async () => {
    const none = await report({ "agents.yaml": "agents: []\n" });
    assert.deepEqual(none.problems, []);
    assert.deepEqual(none.warnings, [
      "warning: agents.yaml:1:1: agents: no agents: the daemon starts, but no message is ever answered (add one under agents:)",
    ]);
    const inactive = await report({
      "agents.yaml": "agents:\n  - id: ana\n    active: false\n    model: { provider: scripted, model: m }\n",
    });
    assert.equal(inactive.warnings.length, 1);
    assert.match(inactive.warnings[0]!, /none of the 1 agents is active: no message is ever answered/);
  });

  it("warns when an active agent's provider has no API key, naming the variable (issue 14.2)", async () => {
    const agents = "agents:\n  - id: ana\n    model: { provider: anthropic, model: claude-sonnet-5 }\n";
    const keyless = await report(
      { "agents.yaml": agents, "llm.yaml": LLM },
      { ANTHROPIC_API_KEY: undefined },
    );
    assert.deepEqual(keyless.problems, []);
    assert.deepEqual(keyless.warnings, [
      'warning: agents.yaml:3:14: agents[0].model.provider: provider "anthropic" has no API key, so every turn of agent "ana" will fail: set ANTHROPIC_API_KEY in the daemon\'s environment (llm.yaml reads the key from it)',
    ]);
    const ownVariable = await report({
      "agents.yaml": agents,
      "llm.yaml": 'providers:\n  anthropic: { type: anthropic, api_key: "${TEAM_CLAUDE_KEY:-}" }\n',
    });
    assert.match(ownVariable.warnings.join("\n"), /set TEAM_CLAUDE_KEY in the daemon's environment/);
    const literalEmpty = await report({
      "agents.yaml": agents,
      "llm.yaml": "providers:\n  anthropic: { type: anthropic }\n",
    });
    assert.match(
      literalEmpty.warnings.join("\n"),
      /set api_key for "anthropic" in llm\.yaml, e\.g\. api_key: \$\{ANTHROPIC_API_KEY\}/,
    );
    const withKey = await report(
      { "agents.yaml": agents, "llm.yaml": LLM },
      { ANTHROPIC_API_KEY: "sk-test" },
    );
    assert.deepEqual(withKey.warnings, []);
    const local = await report({
      "agents.yaml": "agents:\n  - id: ana\n    model: { provider: local, model: llama3 }\n",
      "llm.yaml": "providers:\n  local: { type: openai_compatible, base_url: http://127.0.0.1:11434 }\n",
    });
    assert.deepEqual(local.warnings, [], "a local server needs no key");
  });
});
