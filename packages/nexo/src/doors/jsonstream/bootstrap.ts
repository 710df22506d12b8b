/**
 * Turns `nexo agent --json-stream` flags and the environment into a running session: the provider
 * (keys from ANTHROPIC_API_KEY / OPENAI_API_KEY as the spec's §5 lists them), the store, the
 * session to create or resume, and the capabilities announced in `ready`. Every problem is a
 * StartupError, which the command reports as `error{config_error}` before exiting non-zero.
 */
import { mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { formatIssues } from "@nexo/wire";
import type * as jsonstream from "@nexo/wire/schemas/jsonstream";
import { defaultModelOf } from "../../config/default-models.js";
import { buildToolRegistry } from "../../engine/assemble.js";
// registry.js, not the providers index: the index also brings llm.yaml loading (YAML, TOML), which
// this door never reads, into its start-up.
import { createProvider, ProviderConfigSchema } from "../../engine/providers/registry.js";
import type { AgentSession } from "../../engine/session.js";
import { applySessionConfig } from "../../engine/sessions/config.js";
import { SessionService } from "../../engine/sessions/service.js";
import type { LlmProvider } from "../../engine/types.js";
import type { McpManager } from "../../extensions/mcp/index.js";
import type { Logger } from "../../log.js";
import { DATABASE_FILE, defaultStateDir } from "../../paths.js";
import { type ChatMessage, type Session, Store } from "../../store/index.js";
import { announcedCapabilities, providerEntryOf, StartupError } from "./start-up.js";

export { StartupError } from "./start-up.js";

export interface AgentFlags {
  provider?: string;
  model?: string;
  maxTokens?: number;
  maxTurns?: number;
  baseUrl?: string;
  systemPrompt?: string;
  autoApprove?: boolean;
  workspace?: string;
  sessionId?: string;
  resume?: string;
  stateDir?: string;
  agentId?: string;
  allowOutsideWorkspace?: boolean;
}

export const DEFAULT_MAX_TOKENS = 8192;
export const DEFAULT_MAX_TURNS = 30;

/** The provider the flags and environment describe. */
export function resolveProvider(
  flags: AgentFlags,
  env: NodeJS.ProcessEnv,
): { provider: LlmProvider; model: string } {
  const { name, config } = providerEntryOf(flags, env);
  const parsed = ProviderConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw new StartupError(`provider ${name}: ${formatIssues(parsed.error.issues, "(config)")}`);
  }
  try {
    const provider = createProvider(parsed.data, { id: name });
    return { provider, model: flags.model ?? defaultModelOf(name)! };
  } catch (error) {
    throw new StartupError(`provider ${name}: ${(error as Error).message}`);
  }
}

export interface Bootstrapped {
  session: AgentSession;
  store: Store;
  record: Session;
  capabilities: () => jsonstream.JsonStreamCapabilities;
  /** Applies `set_config`; returns the line the door reports in `info`. */
  applyConfig: (command: jsonstream.JsonStreamSetConfigCommand) => string;
  /** Connects a server announced with `add_mcp_server` and registers its tools; resolves with their names. */
  addMcpServer: (command: jsonstream.JsonStreamAddMcpServerCommand) => Promise<string[]>;
  /** Lets Read open these attached files (real paths, outside the workspace) and saves that with the session. */
  attach: (realPaths: string[]) => void;
  /** Closes what the session opened besides the store (MCP servers). */
  close: () => Promise<void>;
  resumed: boolean;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) throw new StartupError(`${name} must be a positive integer`);
  return value;
}

