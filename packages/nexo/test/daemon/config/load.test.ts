/**
 * loadDaemonConfig on a real directory holding every file nexo reads: values, defaults, paths
 * resolved against the directory, `${VAR}` substitution, the plugin manifests read, and what the
 * plugin manager is handed.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, it } from "node:test";
import { ConfigError } from "../../../src/config/index.js";
import {
  agentSystemPrompt,
  DaemonConfigError,
  inspectDaemonConfig,
  isLoopbackHost,
  loadDaemonConfig,
  parseBind,
  pluginEnvironment,
  pluginLaunchPlan,
  toolAllowed,
} from "../../../src/daemon/config/index.js";

function configDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-daemon-config-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const CHAT_PLUGIN = `[plugin]
id = "chat"
version = "0.1.0"
name = "Chat"
description = "A channel and a provider"
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = "node"
args = ["plugin.mjs"]

[[plugin.channels.register]]
kind = "chat"
adapter = "Chat"

[plugin.extends]
channels = ["chat"]
llm_providers = ["chat_llm"]
`;

const FULL = {
  "agents.yaml": `agents:
  - id: ana
    tenant_id: acme
    description: Front desk
    model: { provider: anthropic, model: claude-sonnet-5 }
    system_prompt: You answer questions about Acme.
    language: Spanish
    allowed_tools: [read, "mcp__files__*"]
    inbound_bindings:
      - { plugin: chat, instance: main }
    workspace: ./work/ana
    approval: { mode: auto_edit, allow: [exec, memory_store] }
    max_turns: 8
    max_tokens: 2048
    config: { queue_cap: 4 }
  - id: bob
    active: false
    model: { provider: chat_llm, model: tiny }
    inbound_bindings: [{ plugin: chat, instance: main }]
  - id: cleo
    model: { provider: scripted, model: echo }
`,
  "llm.yaml": `providers:
  anthropic:
    type: anthropic
    api_key: \${TEST_ANTHROPIC_KEY}
tenants:
  acme:
    providers:
      local: { type: openai_compatible, base_url: "http://localhost:11434" }
`,
  "broker.yaml": `broker:
  type: nats
  url: nats://127.0.0.1:4222
  creds_file: secrets/nexo.creds
`,
  "plugins.yaml": `plugins:
  - dir: plugins/chat
    grants: { memory_agents: [ana], llm_providers: [anthropic] }
    env: { CHAT_PORT: 8080, CHAT_DEBUG: true }
    passthrough_env: [CHAT_TOKEN]
    restart: { max_restarts: 2, initial_delay_ms: 100, max_delay_ms: 1000 }
  - dir: plugins/gone
    enabled: false
sandbox:
  require: false
  allow_host_network: true
`,
  "mcp.yaml": `servers:
  files:
    transport: stdio
    command: node
    cwd: servers/files
`,
  "memory.yaml": `long_term:
  enabled: true
  recall: { default_limit: 3, max_limit: 20 }
`,
  "tenants.yaml": `tenants:
  - id: acme
    display_name: Acme Inc.
    created_at: "2024-05-01T10:00:00Z"
    llm_provider_refs: [anthropic, local]
    metadata: { plan: pro }
`,
  "daemon.yaml": `state_dir: ./state
http:
  bind: 0.0.0.0:9100
  token: \${TEST_HTTP_TOKEN}
shutdown_grace_ms: 2500
`,
  "plugins/chat/nexo-plugin.toml": CHAT_PLUGIN,
};

const ENV = {
  PATH: process.env.PATH,
  TEST_ANTHROPIC_KEY: "sk-ant-test",
  TEST_HTTP_TOKEN: "0123456789abcdef0123",
};

describe("loadDaemonConfig on a full directory", () => {
  it("reads every file, fills defaults and resolves paths against the directory", async () => {
    const dir = configDir(FULL);
    const config = await loadDaemonConfig(dir, { env: ENV });
    assert.equal(config.dir, dir);
    assert.deepEqual(
      config.files,
      ["agents", "llm", "broker", "plugins", "mcp", "memory", "tenants", "daemon"].map((name) =>
        join(dir, `${name}.yaml`),
      ),
    );
    assert.deepEqual(config.warnings, []);

    const [ana, bob, cleo] = config.agents;
    assert.ok(ana && bob && cleo);
    assert.equal(ana.tenant_id, "acme");
    assert.deepEqual(ana.model, { provider: "anthropic", model: "claude-sonnet-5" });
    assert.equal(ana.workspace, join(dir, "work", "ana"));
    assert.deepEqual(ana.approval, { mode: "auto_edit", allow: ["exec", "memory_store"] });
    assert.equal(ana.max_turns, 8);
    assert.equal(ana.max_tokens, 2048);
    assert.deepEqual(ana.config, { queue_cap: 4 });
    assert.equal(agentSystemPrompt(ana), "You answer questions about Acme.\n\nAlways reply in Spanish.");
    assert.equal(bob.active, false);
    // Defaults: active, no tenant, every tool, no bindings, workspace under the state dir.
    assert.equal(cleo.active, true);
    assert.equal(cleo.tenant_id, undefined);
    assert.equal(cleo.allowed_tools, undefined);
    assert.deepEqual(cleo.inbound_bindings, []);
    assert.equal(cleo.workspace, join(dir, "state", "workspaces", "cleo"));
    assert.deepEqual(cleo.approval, { mode: "default", allow: [] });
    assert.equal(cleo.max_turns, 30);
    assert.equal(cleo.max_tokens, 8192);
    assert.deepEqual(cleo.config, { queue_cap: 32 });

    assert.equal(config.llm.providers.anthropic?.api_key, "sk-ant-test");
    assert.deepEqual(Object.keys(config.llm.tenants), ["acme"]);
    assert.deepEqual(config.broker, {
      type: "nats",
      url: "nats://127.0.0.1:4222",
      creds_file: join(dir, "secrets", "nexo.creds"),
    });
    const files = config.mcp.servers.files;
    assert.equal(files?.transport === "stdio" ? files.cwd : undefined, join(dir, "servers", "files"));
    assert.deepEqual(config.memory, {
      long_term: { enabled: true, recall: { default_limit: 3, max_limit: 20 } },
    });
    assert.equal(config.tenants[0]?.display_name, "Acme Inc.");
    assert.equal(config.tenants[0]?.active, true);
    assert.deepEqual(config.daemon, {
      state_dir: join(dir, "state"),
      http: {
        enabled: true,
        bind: "0.0.0.0:9100",
        host: "0.0.0.0",
        port: 9100,
        token: "0123456789abcdef0123",
      },
      shutdown_grace_ms: 2500,
      agent_events: { retention_days: 30 },
    });
  });

  it("reads the enabled plugins' manifests and hands the manager their settings by id", async () => {
    const dir = configDir(FULL);
    const config = await loadDaemonConfig(dir, { env: ENV });
    const [chat, gone] = config.plugins.plugins;
    assert.equal(chat?.dir, join(dir, "plugins", "chat"));
    assert.equal(chat?.manifest?.id, "chat");
    assert.deepEqual(chat?.manifest?.channelKinds, ["chat"]);
    assert.equal(gone?.enabled, false);
    assert.equal(gone?.manifest, undefined);

    const plan = pluginLaunchPlan(config.plugins);
    assert.deepEqual(plan.plugins, [join(dir, "plugins", "chat", "nexo-plugin.toml")]);
    assert.deepEqual(plan.settings, {
      chat: {
        grants: { memory_agents: ["ana"], llm_providers: ["anthropic"] },
        env: { CHAT_PORT: "8080", CHAT_DEBUG: "true" },
        passthroughEnv: ["CHAT_TOKEN"],
        restart: { maxRestarts: 2, initialDelayMs: 100, maxDelayMs: 1000 },
      },
    });
    const env = pluginEnvironment(config.plugins.sandbox, { PATH: "/bin" });
    assert.deepEqual(env, { PATH: "/bin", NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW: "1" });
  });

  it("needs only agents.yaml: every other file has defaults", async () => {
    const dir = configDir({
      "agents.yaml": "agents:\n  - id: solo\n    model: { provider: scripted, model: echo }\n",
    });
    const config = await loadDaemonConfig(dir, { env: { NEXO_STATE_DIR: "/srv/nexo-state" } });
    assert.deepEqual(config.files, [join(dir, "agents.yaml")]);
    assert.deepEqual(config.broker, { type: "local" });
    assert.deepEqual(config.llm, { providers: {}, tenants: {} });
    assert.deepEqual(config.plugins.plugins, []);
    assert.deepEqual(config.mcp.servers, {});
    assert.deepEqual(config.memory, {
      long_term: { enabled: true, recall: { default_limit: 5, max_limit: 50 } },
    });
    assert.deepEqual(config.tenants, []);
    assert.equal(config.daemon.state_dir, "/srv/nexo-state");
    assert.equal(config.agents[0]?.workspace, "/srv/nexo-state/workspaces/solo");
    assert.deepEqual(config.daemon.http, {
      enabled: true,
      bind: "127.0.0.1:7780",
      host: "127.0.0.1",
      port: 7780,
    });
    assert.equal(config.daemon.shutdown_grace_ms, 10_000);
  });

  it("accepts .yml and .toml spellings of the known names", async () => {
    const dir = configDir({
      "agents.yml": "agents:\n  - id: solo\n    model: { provider: scripted, model: echo }\n",
      "broker.toml": '[broker]\ntype = "local"\nqueue_depth = 64\n',
    });
    const config = await loadDaemonConfig(dir, { env: {} });
    assert.deepEqual(config.broker, { type: "local", queue_depth: 64 });
    assert.deepEqual(config.files, [join(dir, "agents.yml"), join(dir, "broker.toml")]);
  });

  it("returns unknown files as warnings, not errors", async () => {
    const dir = configDir({
      "agents.yaml": "agents: []\n",
      "agent.yaml": "agents: []\n",
      "notes.txt": "not config at all",
      ".agents.yaml.tmp-1-abc": "half written",
    });
    const config = await loadDaemonConfig(dir, { env: {} });
    assert.deepEqual(
      config.warnings.map((warning) => warning.file),
      [join(dir, "agent.yaml"), join(dir, "agents.yaml")],
    );
    // The second one: an empty agents list answers nobody (issue 14.12).
    assert.match(
      config.warnings[1]?.message ?? "",
      /no agents: the daemon starts, but no message is ever answered/,
    );
    assert.match(
      config.warnings[0]?.message ?? "",
      /not a file nexo reads, ignored \(known: agents\.yaml, llm\.yaml/,
    );
  });

  it("throws one ConfigError holding the problems of every file, and keeps the warnings", async () => {
    const dir = configDir({
      "agents.yaml": "agents:\n  - id: Ana\n    model: { provider: scripted, model: echo }\n",
      "daemon.yaml": "shutdown_grace_ms: -1\n",
      "extra.yaml": "x: 1\n",
    });
    const error = await loadDaemonConfig(dir, { env: {} }).then(
      () => assert.fail("expected a ConfigError"),
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof DaemonConfigError);
    assert.ok(error instanceof ConfigError);
    assert.deepEqual(
      error.issues.map((issue) => `${issue.file}:${issue.line}:${issue.column}: ${issue.keyPath}`),
      [`${join(dir, "agents.yaml")}:2:5: agents[0].id`, `${join(dir, "daemon.yaml")}:1:1: shutdown_grace_ms`],
    );
    assert.equal(error.warnings.length, 1);
  });

  it("refuses an unquoted id too long for YAML to keep exact, and keeps a quoted one", async () => {
    const agents = "agents:\n  - id: ana\n    model: { provider: scripted, model: echo }\n";
    const dir = configDir({
      "agents.yaml": agents,
      "plugins.yaml":
        "plugins:\n  - dir: plugins/chat\n    env: { DISCORD_ALLOWED_USERS: 123456789012345678 }\n",
      "plugins/chat/nexo-plugin.toml": CHAT_PLUGIN,
    });
    const error = await loadDaemonConfig(dir, { env: { PATH: process.env.PATH } }).then(
      () => assert.fail("expected a ConfigError"),
      (thrown: unknown) => thrown as DaemonConfigError,
    );
    assert.deepEqual(
      error.issues.map((issue) => [issue.keyPath, issue.message]),
      [
        [
          "plugins[0].env.DISCORD_ALLOWED_USERS",
          "123456789012345680 is too long a number for YAML to keep exact (an id?): write it in quotes",
        ],
      ],
    );
    const quoted = configDir({
      "agents.yaml": agents,
      "plugins.yaml":
        'plugins:\n  - dir: plugins/chat\n    env: { DISCORD_ALLOWED_USERS: "123456789012345678" }\n',
      "plugins/chat/nexo-plugin.toml": CHAT_PLUGIN,
    });
    const config = await loadDaemonConfig(quoted, { env: { PATH: process.env.PATH } });
    assert.equal(config.plugins.plugins[0]?.env.DISCORD_ALLOWED_USERS, "123456789012345678");
  });

  it("reports a missing agents.yaml and a missing directory", async () => {
    const dir = configDir({ "llm.yaml": "providers: {}\n" });
    const report = await inspectDaemonConfig(dir, { env: {} });
    assert.equal(report.config, undefined);
    assert.deepEqual(report.issues, [
      {
        code: "io",
        file: join(dir, "agents.yaml"),
        message: "missing: every config directory needs an agents.yaml (agents: [...])",
      },
    ]);
    const missing = await inspectDaemonConfig(join(dir, "nope"), { env: {} });
    assert.deepEqual(missing.issues, [{ code: "io", file: join(dir, "nope"), message: "no such directory" }]);
  });
});

describe("allowed_tools", () => {
  it("matches exact names and trailing-* globs; absent means every tool", () => {
    assert.equal(toolAllowed(undefined, "bash"), true);
    assert.equal(toolAllowed(["read", "mcp__files__*"], "read"), true);
    assert.equal(toolAllowed(["read", "mcp__files__*"], "mcp__files__list"), true);
    assert.equal(toolAllowed(["read", "mcp__files__*"], "mcp__github__list"), false);
    assert.equal(toolAllowed(["read"], "read_more"), false);
    assert.equal(toolAllowed([], "read"), false);
  });
});

describe("http.bind", () => {
  it("parses host:port and [v6]:port and knows which hosts are loopback", () => {
    assert.deepEqual(parseBind("127.0.0.1:7780"), { ok: true, value: { host: "127.0.0.1", port: 7780 } });
    assert.deepEqual(parseBind("[::1]:0"), { ok: true, value: { host: "::1", port: 0 } });
    assert.deepEqual(parseBind("metrics.internal:9000"), {
      ok: true,
      value: { host: "metrics.internal", port: 9000 },
    });
    assert.equal(parseBind("::1:7780").ok, false);
    assert.equal(parseBind("[example.com]:1").ok, false);
    assert.equal(parseBind("host name:1").ok, false);
    for (const host of [
      "127.0.0.1",
      "127.5.0.1",
      "::1",
      "0:0:0:0:0:0:0:1",
      "::ffff:127.0.0.1",
      "LOCALHOST",
    ]) {
      assert.equal(isLoopbackHost(host), true, host);
    }
    for (const host of ["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "localhost.example.com"]) {
      assert.equal(isLoopbackHost(host), false, host);
    }
  });
});
