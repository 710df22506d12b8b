/**
 * `Spawn`: runs a task in a sub-agent with its own session and returns only its final answer.
 * Nothing the sub-agent streams reaches the parent's event stream — the parent sees one tool call
 * and one result. When the parent's door keeps sub-agents' conversations (ToolContext
 * `subAgentHome`: the AppServer's child threads), the sub-agent's session is a stored one and its
 * start is reported (`subagent_started`, nested sub-agents' too); otherwise it is not kept. Where
 * each sub-agent stands — its tool of the moment, its tokens, its end — is reported as it changes
 * (`subagent_progress`, nested ones' too), for doors that show it. Sub-agents cannot ask the user
 * for approval (nobody sees their stream), so a call that would need approval is refused inside the sub-agent; they inherit the parent's mode
 * and "always" grants. Depth is limited so a sub-agent cannot spawn without bound.
 */

import type { AgentSession } from "../session.js";
import type { HubEvent } from "../thread-hub.js";
import type { SubAgentHome, SubAgentProgress, Tool, ToolContext, ToolOutput } from "../types.js";

export interface SpawnOptions {
  /**
   * Builds the sub-agent's session for a call (same provider and tools, fresh history), kept in
   * `home` when the door gives it one.
   */
  createSession(ctx: ToolContext, depth: number, home?: SubAgentHome): AgentSession;
  /** How deep sub-agents may nest. Default 2. */
  maxDepth?: number;
  /** This tool's own depth (0 for the top-level agent). */
  depth?: number;
}

/** The label a sub-agent is shown by: the model's short description, else the task's start. */
export function labelOf(task: string, description: string | undefined): string {
  return (description?.trim() || task.replace(/\s+/g, " ").trim()).slice(0, 80);
}

/**
 * Applies one of the sub-agent's own events to where it stands; true when that changed. Its tool
 * of the moment, its turn's tokens after each model call, its end.
 */
function progressed(progress: SubAgentProgress, event: HubEvent): boolean {
  switch (event.type) {
    case "tool_running":
      progress.currentTool = event.name;
      return true;
    case "tool_result":
    case "tool_cancelled":
      if (progress.currentTool === undefined) return false;
      delete progress.currentTool;
      return true;
    case "step_usage":
      progress.inputTokens = event.turn.inputTokens;
      progress.outputTokens = event.turn.outputTokens;
      return true;
    case "turn_end":
      delete progress.currentTool;
      progress.inputTokens = event.usage.inputTokens;
      progress.outputTokens = event.usage.outputTokens;
      progress.completed = true;
      return true;
    default:
      return false;
  }
}

export const SPAWN_APPROVAL_REFUSAL =
  "sub-agents cannot ask for approval; allow-list this tool or switch the parent session to auto_edit or yolo";

export function spawnTool(options: SpawnOptions): Tool {
  const depth = options.depth ?? 0;
  const maxDepth = options.maxDepth ?? 2;
  return {
    name: "Spawn",
    description:
      "Delegate a self-contained task to a sub-agent with its own context. Returns the sub-agent's final answer. " +
      "Use it for research or multi-step work whose intermediate steps the main conversation does not need.",
    inputSchema: {
      type: "object",
      properties: {
        task: {
          type: "string",
          minLength: 1,
          description: "What the sub-agent should do, with all needed context.",
        },
        description: { type: "string", description: "A short label for the task, shown to the user." },
      },
      required: ["task"],
      additionalProperties: false,
    },
    category: "exec",
    source: "builtin",
    describe: (args) => `Spawn: ${String(args.description ?? args.task ?? "sub-agent").slice(0, 80)}`,
    async execute(args, ctx): Promise<ToolOutput> {
      if (depth >= maxDepth) {
        return { output: `sub-agents may nest at most ${maxDepth} levels deep`, isError: true };
      }
      const task = String(args.task);
      const description = typeof args.description === "string" ? args.description : undefined;
      const home = ctx.subAgentHome?.({
        depth: depth + 1,
        task,
        ...(description === undefined ? {} : { description }),
      });
      const session = options.createSession(ctx, depth + 1, home);
      const report = ctx.onSubAgentProgress;
      const progress: SubAgentProgress = {
        sessionId: session.id,
        label: labelOf(task, description),
        depth: depth + 1,
        inputTokens: 0,
        outputTokens: 0,
        completed: false,
      };
      report?.({ ...progress });
      let reply: string | undefined;
      let errorMessage: string | undefined;
      let toolCalls = 0;
      let ended = "completed";
      for await (const event of session.runTurn(task, { signal: ctx.signal })) {
        if (report !== undefined && progressed(progress, event)) report({ ...progress });
        if (event.type === "subagent_progress") {
          const { type: _type, turnId: _turn, callId: _call, ...nested } = event;
          report?.(nested);
        }
        if (event.type === "tool_running") toolCalls++;
        if (event.type === "subagent_started") {
          const { sessionId, parentSessionId, depth: nested, description: label } = event;
          ctx.onSubAgent?.({
            sessionId,
            parentSessionId,
            depth: nested,
            ...(label === undefined ? {} : { description: label }),
          });
        }
        if (event.type === "error") errorMessage = event.message;
        if (event.type === "turn_end") {
          reply = event.reply;
          ended = event.reason;
        }
      }
      const metadata = { session_id: session.id, tool_calls: toolCalls, ended };
      if (ended === "error")
        return { output: `sub-agent failed: ${errorMessage ?? "unknown error"}`, isError: true, metadata };
      if (ended === "cancelled") return { output: "sub-agent was cancelled", isError: true, metadata };
      return { output: reply?.trim() || "(the sub-agent gave no answer)", metadata };
    },
  };
}