export function bootstrap(flags: AgentFlags, env: NodeJS.ProcessEnv, logger: Logger): Bootstrapped {
  if (flags.sessionId && flags.resume)
    throw new StartupError("--session-id and --resume cannot be used together");
  const workspace = resolve(flags.workspace ?? process.cwd());
  if (!statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) {
    throw new StartupError(`workspace ${workspace} is not a directory`);
  }
  const maxTokens = positive("--max-tokens", flags.maxTokens, DEFAULT_MAX_TOKENS);
  const maxTurns = positive("--max-turns", flags.maxTurns, DEFAULT_MAX_TURNS);
  const { provider, model } = resolveProvider(flags, env);

  const stateDir = flags.stateDir ? resolve(flags.stateDir) : defaultStateDir(env);
  let store: Store;
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    store = Store.open(join(stateDir, DATABASE_FILE));
  } catch (error) {
    throw new StartupError(`cannot open the session store in ${stateDir}: ${(error as Error).message}`);
  }

  try {
    const sessions = new SessionService(store);
    const agentId = flags.agentId ?? "default";
    let record: Session;
    let history: ChatMessage[] | undefined;
    let resumed = false;
    if (flags.resume) {
      const id = flags.resume === "latest" ? sessions.latest(agentId)?.id : flags.resume;
      const found = id === undefined ? undefined : sessions.resume(id);
      if (!found) {
        throw new StartupError(
          flags.resume === "latest"
            ? "--resume latest: there is no session to resume"
            : `--resume: no session ${flags.resume}`,
        );
      }
      ({ record, history } = found);
      resumed = true;
    } else if (flags.sessionId && sessions.get(flags.sessionId)) {
      // AionUi re-opens a conversation it created but never used with the same --session-id;
      // one that already holds messages must be continued with --resume, never silently reused.
      if (sessions.hasMessages(flags.sessionId)) {
        throw new StartupError(
          `--session-id ${flags.sessionId}: this session already has messages; use --resume ${flags.sessionId} to continue it`,
        );
      }
      record = store.sessions.require(flags.sessionId);
    } else {
      record = sessions.create({
        ...(flags.sessionId ? { id: flags.sessionId } : {}),
        agentId,
        channel: "json-stream",
        approvalMode: flags.autoApprove ? "yolo" : "default",
        metadata: { workspace, provider: provider.id, model },
      });
    }

    const settings = {
      agentId: record.agentId,
      provider,
      model,
      ...(flags.systemPrompt ? { system: flags.systemPrompt } : {}),
      maxTokens,
      maxTurns,
      workspace,
      unconfined: flags.allowOutsideWorkspace ?? false,
      memory: store.memory,
      logger,
    };
    const registry = buildToolRegistry(settings);
    const session = sessions.open(
      record,
      { ...settings, registry, ...(flags.autoApprove ? { mode: "yolo" as const } : {}) },
      history,
    );
    let mcp: McpManager | undefined;
    const addMcpServer = async (command: jsonstream.JsonStreamAddMcpServerCommand): Promise<string[]> => {
      // Loaded on first use: most sessions never add a server, and start-up time matters here.
      const { McpManager, serverConfigFromFields, syncMcpTools } = await import(
        "../../extensions/mcp/index.js"
      );
      if (!mcp) {
        mcp = new McpManager({ logger, configDir: workspace });
        syncMcpTools(mcp, registry);
      }
      await mcp.connect(command.name, serverConfigFromFields(command));
      return mcp.tools(command.name).map((tool) => tool.name);
    };
    const capabilities = (): jsonstream.JsonStreamCapabilities =>
      announcedCapabilities({
        providerId: provider.id,
        mcp: (mcp?.tools().length ?? 0) > 0,
        mode: session.policy.mode,
        model: session.config.model,
      });
    const applyConfig = (command: jsonstream.JsonStreamSetConfigCommand): string => {
      const changed = applySessionConfig(session, {
        ...(command.model === undefined ? {} : { model: command.model }),
        ...(command.thinking === "disabled"
          ? { thinking: { enabled: false } }
          : command.thinking === "enabled" || command.thinking_budget !== undefined
            ? {
                thinking: {
                  enabled: true,
                  ...(command.thinking_budget === undefined ? {} : { budget: command.thinking_budget }),
                },
              }
            : {}),
      });
      const unsupported: string[] = [];
      if (command.effort !== undefined) unsupported.push("effort");
      if (command.image_input !== undefined) unsupported.push("image_input");
      if (command.compaction !== undefined) unsupported.push("compaction");
      const parts = [changed.length > 0 ? `config updated: ${changed.join(", ")}` : "set_config: no changes"];
      if (unsupported.length > 0) parts.push(`not supported by this agent: ${unsupported.join(", ")}`);
      return parts.join("; ");
    };
    const attach = (realPaths: string[]) => sessions.attach(session, realPaths);
    const close = async () => {
      await mcp?.close();
    };
    return { session, store, record, capabilities, applyConfig, addMcpServer, attach, close, resumed };
  } catch (error) {
    store.close();
    throw error;
  }
}
