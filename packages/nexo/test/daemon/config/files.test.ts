/**
 * The typical mistakes in each config file, as an operator reads them: `file:line:col: key path:
 * message`, every problem of every file in one report.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { after, describe, it } from "node:test";
import { formatIssue } from "../../../src/config/index.js";
import { inspectDaemonConfig } from "../../../src/daemon/config/index.js";

const AGENT = "agents:\n  - id: ana\n    model: { provider: scripted, model: echo }\n";

function configDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-daemon-config-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries({ "agents.yaml": AGENT, ...files })) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** The report's problems as printed, file names relative to the config dir, other mentions of it `<dir>`. */
async function problems(files: Record<string, string>, env: Record<string, string | undefined> = {}) {
  const dir = configDir(files);
  const report = await inspectDaemonConfig(dir, { env: { PATH: process.env.PATH, ...env } });
  assert.equal(report.config === undefined, report.issues.length > 0);
  return report.issues.map((issue) =>
    formatIssue({ ...issue, file: relative(dir, issue.file ?? dir) }).replaceAll(dir, "<dir>"),
  );
}

const manifest = (id: string, extra = "") => `[plugin]
id = "${id}"
version = "0.1.0"
name = "P"
description = "A test plugin"
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = "node"
${extra}`;

describe("agents.yaml mistakes", () => {
  it("reports typos, bad values and missing keys at their lines", async () => {
    const found = await problems({
      "agents.yaml": `agents:
  - id: Ana
    modle: x
    model: { model: m }
    allowed_tools: ["re*ad", "mcp__*"]
    approval: { mode: auto, allow: [exec, "rm -rf"] }
    inbound_bindings:
      - plugin: Telegram
      - plugin: chat
        instance: a.b
    workspace: ""
    max_turns: 0
    config: { queue_cap: 100000, debounce_ms: 5 }
`,
    });
    assert.deepEqual(found, [
      "agents.yaml:2:5: agents[0].id: agent ids are 1-64 chars of a-z, 0-9, '_' and '-', starting with a letter",
      'agents.yaml:3:5: agents[0].modle: unknown key "modle" (did you mean "model"?)',
      "agents.yaml:4:5: agents[0].model.provider: missing (expected string)",
      'agents.yaml:5:21: agents[0].allowed_tools[0]: "re*ad" is neither a tool name (A-Z a-z 0-9 _ -) nor a name prefix ending in one "*"',
      'agents.yaml:6:17: agents[0].approval.mode: expected one of default|auto_edit|yolo, got "auto"',
      'agents.yaml:6:43: agents[0].approval.allow[1]: "rm -rf" is neither a tool name nor a category (info, edit, exec, mcp)',
      "agents.yaml:8:9: agents[0].inbound_bindings[0].plugin: must match ^[a-z][a-z0-9_]{0,31}$ (lowercase slug, max 32 chars)",
      'agents.yaml:10:9: agents[0].inbound_bindings[1].instance: an instance is one topic token: no ".", "*", ">" or whitespace',
      "agents.yaml:11:5: agents[0].workspace: Too small: expected string to have >=1 characters",
      "agents.yaml:12:5: agents[0].max_turns: Too small: expected number to be >=1",
      "agents.yaml:13:15: agents[0].config.queue_cap: Too big: expected number to be <=10000",
      'agents.yaml:13:34: agents[0].config.debounce_ms: unknown key "debounce_ms"',
    ]);
  });

  it("refuses duplicate ids and a binding owned twice, also next to other mistakes", async () => {
    const found = await problems({
      "agents.yaml": `agents:
  - id: ana
    model: { provider: scripted, model: m }
    inbound_bindings: [{ plugin: chat }, { plugin: chat, instance: main }]
  - id: bob
    model: { provider: scripted, model: m }
    inbound_bindings:
      - { plugin: chat, instance: main }
      - { plugin: chat, instance: other }
      - { plugin: chat, instance: other }
  - id: ana
    model: { provider: scripted }
  - id: cleo
    active: false
    model: { provider: scripted, model: m }
    inbound_bindings: [{ plugin: chat }]
`,
    });
    assert.deepEqual(found, [
      'agents.yaml:8:9: agents[1].inbound_bindings[0]: chat (instance "main") is bound to both agent "ana" (agents[0].inbound_bindings[1]) and agent "bob"; a message is routed to one agent only, so deactivate one or give them different instances',
      'agents.yaml:10:9: agents[1].inbound_bindings[2]: chat (instance "other") is listed twice for agent "bob" (also agents[1].inbound_bindings[1])',
      'agents.yaml:11:5: agents[2].id: duplicate agent id "ana" (also agents[0])',
      "agents.yaml:12:5: agents[2].model.model: missing (expected string)",
    ]);
  });

  it("needs the agents list itself", async () => {
    assert.deepEqual(await problems({ "agents.yaml": "agent:\n  - id: ana\n" }), [
      "agents.yaml:1:1: agents: missing (expected array)",
      'agents.yaml:1:1: agent: unknown key "agent" (did you mean "agents"?)',
    ]);
  });
});

