/**
 * The config directory `nexo init` writes: commented files a newcomer can read top to bottom, valid
 * as written (the init command checks them with the same loader as `nexo start`). One agent, the
 * provider the person chose, an empty plugin list with the way to add one, and a private state dir
 * beside the files.
 */
import { DEFAULT_MODELS } from "../config/default-models.js";
import type { InitProvider } from "./choices.js";

/** The environment variable llm.yaml reads each vendor's key from. */
export const KEY_VARIABLE: Partial<Record<InitProvider, string>> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
};

export const DEFAULT_MODEL: Readonly<Record<InitProvider, string>> = DEFAULT_MODELS;

/** The llm.yaml name of each choice (the built-in `scripted` needs no entry). */
const PROVIDER_NAME: Record<InitProvider, string> = {
  anthropic: "anthropic",
  openai: "openai",
  ollama: "local",
  scripted: "scripted",
};

export interface InitAnswers {
  provider: InitProvider;
  model: string;
}

/** File name → content, relative to the config directory. */
export function configFiles({ provider, model }: InitAnswers): Record<string, string> {
  return {
    "agents.yaml": agentsYaml(PROVIDER_NAME[provider], model),
    "llm.yaml": llmYaml(provider),
    "daemon.yaml": DAEMON_YAML,
    "plugins.yaml": PLUGINS_YAML,
    ".gitignore": "# nexo's state: the database, stored secrets, logs. Never commit it.\nstate/\n",
    "workspace/README.md":
      "# The agent's workspace\n\nThe assistant's file tools work in this folder and nowhere else.\n",
  };
}

function agentsYaml(provider: string, model: string): string {
  return `# The agents of this directory. Every key is described in nexo's docs/configuration.md.
# Talk to them with:  nexo chat --config .   (or run the daemon: nexo start --config .)
agents:
  - id: assistant
    model:
      provider: ${provider}   # a provider of llm.yaml (or the built-in offline "scripted")
      model: ${model}
    system_prompt: |
      You are a helpful assistant. Be brief and say what you did.
    # Where the file tools (Read, Write, Edit, Glob, Grep) work; they cannot leave it.
    workspace: ./workspace
    # Read-only tools run without asking; writes and commands ask first (nexo chat shows the
    # question). On a chat channel nobody can answer, so list there what may run unasked.
    approval:
      mode: default
      allow: [info]
    # Model calls per message, tool rounds included.
    max_turns: 8
    # To answer on a channel plugin (Telegram, Slack, the loopback test channel, ...), bind it:
    # inbound_bindings:
    #   - plugin: telegram
`;
}

function llmYaml(provider: InitProvider): string {
  const header = `# The model providers agents can name. Keys are read from the environment (or from secrets
# stored in the state dir): \${VAR:-} leaves a provider without a key when VAR is unset, and
# \`nexo config validate .\` then warns. The offline "scripted" demo model is always available.
providers:
`;
  switch (provider) {
    case "anthropic":
      return `${header}  anthropic:
    type: anthropic
    api_key: \${ANTHROPIC_API_KEY:-}
`;
    case "openai":
      return `${header}  openai:
    type: openai
    api_key: \${OPENAI_API_KEY:-}
`;
    case "ollama":
      return `${header}  local:
    type: openai_compatible
    base_url: http://127.0.0.1:11434   # Ollama's default address
`;
    case "scripted":
      return `${header.replace("providers:\n", "")}providers: {}
# To use a real model, replace {} with an entry and point the agent at it, e.g.
#   anthropic:
#     type: anthropic
#     api_key: \${ANTHROPIC_API_KEY:-}
`;
  }
}

const DAEMON_YAML = `# The daemon itself. Everything has a default; these are the ones worth knowing.
# Its state (the database, stored secrets, logs) lives here, beside the config.
state_dir: ./state
# Health and metrics (/healthz, /readyz, /metrics) listen on loopback. A second daemon on the same
# machine needs its own port: 127.0.0.1:0 picks a free one.
# http:
#   bind: 127.0.0.1:7780
`;

const PLUGINS_YAML = `# Plugins: out-of-process extensions (channels, tools, providers, hooks) in any language.
# Add one by its directory (the one holding nexo-plugin.toml); \`nexo plugin new NAME\` makes one.
# plugins:
#   - dir: ./plugins/my-plugin
plugins: []
`;
