/**
 * The agent behind every AppServer thread: which model answers, which tools it has, and how a
 * thread's configuration applies to it.
 *
 * - `nexo app-server`: the provider comes from the flags and the environment exactly as for
 *   `nexo agent` (the offline scripted model when nothing is configured). It is resolved on the
 *   first thread that runs, so `initialize` never waits for a provider library to load.
 * - `nexo start`: the agent appserver.yaml names, with the daemon's providers, plugins and MCP
 *   tools (daemon-door.ts).
 * - Approvals: read-only tools (`info`) run without asking; file changes ask as `file`, commands as
 *   `shell`. `approvalPolicy: autoApprove` runs everything without asking.
 * - `mode: plan` offers the model only the read-only tools, so it can look and plan but not act.
 * - A thread's mode changes and "always" grants are saved with its session, as json-stream does.
 */
import type { ThreadConfiguration } from "@nexo/wire/schemas/appserver";
import type { AgentSession } from "../../engine/session.js";
import { storeTranscriptSink } from "../../engine/transcript-sink.js";
import type { Tool } from "../../engine/types.js";
import type { Logger } from "../../log.js";
import type { AgentFlags } from "../jsonstream/bootstrap.js";
import type { OpenSessionRequest } from "./threads/service.js";

export interface AgentOptions {
  flags: Pick<AgentFlags, "provider" | "model" | "baseUrl">;
  env: NodeJS.ProcessEnv;
  logger: Logger;
}

/** Builds a thread's engine session; the policy and plan-mode handling is added by agentFactory. */
export type SessionSource = (request: OpenSessionRequest) => AgentSession | Promise<AgentSession>;

/** Tools a plan-mode thread keeps. */
const readOnly = (tool: Tool): boolean => tool.category === "info";

/**
 * `nexo app-server`'s own sessions: the provider from the flags and the environment (resolved on
 * first use), the built-in tools, the thread's workspace.
 */
export function standaloneSessions(options: AgentOptions): SessionSource {
  let resolved: ReturnType<typeof import("../jsonstream/bootstrap.js")["resolveProvider"]> | undefined;
  return async (request) => {
    const [{ resolveProvider, DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS }, { createAgentSession }] =
      await Promise.all([import("../jsonstream/bootstrap.js"), import("../../engine/assemble.js")]);
    resolved ??= resolveProvider(options.flags, options.env);
    const { record, store, history, workspace } = request;
    return createAgentSession({
      sessionId: record.id,
      agentId: record.agentId,
      provider: resolved.provider,
      model: resolved.model,
      maxTokens: DEFAULT_MAX_TOKENS,
      maxTurns: DEFAULT_MAX_TURNS,
      workspace,
      memory: store.memory,
      history,
      sink: storeTranscriptSink(store.transcripts),
      mode: record.approvalMode,
      grants: record.alwaysAllow,
      allowList: ["info"],
      logger: options.logger,
    });
  };
}

/**
 * The thread side of every session, whatever built it: "always" grants and mode changes are saved
 * with the thread's record, and a thread's configuration (model, approval policy, plan mode) is
 * applied to it.
 */
export function agentFactory(source: SessionSource) {
  /** The configured tool filter of each session, before plan mode narrows it. */
  const baseFilters = new WeakMap<AgentSession, ((tool: Tool) => boolean) | undefined>();

  const openSession = async (request: OpenSessionRequest): Promise<AgentSession> => {
    const session = await source(request);
    const { record, store } = request;
    session.policy.onChange = () => {
      store.sessions.update(record.id, {
        approvalMode: session.policy.mode,
        alwaysAllow: session.policy.grants,
      });
    };
    baseFilters.set(session, session.config.toolFilter);
    return session;
  };

  /** Applies a thread's configuration to its loaded session (from the next model request on). */
  const configure = (session: AgentSession, configuration: ThreadConfiguration | undefined): void => {
    if (configuration?.model) session.config.model = configuration.model;
    const policy = configuration?.approvalPolicy;
    if (policy === "autoApprove") session.policy.mode = "yolo";
    else if (policy !== undefined && session.policy.mode === "yolo") session.policy.mode = "default";
    const base = baseFilters.get(session);
    if (configuration?.mode === "plan") {
      session.config.toolFilter = base ? (tool) => readOnly(tool) && base(tool) : readOnly;
    } else if (base) {
      session.config.toolFilter = base;
    } else {
      delete session.config.toolFilter;
    }
  };

  return { openSession, configure };
}
