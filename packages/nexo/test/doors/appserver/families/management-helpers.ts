/**
 * A config directory for the management families' tests, and a `nexo app-server --config DIR`
 * serving it over stdio (the standalone facade: files edited, nothing of them running), or
 * `nexo start --config DIR` serving appserver.yaml's WebSocket (the daemon: everything running).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppServerProcess, WsClient } from "../../../helpers/appserver-client.js";
import { CLI_PATH } from "../../../helpers/cli.js";

export const AGENTS_YAML = `# the team's agents
agents:
  - id: helper # the one people talk to
    model: { provider: scripted, model: scripted-1 }
    description: answers questions
  - id: reviewer
    active: false
    model: { provider: main, model: claude-test }
`;

export const LLM_YAML = `providers:
  main: # the house account
    type: anthropic
    api_key: \${ANTHROPIC_API_KEY}
    default_model: claude-default
`;

export const MCP_YAML = `# servers the agents may use
servers:
  files: # keep this one
    transport: stdio
    command: node
    args: [server.js]
`;

export interface ConfigDir {
  dir: string;
  read(name: string): string;
  write(name: string, text: string): void;
}

export function configDir(files: Record<string, string>): ConfigDir {
  const dir = mkdtempSync(join(tmpdir(), "nexo-as-mgmt-cfg-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return {
    dir,
    read: (name) => readFileSync(join(dir, name), "utf8"),
    write: (name, text) => writeFileSync(join(dir, name), text),
  };
}

/** An initialized stdio server over `config` (or none). */
export async function managedServer(
  config: ConfigDir | undefined,
  processes: AppServerProcess[],
): Promise<{ server: AppServerProcess; capabilities: Record<string, unknown> }> {
  const server = new AppServerProcess({
    args: config === undefined ? [] : ["--config", config.dir],
    env: { ANTHROPIC_API_KEY: "sk-test-secret-value", DOCS_TOKEN: "docs-secret" },
  });
  processes.push(server);
  const reply = await server.initialize();
  const result = reply.result as { capabilities: Record<string, unknown> };
  return { server, capabilities: result.capabilities };
}

const DAEMON_TOKEN = "management-daemon-token-0123456789";

export interface DaemonAppServer {
  config: ConfigDir;
  /** An initialized WebSocket client of the daemon's AppServer. */
  client: WsClient;
  capabilities: Record<string, unknown>;
}

/**
 * `nexo start --config DIR` (the built CLI) with `files` plus a daemon.yaml and an appserver.yaml
 * for agent `agent`, and an initialized WebSocket client. `cleanups` stops both (SIGTERM, so the
 * daemon stops its plugins and MCP servers too; SIGKILL only if it hangs).
 */
export async function daemonServer(
  files: Record<string, string>,
  agent: string,
  cleanups: Array<() => void | Promise<void>>,
  capabilities: Record<string, unknown> = {},
): Promise<DaemonAppServer> {
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-as-mgmt-state-"));
  const config = configDir({
    "daemon.yaml": `state_dir: ${stateDir}\nhttp: { enabled: false }\n`,
    "appserver.yaml": `listen: ws://127.0.0.1:0\ntoken: ${DAEMON_TOKEN}\nagent: ${agent}\n`,
    ...files,
  });
  const child = spawn(process.execPath, [CLI_PATH, "start", "--config", config.dir], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NEXO_LOG: "info",
      // The example plugins start through tsx; on a loaded machine that outlasts the default 5 s.
      NEXO_PLUGIN_INIT_TIMEOUT_MS: "30000",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  cleanups.push(async () => {
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await closed;
    clearTimeout(killer);
  });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no AppServer line:\n${stderr}`)), 60_000);
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const match =
        /"msg":"AppServer listening"[^\n]*"url":"([^"]+)"|"url":"([^"]+)"[^\n]*"msg":"AppServer listening"/.exec(
          stderr,
        );
      if (match) {
        clearTimeout(timer);
        resolve((match[1] ?? match[2])!);
      }
    });
    child.once("close", () => reject(new Error(`nexo start exited:\n${stderr}`)));
  });
  const client = new WsClient(`${url}?token=${DAEMON_TOKEN}`);
  cleanups.push(() => client.close());
  await client.opened;
  const init = await client.initialize(capabilities);
  const result = init.result as { capabilities: Record<string, unknown> };
  return { config, client, capabilities: result.capabilities };
}
