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
import { applySessionConfig } from "../../engine/sessions/config.js";
import type { Logger } from "../../log.js";
import type { AgentFlags } from "../jsonstream/bootstrap.js";
import type { OpenSessionRequest } from "./threads/service.js";

export interface AgentOptions {
  flags: Pick<AgentFlags, "provider" | "model" | "baseUrl">;
  env: NodeJS.ProcessEnv;
  logger: Logger;
}

/** Builds a thread's engine session, through the request's session service. */
export type SessionSource = (request: OpenSessionRequest) => AgentSession | Promise<AgentSession>;

/**
 * `nexo app-server`'s own sessions: the provider from the flags and the environment (resolved on
 * first use), the built-in tools, the thread's workspace.
 */
export function standaloneSessions(options: AgentOptions): SessionSource {
  let resolved: ReturnType<typeof import("../jsonstream/bootstrap.js")["resolveProvider"]> | undefined;
  return async ({ record, sessions, workspace, toolLayers }) => {
    const { resolveProvider, DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS } = await import(
      "../jsonstream/bootstrap.js"
    );
    resolved ??= resolveProvider(options.flags, options.env);
    return sessions.open(record, {
      agentId: record.agentId,
      provider: resolved.provider,
      model: resolved.model,
      maxTokens: DEFAULT_MAX_TOKENS,
      maxTurns: DEFAULT_MAX_TURNS,
      workspace,
      memory: sessions.store.memory,
      allowList: ["info"],
      toolLayers,
      logger: options.logger,
    });
  };
}

/**
 * Applies a thread's configuration (model, approval policy, plan mode) to its loaded session, in
 * the engine's words, from the next model request on. Grants and mode changes are saved with the
 * thread's record by the session service that opened it.
 */
export function configureThread(session: AgentSession, configuration: ThreadConfiguration | undefined): void {
  const policy = configuration?.approvalPolicy;
  applySessionConfig(session, {
    ...(configuration?.model ? { model: configuration.model } : {}),
    ...(policy === "autoApprove"
      ? { mode: "yolo" as const }
      : policy !== undefined && session.policy.mode === "yolo"
        ? { mode: "default" as const }
        : {}),
    readOnly: configuration?.mode === "plan",
  });
}