describe("llm.yaml, broker.yaml and mcp.yaml mistakes", () => {
  it("reports them with the schemas of their subsystems, placeholders at their values", async () => {
    const found = await problems({
      "llm.yaml": `providers:
  main:
    type: antropic
  local:
    type: openai_compatible
  claude:
    type: anthropic
    api_key: \${NOT_SET_KEY}
`,
      "broker.yaml": "broker:\n  type: nats\n  user: nexo\n",
      "mcp.yaml": "servers:\n  web:\n    transport: sse\n    url: http://localhost:1\n",
    });
    assert.deepEqual(found, [
      // Missing keys point at the mapping that should hold them.
      "broker.yaml:1:1: broker.url: give exactly one of url and servers",
      "broker.yaml:1:1: broker.pass: user and pass go together",
      'llm.yaml:3:5: providers.main.type: expected one of anthropic|openai|openai_compatible|scripted, got "antropic"',
      "llm.yaml:4:3: providers.local.base_url: base_url is required for an openai_compatible provider (e.g. http://localhost:11434 for Ollama)",
      "llm.yaml:8:14: providers.claude.api_key: environment variable NOT_SET_KEY is not set (used as ${NOT_SET_KEY})",
      'mcp.yaml:3:5: servers.web.transport: transport "sse" (the older HTTP+SSE transport) is not supported; use "streamable_http"',
    ]);
  });

  it("explains a broker.yaml written without its broker: key", async () => {
    assert.deepEqual(
      await problems({ "broker.yaml": "type: nats\nurl: nats://127.0.0.1:4222\nbrokr: {}\n" }),
      [
        'broker.yaml:1:1: type: unknown key "type" (broker settings go under a "broker:" key: broker: { type: ... })',
        'broker.yaml:2:1: url: unknown key "url" (broker settings go under a "broker:" key: broker: { url: ... })',
        'broker.yaml:3:1: brokr: unknown key "brokr"',
      ],
    );
  });
});

