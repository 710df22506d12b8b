/**
 * What every channel's end-to-end test (`nexo start` with the compiled plugin) sets up the same way:
 * a config directory with one agent on @nexo/mock-llm bound to the channel's plugin, the daemon's
 * HTTP off, and the plugin entry the test describes; and the text of the last user message the
 * model was sent, to see what reached the agent.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "@nexo/mock-llm";

export interface ChannelDaemonConfig {
  /** The config directory `nexo start --config` reads. */
  config: string;
  stateDir: string;
  /** The mock model server's base URL (Anthropic format). */
  llmUrl: string;
  /** The plugin's kind, which the agent's inbound binding names. */
  plugin: string;
  /** The plugin's directory (its compiled build is what runs). */
  pluginDir: string;
  /** The YAML lines of the plugin entry after its `dir:` (env, restart…), indented four spaces. */
  pluginSettings: string;
}

export function writeChannelDaemonConfig(options: ChannelDaemonConfig): void {
  const { config } = options;
  writeFileSync(join(config, "daemon.yaml"), `state_dir: ${options.stateDir}\nhttp: { enabled: false }\n`);
  writeFileSync(
    join(config, "llm.yaml"),
    `providers:\n  mock:\n    type: anthropic\n    base_url: ${options.llmUrl}\n    api_key: sk-test\n`,
  );
  writeFileSync(
    join(config, "agents.yaml"),
    `agents:\n  - id: ana\n    model: { provider: mock, model: claude-test }\n    inbound_bindings: [{ plugin: ${options.plugin} }]\n`,
  );
  writeFileSync(
    join(config, "plugins.yaml"),
    `plugins:\n  - dir: ${options.pluginDir}\n${options.pluginSettings.replace(/\n?$/, "\n")}`,
  );
}

/** The content blocks of the last user message of a recorded model request (a string is one text block). */
export function lastUserContent(
  request: RecordedRequest | undefined,
): Array<{ type: string; text?: string }> {
  const messages =
    (request?.body as { messages?: Array<{ role: string; content: unknown }> })?.messages ?? [];
  const last = messages.filter((m) => m.role === "user").at(-1);
  if (typeof last?.content === "string") return [{ type: "text", text: last.content }];
  return (last?.content ?? []) as Array<{ type: string; text?: string }>;
}

/** The text of the last user message of a recorded model request. */
export function lastUserText(request: RecordedRequest | undefined): string {
  return lastUserContent(request)
    .map((block) => block.text ?? "")
    .join("\n");
}
