/**
 * The tool calls of one model response, run in parallel. Each goes through `before_tool` hooks
 * (block, or rewrite the arguments) → approval → `tool_running` → the tool (its streamed output
 * published as it comes) → `after_tool` hooks (rewrite or withhold the output) → `tool_result`
 * with its duration. Whatever happens, the call gets a result for the history.
 */

import { monotonicMs } from "@nexo/wire";
import { ApprovalCancelledError, grantFor } from "./approvals.js";
import type { TurnEvent } from "./events.js";
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

/**
 * One call's publishing state. A class rather than closures made per call: the listeners a tool
 * gets are bound once, and the rest are methods.
 */
class CallEvents {
  /** When the tool started running (its duration is measured from here). */
  started: number | undefined;
  /** Output a tool streams after its call is over (it ignored a stop, say) is not published. */
  streaming = false;
  readonly onOutput: (text: string) => void;
  readonly onSubAgent: (child: SubAgentStarted) => void;
  readonly onSubAgentProgress: (progress: SubAgentProgress) => void;

  constructor(
    private readonly run: TurnRun,
    readonly call: ToolUseBlock,
  ) {
    this.onOutput = this.output.bind(this);
    this.onSubAgent = this.subAgent.bind(this);
    this.onSubAgentProgress = this.subAgentProgress.bind(this);
  }

  /** Publishes the call's cancellation and returns the result the history gets. */
  cancelled(why: string): ToolResultBlock {
    const { run, call } = this;
    const event: TurnEvent & { type: "tool_cancelled" } = {
      type: "tool_cancelled",
      turnId: run.turnId,
      callId: call.id,
      name: call.name,
      reason: why,
    };
    if (this.started !== undefined) event.durationMs = monotonicMs() - this.started;
    run.emit(event);
    return { type: "tool_result", toolUseId: call.id, content: why, isError: true };
  }

  private output(text: string): void {
    if (this.streaming && text)
      this.run.emit({ type: "tool_output_delta", turnId: this.run.turnId, callId: this.call.id, text });
  }

  private subAgent(child: SubAgentStarted): void {
    if (this.streaming)
      this.run.emit({ type: "subagent_started", turnId: this.run.turnId, callId: this.call.id, ...child });
  }

  private subAgentProgress(progress: SubAgentProgress): void {
    if (this.streaming)
      this.run.emit({
        type: "subagent_progress",
        turnId: this.run.turnId,
        callId: this.call.id,
        ...progress,
      });
  }
}

async function runToolCall(run: TurnRun, call: ToolUseBlock): Promise<ToolResultBlock> {
  const { session, turnId, signal } = run;
  const tool = session.findTool(call.name);
  const category: ToolCategory = tool?.category ?? "exec";
  let args = call.input;
  const events = new CallEvents(run, call);

  if (session.hooks?.has("before_tool")) {
    const outcome = await session.hooks.run("before_tool", { tool: call.name, args }, session.hookContext);
    if (outcome.decision === "block") {
      return events.cancelled(`blocked by ${outcome.by}: ${outcome.reason}`);
    }
    if (outcome.payload.args && typeof outcome.payload.args === "object") {
      args = outcome.payload.args as Record<string, unknown>;
    }
  }

  const subject = { name: call.name, category, command: commandOf(tool, args) };
  // An exempt tool (escalate) runs at once: an agent asking for a human must not wait on one.
  const needsApproval =
    tool !== undefined && tool.approvalExempt !== true && session.policy.needsApproval(subject);
  // Built field by field: conditional spreads cost a throw-away object each, per call.
  const requested: TurnEvent & { type: "tool_requested" } = {
    type: "tool_requested",
    turnId,
    callId: call.id,
    name: call.name,
    category,
    args,
    description: describeCall(tool, call.name, args),
    needsApproval,
  };
  if (tool !== undefined)
    requested.source =
      tool.origin === undefined ? { kind: tool.source } : { kind: tool.source, id: tool.origin };
  if (needsApproval) requested.grant = grantFor(subject);
  run.emit(requested);

  if (needsApproval) {
    const refusal = session.approvalRefusal;
    if (refusal) {
      run.emit({
        type: "approval_resolved",
        turnId,
        callId: call.id,
        decision: { approved: false, reason: refusal },
      });
      return events.cancelled(refusal);
    }
    try {
      const decision = await session.approvals.wait(call.id, subject, signal);
      run.emit({ type: "approval_resolved", turnId, callId: call.id, decision });
      if (!decision.approved) {
        const reason = decision.reason || "denied by the user";
        events.cancelled(reason);
        return {
          type: "tool_result",
          toolUseId: call.id,
          content: `The user denied this tool call. Reason: ${reason}`,
          isError: true,
        };
      }
    } catch (error) {
      if (error instanceof ApprovalCancelledError) return events.cancelled(STOPPED);
      throw error;
    }
  }
  if (signal.aborted) return events.cancelled(STOPPED);

  run.emit({ type: "tool_running", turnId, callId: call.id, name: call.name });
  const started = monotonicMs();
  events.started = started;
  events.streaming = true;
  const output = await raceAbort(
    session.invokeTool(call.name, args, {
      callId: call.id,
      turnId,
      signal,
      onOutput: events.onOutput,
      onSubAgent: events.onSubAgent,
      onSubAgentProgress: events.onSubAgentProgress,
    }),
    run,
  );
  events.streaming = false;
  if (output === ABORTED) return events.cancelled(STOPPED);
  const durationMs = monotonicMs() - started;

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

  const done: TurnEvent & { type: "tool_result" } = {
    type: "tool_result",
    turnId,
    callId: call.id,
    name: call.name,
    status: result.isError ? "error" : "success",
    output: result.output,
    outputType: result.outputType ?? "text",
    durationMs,
  };
  if (result.detail !== undefined) done.detail = result.detail;
  if (result.metadata !== undefined) done.metadata = result.metadata;
  run.emit(done);
  const block: ToolResultBlock = {
    type: "tool_result",
    toolUseId: call.id,
    content: result.outputType === "image" ? "[image]" : result.output,
  };
  if (result.isError) block.isError = true;
  return block;
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

/**
 * Resolves with ABORTED as soon as the turn is stopped: a tool that ignores its signal cannot hold
 * the turn. Raced by hand: `Promise.race` walks its argument with the iterator protocol and the
 * stop needed a promise of its own to map to ABORTED, per call.
 */
function raceAbort<T>(promise: Promise<T>, run: TurnRun): Promise<T | typeof ABORTED> {
  if (run.signal.aborted) return Promise.resolve(ABORTED);
  const stopped = run.stopped();
  return new Promise((resolve, reject) => {
    promise.then(resolve, reject);
    stopped.then(() => resolve(ABORTED));
  });
}
