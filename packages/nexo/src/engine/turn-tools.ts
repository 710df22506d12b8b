/**
 * The tool calls of one model response, run in parallel. Each goes through `before_tool` hooks
 * (block, or rewrite the arguments) → approval → `tool_running` → the tool (its streamed output
 * published as it comes) → `after_tool` hooks (rewrite or withhold the output) → `tool_result`
 * with its duration. Whatever happens, the call gets a result for the history.
 */
import { ApprovalCancelledError, grantFor } from "./approvals.js";
import type { TurnRun } from "./turn-run.js";
import type {
  SubAgentProgress,
  SubAgentStarted,
  Tool,
  ToolCategory,
  ToolOutput,
  ToolResultBlock,
  ToolUseBlock,
} from "./types.js";

const STOPPED = "cancelled: the turn was stopped";

/** Runs every call of one model response in parallel; returns their results in call order. */
export function runToolCalls(run: TurnRun, calls: ToolUseBlock[]): Promise<ToolResultBlock[]> {
  return Promise.all(calls.map((call) => runToolCall(run, call)));
}

async function runToolCall(run: TurnRun, call: ToolUseBlock): Promise<ToolResultBlock> {
  const { session, emit, turnId, signal } = run;
  const tool = session.findTool(call.name);
  const category: ToolCategory = tool?.category ?? "exec";
  let args = call.input;
  let started: number | undefined;
  const cancelled = (why: string): ToolResultBlock => {
    emit({
      type: "tool_cancelled",
      turnId,
      callId: call.id,
      name: call.name,
      reason: why,
      ...(started === undefined ? {} : { durationMs: performance.now() - started }),
    });
    return { type: "tool_result", toolUseId: call.id, content: why, isError: true };
  };

  if (session.hooks?.has("before_tool")) {
    const outcome = await session.hooks.run("before_tool", { tool: call.name, args }, session.hookContext);
    if (outcome.decision === "block") {
      return cancelled(`blocked by ${outcome.by}: ${outcome.reason}`);
    }
    if (outcome.payload.args && typeof outcome.payload.args === "object") {
      args = outcome.payload.args as Record<string, unknown>;
    }
  }

  const subject = { name: call.name, category, command: commandOf(tool, args) };
  // An exempt tool (escalate) runs at once: an agent asking for a human must not wait on one.
  const needsApproval =
    tool !== undefined && tool.approvalExempt !== true && session.policy.needsApproval(subject);
  emit({
    type: "tool_requested",
    turnId,
    callId: call.id,
    name: call.name,
    ...(tool === undefined
      ? {}
      : {
          source: tool.origin === undefined ? { kind: tool.source } : { kind: tool.source, id: tool.origin },
        }),
    category,
    args,
    description: describeCall(tool, call.name, args),
    needsApproval,
    ...(needsApproval ? { grant: grantFor(subject) } : {}),
  });

  if (needsApproval) {
    const refusal = session.approvalRefusal;
    if (refusal) {
      emit({
        type: "approval_resolved",
        turnId,
        callId: call.id,
        decision: { approved: false, reason: refusal },
      });
      return cancelled(refusal);
    }
    try {
      const decision = await session.approvals.wait(call.id, subject, signal);
      emit({ type: "approval_resolved", turnId, callId: call.id, decision });
      if (!decision.approved) {
        const reason = decision.reason || "denied by the user";
        cancelled(reason);
        return {
          type: "tool_result",
          toolUseId: call.id,
          content: `The user denied this tool call. Reason: ${reason}`,
          isError: true,
        };
      }
    } catch (error) {
      if (error instanceof ApprovalCancelledError) return cancelled(STOPPED);
      throw error;
    }
  }
  if (signal.aborted) return cancelled(STOPPED);

  emit({ type: "tool_running", turnId, callId: call.id, name: call.name });
  started = performance.now();
  // Output a tool streams after its call is over (it ignored a stop, say) is not published.
  let streaming = true;
  const onOutput = (text: string) => {
    if (streaming && text) emit({ type: "tool_output_delta", turnId, callId: call.id, text });
  };
  const onSubAgent = (child: SubAgentStarted) => {
    if (streaming) emit({ type: "subagent_started", turnId, callId: call.id, ...child });
  };
  const onSubAgentProgress = (progress: SubAgentProgress) => {
    if (streaming) emit({ type: "subagent_progress", turnId, callId: call.id, ...progress });
  };
  const output = await raceAbort(
    session.invokeTool(call.name, args, {
      callId: call.id,
      turnId,
      signal,
      onOutput,
      onSubAgent,
      onSubAgentProgress,
    }),
    signal,
  );
  streaming = false;
  if (output === ABORTED) return cancelled(STOPPED);
  const durationMs = performance.now() - started;

  let result: ToolOutput = output;
  if (session.hooks?.has("after_tool")) {
    const outcome = await session.hooks.run(
      "after_tool",
      { tool: call.name, args, output: result.output, status: result.isError ? "error" : "success" },
      session.hookContext,
    );
    if (outcome.decision === "block") {
      result = { output: `tool output withheld by ${outcome.by}: ${outcome.reason}`, isError: true };
    } else if (typeof outcome.payload.output === "string") {
      result = { ...result, output: outcome.payload.output };
    }
  }

  emit({
    type: "tool_result",
    turnId,
    callId: call.id,
    name: call.name,
    status: result.isError ? "error" : "success",
    output: result.output,
    outputType: result.outputType ?? "text",
    durationMs,
    ...(result.detail === undefined ? {} : { detail: result.detail }),
    ...(result.metadata === undefined ? {} : { metadata: result.metadata }),
  });
  return {
    type: "tool_result",
    toolUseId: call.id,
    content: result.outputType === "image" ? "[image]" : result.output,
    ...(result.isError ? { isError: true } : {}),
  };
}

/** The command line a call runs, for tools that say (a throwing tool says nothing). */
function commandOf(tool: Tool | undefined, args: Record<string, unknown>): string | undefined {
  try {
    return tool?.command?.(args);
  } catch {
    return undefined;
  }
}

function describeCall(tool: Tool | undefined, name: string, args: Record<string, unknown>): string {
  if (tool?.describe) {
    try {
      return tool.describe(args);
    } catch {
      // fall through to the generic description
    }
  }
  const preview = JSON.stringify(args);
  return `${name} ${preview.length > 80 ? `${preview.slice(0, 77)}...` : preview}`;
}

const ABORTED = Symbol("aborted");

/** Resolves with ABORTED as soon as the signal fires: a tool that ignores its signal cannot hold the turn. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
