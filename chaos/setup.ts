/**
 * The daemon the attacks run against: a real config directory (one agent on the mock LLM, bound
 * to the example loopback channel plugin, plus whatever plugins an attack adds), a fresh state
 * directory, and a real `nexo start` on it. Every plugin carries a marker in its environment so
 * that whatever the daemon leaves behind can be found.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MockLlmServer, type MockScriptInput } from "@nexo/mock-llm";
import { EXAMPLE_PLUGINS } from "../packages/nexo/test/helpers/daemon-dir.js";
import {
  type DaemonProcess,
  type DaemonProcessOptions,
  startDaemonProcess,
} from "../packages/nexo/test/helpers/daemon-process.js";
import { type Attack, killMarked } from "./lib.js";

export interface ChaosDaemonConfig {
  dir: string;
  stateDir: string;
  workspace: string;
  /** `CHAOS_MARKER=<uuid>`: in every plugin's environment. */
  marker: string;
  mock: MockLlmServer;
  start(options?: Partial<DaemonProcessOptions>): Promise<DaemonProcess>;
}

export interface PluginEntry {
  dir: string;
  env?: Record<string, string>;
  /** plugins.yaml's `restart:` as YAML flow text. */
  restart?: string;
}

export async function chaosDaemon(
  attack: Attack,
  options: {
    script: MockScriptInput;
    plugins?: PluginEntry[];
    /** Added to the agent's YAML (indented under it). */
    agentExtra?: string[];
    daemonYaml?: string;
  },
): Promise<ChaosDaemonConfig> {
  const mock = new MockLlmServer({ script: options.script });
  await mock.start();
  attack.defer(() => mock.close());
  const dir = attack.tempDir("cfg");
  const stateDir = attack.tempDir("state");
  const workspace = join(dir, "workspace");
  mkdirSync(workspace);
  const marker = `CHAOS_MARKER=${randomUUID()}`;
  attack.defer(() => killMarked(marker));
  const markerValue = marker.slice("CHAOS_MARKER=".length);
  writeFileSync(
    join(dir, "llm.yaml"),
    [
      "providers:",
      "  mock:",
      "    type: anthropic",
      '    api_key: "${ANTHROPIC_API_KEY}"',
      `    base_url: ${mock.url}`,
      "    retry: { max_retries: 0 }",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "agents.yaml"),
    [
      "agents:",
      "  - id: ana",
      "    model: { provider: mock, model: claude-chaos }",
      "    workspace: ./workspace",
      "    inbound_bindings: [{ plugin: loopback }]",
      ...(options.agentExtra ?? []).map((line) => `    ${line}`),
    ].join("\n"),
  );
  const plugins: PluginEntry[] = [
    { dir: join(EXAMPLE_PLUGINS, "loopback-channel") },
    ...(options.plugins ?? []),
  ];
  writeFileSync(
    join(dir, "plugins.yaml"),
    [
      "plugins:",
      ...plugins.flatMap((plugin) => [
        `  - dir: ${plugin.dir}`,
        `    env: ${JSON.stringify({ ...plugin.env, CHAOS_MARKER: markerValue })}`,
        ...(plugin.restart ? [`    restart: ${plugin.restart}`] : []),
      ]),
    ].join("\n"),
  );
  writeFileSync(join(dir, "daemon.yaml"), options.daemonYaml ?? "http: { bind: 127.0.0.1:0 }\n");
  return {
    dir,
    stateDir,
    workspace,
    marker,
    mock,
    async start(extra = {}) {
      const daemon = await startDaemonProcess({
        config: dir,
        stateDir,
        ...extra,
        env: { ANTHROPIC_API_KEY: "chaos-placeholder-key", ...extra.env },
      });
      attack.defer(() => daemon.stop("SIGKILL"));
      return daemon;
    },
  };
}