describe("plugins.yaml mistakes", () => {
  it("checks env names, grants, restart overrides and the plugin directories", async () => {
    const found = await problems({
      "plugins.yaml": `plugins:
  - dir: plugins/one
    env: { NEXO_STATE_DIR: /tmp, "BAD NAME": x, GOOD: 1 }
    passthrough_env: [HOME, NEXO_TOKEN]
    grants: { memory_agent: [ana] }
    restart: { initial_delay_ms: 5000, max_delay_ms: 100, jitter: 2 }
  - dir: plugins/missing
  - dir: ""
  - dir: ./plugins/one/
sandbox: { required: true }
`,
      "plugins/one/nexo-plugin.toml": manifest("one"),
    });
    assert.deepEqual(found, [
      'plugins.yaml:3:12: plugins[0].env.NEXO_STATE_DIR: "NEXO_STATE_DIR" is reserved: variables beginning with NEXO_ belong to the daemon',
      'plugins.yaml:3:34: plugins[0].env["BAD NAME"]: "BAD NAME" is not a variable name (letters, digits and _, not starting with a digit)',
      'plugins.yaml:4:29: plugins[0].passthrough_env[1]: "NEXO_TOKEN" is reserved: variables beginning with NEXO_ belong to the daemon',
      'plugins.yaml:5:15: plugins[0].grants.memory_agent: unknown key "memory_agent" (did you mean "memory_agents"?)',
      "plugins.yaml:6:40: plugins[0].restart.max_delay_ms: max_delay_ms (100) is smaller than initial_delay_ms (5000)",
      "plugins.yaml:6:59: plugins[0].restart.jitter: Too big: expected number to be <=1",
      "plugins.yaml:8:5: plugins[2].dir: must not be empty",
      'plugins.yaml:10:12: sandbox.required: unknown key "required" (did you mean "require"?)',
    ]);
  });

  it("reads each enabled plugin's manifest and reports its problems at its own lines", async () => {
    const found = await problems({
      "plugins.yaml": `plugins:
  - dir: plugins/one
  - dir: plugins/missing
  - dir: ./plugins/one/
  - dir: plugins/twin
  - dir: plugins/broken
  - dir: plugins/also-missing
    enabled: false
`,
      "plugins/one/nexo-plugin.toml": manifest("one"),
      "plugins/twin/nexo-plugin.toml": manifest("one"),
      "plugins/broken/nexo-plugin.toml": manifest("Broken"),
    });
    assert.deepEqual(found, [
      "plugins.yaml:3:5: plugins[1].dir: no such plugin directory or manifest file: <dir>/plugins/missing",
      "plugins.yaml:4:5: plugins[2].dir: the same plugin as plugins[0] (<dir>/plugins/one/nexo-plugin.toml)",
      'plugins.yaml:5:5: plugins[3].dir: plugin id "one" is already loaded by plugins[0]',
      "plugins/broken/nexo-plugin.toml:2:1: plugin.id: must match ^[a-z][a-z0-9_]{0,31}$ (lowercase slug, max 32 chars)",
    ]);
  });

  it("checks restart overrides against the manifest's own policy", async () => {
    const found = await problems({
      "plugins.yaml": `plugins:
  - dir: plugins/slow
    restart: { initial_delay_ms: 100000 }
  - dir: plugins/fine
    restart: { initial_delay_ms: 100000, max_delay_ms: 200000 }
`,
      "plugins/slow/nexo-plugin.toml": manifest("slow"),
      "plugins/fine/nexo-plugin.toml": manifest("fine"),
    });
    assert.deepEqual(found, [
      'plugins.yaml:3:5: plugins[0].restart: initial_delay_ms (100000) is above the longest delay (32000, from the manifest of "slow"); set max_delay_ms as well',
    ]);
  });

  it("refuses an unsandboxed plugin when the sandbox is required, from the file or the environment", async () => {
    const files = {
      "plugins.yaml": "plugins:\n  - dir: plugins/open\n  - dir: plugins/boxed\nsandbox: { require: true }\n",
      "plugins/open/nexo-plugin.toml": manifest("open"),
      "plugins/boxed/nexo-plugin.toml": manifest(
        "boxed",
        '\n[plugin.sandbox]\nenabled = true\nnetwork = "deny"\n',
      ),
    };
    const expected =
      /^plugins\.yaml:2:5: plugins\[0\]\.dir: the sandbox is required \(sandbox\.require\), but plugin "open" does not enable it \(\[plugin\.sandbox\] enabled = true in <dir>\/plugins\/open\/nexo-plugin\.toml\)$/;
    const fromFile = await problems(files);
    assert.equal(fromFile.length, 1);
    assert.match(fromFile[0] ?? "", expected);
    const fromEnv = await problems(
      { ...files, "plugins.yaml": "plugins:\n  - dir: plugins/open\n  - dir: plugins/boxed\n" },
      { NEXO_PLUGIN_SANDBOX_REQUIRE: "1" },
    );
    assert.equal(fromEnv.length, 1);
    assert.match(fromEnv[0] ?? "", expected);
  });
});

