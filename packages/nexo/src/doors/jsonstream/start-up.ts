/**
 * What `nexo agent --json-stream` decides from its flags and the environment alone, before any
 * provider library, schema or store is loaded: which provider entry the flags describe, and the
 * capabilities `ready` announces. bootstrap.ts builds the session from these, and the fast start
 * (cli/agent-fast.ts) writes `ready` from them while the rest loads — so this file imports nothing
 * that costs start-up time, and each decision has one copy.
 */
import type { JsonStreamCapabilities } from "@nexo/wire/schemas/jsonstream";

/** A start-up problem: reported as `error{config_error}` before (or instead of) serving. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}

/** The flags of `nexo agent` that choose the provider. */
export interface ProviderFlags {
  provider?: string | undefined;
  baseUrl?: string | undefined;
}

/**
 * The provider entry (llm.yaml's shape, not yet checked by its schema) the flags and environment
 * describe, under the provider's name: keys from ANTHROPIC_API_KEY / OPENAI_API_KEY, the default
 * provider from whichever key is set, else the scripted one.
 */
export function providerEntryOf(
  flags: ProviderFlags,
  env: NodeJS.ProcessEnv,
): { name: string; config: Record<string, unknown> } {
  const name =
    flags.provider ?? (env.ANTHROPIC_API_KEY ? "anthropic" : env.OPENAI_API_KEY ? "openai" : "scripted");
  switch (name) {
    case "anthropic": {
      const apiKey = env.ANTHROPIC_API_KEY;
      if (!apiKey) throw new StartupError("ANTHROPIC_API_KEY not set (required by --provider anthropic)");
      const baseUrl = flags.baseUrl ?? env.ANTHROPIC_BASE_URL;
      return {
        name,
        config: { type: "anthropic", api_key: apiKey, ...(baseUrl ? { base_url: baseUrl } : {}) },
      };
    }
    case "openai": {
      const baseUrl = flags.baseUrl ?? env.OPENAI_BASE_URL;
      const apiKey = env.OPENAI_API_KEY;
      // A custom base URL (Ollama, vLLM, …) may not need a key; the real OpenAI does.
      if (!apiKey && !baseUrl)
        throw new StartupError("OPENAI_API_KEY not set (required by --provider openai)");
      return {
        name,
        config: baseUrl
          ? { type: "openai_compatible", base_url: baseUrl, ...(apiKey ? { api_key: apiKey } : {}) }
          : { type: "openai", api_key: apiKey },
      };
    }
    case "scripted":
      return { name, config: { type: "scripted" } };
    default:
      throw new StartupError(
        `unsupported provider "${name}": use anthropic, openai (also for OpenAI-compatible servers with --base-url) or scripted`,
      );
  }
}

/** What `ready` and `config_changed` announce of a session. */
export interface AnnouncedState {
  /** The provider's name (anthropic, openai, scripted). */
  providerId: string;
  /** Whether MCP tools are registered. */
  mcp: boolean;
  mode: NonNullable<JsonStreamCapabilities["current_mode"]>;
  model: string;
}

export function announcedCapabilities(state: AnnouncedState): JsonStreamCapabilities {
  return {
    tool_approval: true,
    thinking: state.providerId !== "openai",
    mcp: state.mcp,
    image_input: state.providerId === "scripted" ? "unsupported" : "supported",
    modes: ["default", "auto_edit", "yolo"],
    current_mode: state.mode,
    current_model: state.model,
  };
}
