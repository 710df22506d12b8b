/**
 * A config directory for the management families' tests, and a `nexo app-server --config DIR`
 * serving it over stdio (the standalone facade: files edited, nothing of them running).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppServerProcess } from "../../../helpers/appserver-client.js";

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