describe("memory.yaml, tenants.yaml and daemon.yaml mistakes", () => {
  it("reports recall limits out of order and unknown keys", async () => {
    assert.deepEqual(
      await problems({
        "memory.yaml": "long_term:\n  enabeld: false\n  recall: { default_limit: 60, max_limit: 50 }\n",
      }),
      [
        'memory.yaml:2:3: long_term.enabeld: unknown key "enabeld" (did you mean "enabled"?)',
        "memory.yaml:3:13: long_term.recall.default_limit: default_limit (60) is larger than max_limit (50)",
      ],
    );
  });

  it("reports bad and duplicate tenant ids and a malformed created_at", async () => {
    assert.deepEqual(
      await problems({
        "tenants.yaml":
          "tenants:\n  - id: Acme\n  - id: beta\n    created_at: yesterday\n  - id: beta\n    name: Beta\n",
      }),
      [
        "tenants.yaml:2:5: tenants[0].id: tenant ids are 1-64 chars of a-z, 0-9 and '-', not starting with '-'",
        "tenants.yaml:4:5: tenants[1].created_at: expected an ISO 8601 date-time, e.g. 2024-05-01T10:00:00Z",
        'tenants.yaml:5:5: tenants[2].id: duplicate tenant id "beta" (also tenants[1])',
        'tenants.yaml:6:5: tenants[2].name: unknown key "name"',
      ],
    );
  });

  it("requires a token for a non-loopback bind and checks the address", async () => {
    assert.deepEqual(
      await problems({ "daemon.yaml": "http:\n  bind: 0.0.0.0:7780\nshutdown_grace_ms: 1.5\n" }),
      [
        "daemon.yaml:1:1: http.token: binding to 0.0.0.0:7780 (not loopback) requires a token, e.g. token: ${NEXO_HTTP_TOKEN}",
        "daemon.yaml:3:1: shutdown_grace_ms: expected int, got 1.5",
      ],
    );
    assert.deepEqual(await problems({ "daemon.yaml": "http:\n  bind: localhost\n" }), [
      "daemon.yaml:2:3: http.bind: expected host:port (e.g. 127.0.0.1:7780 or [::1]:7780)",
    ]);
    assert.deepEqual(await problems({ "daemon.yaml": "http:\n  bind: '[::1]:70000'\n  token: short\n" }), [
      "daemon.yaml:2:3: http.bind: port 70000 is out of range (0-65535; 0 picks a free port)",
      "daemon.yaml:3:3: http.token: must be at least 16 characters",
    ]);
    // Loopback needs no token; a disabled listener needs none either.
    assert.deepEqual(await problems({ "daemon.yaml": "http:\n  bind: '[::1]:0'\n" }), []);
    assert.deepEqual(await problems({ "daemon.yaml": "http:\n  bind: localhost:7780\n" }), []);
    assert.deepEqual(
      await problems({ "daemon.yaml": "http:\n  enabled: false\n  bind: 10.0.0.5:7780\n" }),
      [],
    );
    // A token from the environment satisfies the rule.
    assert.deepEqual(
      await problems(
        { "daemon.yaml": "http:\n  bind: 10.0.0.5:7780\n  token: ${HTTP_TOKEN}\n" },
        { HTTP_TOKEN: "a-long-enough-secret" },
      ),
      [],
    );
  });
});

describe("the directory", () => {
  it("refuses two spellings of one file and reports syntax errors alone per file", async () => {
    const found = await problems({
      "llm.yaml": "providers: {}\n",
      "llm.yml": "providers: {}\n",
      "memory.yaml": "long_term:\n\tenabled: true\n",
    });
    assert.equal(found.length, 2);
    assert.equal(
      found[0],
      "llm.yml: llm.yaml is here too; keep one of the two (nexo would not know which to read)",
    );
    assert.match(found[1] ?? "", /^memory\.yaml:2:1: /);
  });
});

describe("malformed values", () => {
  it("are reported, never thrown, even where checks read values that failed the schema", async () => {
    const cases: Array<[string, string]> = [
      ["agents.yaml", "~"],
      ["agents.yaml", "agents: [~, 3, { id: ~ }, { id: ~ }]"],
      [
        "agents.yaml",
        "agents: [{ id: a, active: 3, inbound_bindings: [~, { plugin: 3 }, { plugin: a, instance: 3 }] }]",
      ],
      ["tenants.yaml", "~"],
      ["tenants.yaml", "tenants: [~, { id: 3 }, 7]"],
      ["daemon.yaml", "http: { bind: nope, extra: 1 }"],
      ["daemon.yaml", "http: { enabled: 3, bind: 3 }"],
      ["memory.yaml", "long_term: { recall: { default_limit: x, max_limit: 3, extra: 1 } }"],
      [
        "plugins.yaml",
        "plugins: [~, { dir: 3 }, { dir: x, restart: { initial_delay_ms: x, max_delay_ms: 1 } }]",
      ],
      ["broker.yaml", "broker: { type: nats, url: 3, extra: 1 }"],
    ];
    for (const [file, text] of cases) {
      const found = await problems({ [file]: `${text}\n` });
      assert.ok(found.length > 0, `${file}: ${text}`);
      assert.ok(
        found.every((line) => line.startsWith(`${file}:`)),
        `${file}: ${text}\n${found.join("\n")}`,
      );
    }
  });
});
