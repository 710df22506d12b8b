/**
 * The throwaway config directory a test daemon runs from: daemon.yaml (a state dir beside it, no
 * health listener), agents.yaml (by default one agent on nexo's offline scripted model),
 * extensions.yaml (the microapps under test with their grants and config), appserver.yaml (the
 * WebSocket door on a free loopback port behind a random token) and any file the test adds.
 * Everything lives under one temp directory, removed when the daemon stops.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** One microapp the daemon runs (an `extensions.yaml` entry). */
export interface MicroappUnderTest {
  /** Its executable (a script with `#!` and the executable bit, or a binary); `plugin.toml` beside it. */
  path: string;
  /** `capabilities_grant`: what the operator allows. Default none. */
  grants?: readonly string[];
  /** `config`, handed to the microapp in `initialize`. */
  config?: unknown;
  /** `timeout_secs`: the bound of each call the daemon makes to it. Default the daemon's (30). */
  timeoutSecs?: number;
}

export interface ConfigDirOptions {
  /** The microapps, keyed by extension id. */
  microapps: Readonly<Record<string, MicroappUnderTest>>;
  /** agents.yaml's whole text. Default: one agent `tester` on the scripted model. */
  agents?: string;
  /** The agent AppServer threads talk to. Default `tester`. */
  agent?: string;
  /** More config files by name (`llm.yaml`, `skills/tone/SKILL.md`, …); they win over the defaults. */
  files?: Readonly<Record<string, string>>;
}

export interface ConfigDir {
  /** The temp directory holding everything below. */
  root: string;
  config: string;
  state: string;
  /** The default agent's workspace. */
  workspace: string;
  /** The AppServer's token (appserver.yaml). */
  token: string;
  agent: string;
}

export const DEFAULT_TEST_AGENT = "tester";

/** Writes the directory; JSON is valid YAML, so values are written as JSON (quoting done right). */
export function writeConfigDir(options: ConfigDirOptions): ConfigDir {
  const root = mkdtempSync(join(tmpdir(), "nexo-microapp-test-"));
  const config = join(root, "config");
  const state = join(root, "state");
  const workspace = join(root, "workspace");
  for (const dir of [config, state, workspace]) mkdirSync(dir, { mode: 0o700 });
  const token = randomBytes(24).toString("hex");
  const agent = options.agent ?? DEFAULT_TEST_AGENT;
  const y = (value: unknown) => JSON.stringify(value);

  const entries: Record<string, Record<string, unknown>> = {};
  for (const [id, app] of Object.entries(options.microapps)) {
    const entry: Record<string, unknown> = {
      path: resolve(app.path),
      capabilities_grant: [...(app.grants ?? [])],
    };
    if (app.timeoutSecs !== undefined) entry.timeout_secs = app.timeoutSecs;
    if (app.config !== undefined) entry.config = app.config;
    entries[id] = entry;
  }
  const files: Record<string, string> = {
    "daemon.yaml": `state_dir: ${y(state)}\nhttp: { enabled: false }\n`,
    "agents.yaml": [
      "agents:",
      `  - id: ${y(DEFAULT_TEST_AGENT)}`,
      "    model: { provider: scripted, model: nexo-scripted-demo }",
      `    workspace: ${y(workspace)}`,
      "",
    ].join("\n"),
    "extensions.yaml": `${y({ extensions: { entries } })}\n`,
    "appserver.yaml": `listen: "ws://127.0.0.1:0"\ntoken: ${y(token)}\nagent: ${y(agent)}\n`,
    ...(options.agents === undefined ? {} : { "agents.yaml": options.agents }),
    ...options.files,
  };
  for (const [name, text] of Object.entries(files)) {
    const path = join(config, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  return { root, config, state, workspace, token, agent };
}
