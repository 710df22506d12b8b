/**
 * One turn: the user's message in, a stream of TurnEvents out, and a consistent history.
 *
 * The loop calls the model, streams its text and thinking, runs the tool calls it asks for (in
 * parallel, each through hooks and approval), feeds the results back, and repeats until the model
 * stops asking for tools or `maxTurns` model calls have been made. Whatever happens — a provider
 * error, a denial, a cancellation — every tool call in the history gets its result, so the next
 * request to the model is always valid.
 */
import {
  LlmAuthenticationError,
  LlmContextOverflowError,
  LlmModelNotFoundError,
  LlmRateLimitedError,
} from "@nexo/wire";
import { ApprovalCancelledError } from "./approvals.js";
import { compact, compactionCut, needsCompaction, toolSpecChars } from "./compaction.js";
import type { EventChannel } from "./event-channel.js";
import { isRetryable } from "./providers/errors.js";
import type { SessionState } from "./session-types.js";
import {
  addUsage,
  type ContentBlock,
  emptyUsage,
  type Tool,
  type ToolCategory,
  type ToolOutput,
  type ToolResultBlock,
  type ToolSpec,
  type ToolUseBlock,
  type TurnEndReason,
  type TurnEvent,
  type Usage,
} from "./types.js";

interface TurnRun {
  turnId: string;
  session: SessionState;
  events: EventChannel<TurnEvent>;
  signal: AbortSignal;
  /** The tool definitions offered during this turn, and their size, computed once per turn. */
  tools?: { specs: ToolSpec[]; chars: number };
  /** Call ids given out in this turn: each call the user sees has an id of its own. */
  callIds?: Set<string>;
}

function turnTools(run: TurnRun): { specs: ToolSpec[]; chars: number } {
  if (!run.tools) {
    const specs = run.session.toolSpecs();
    run.tools = { specs, chars: toolSpecChars(specs) };
  }
  return run.tools;
}

/** What the model produced in one request. */
interface ModelReply {
  text: string;
  thinking: { text: string; signature?: string } | undefined;
  toolCalls: ToolUseBlock[];
}

export async function runTurn(run: TurnRun, input: ContentBlock[]): Promise<void> {
  const { session, events, turnId, signal } = run;
  const emit = (event: TurnEvent) => events.push(event);
  let turnUsage: Usage = emptyUsage();
  let reason: TurnEndReason = "completed";
  let reply: string | undefined;
  const texts: string[] = [];

  await emit({ type: "turn_start", turnId });
  try {
    // Hook: before the message is handled.
    const textIn = input
      .filter((b) => b.type === "text")
      .map((b) => (b as { text: string }).text)
      .join("\n");
    if (session.hooks?.has("before_message")) {
      const outcome = await session.hooks.run("before_message", { text: textIn }, session.hookContext);
      if (outcome.decision === "block") {
        await emit({ type: "info", turnId, message: `message blocked by ${outcome.by}: ${outcome.reason}` });
        reason = "blocked";
        return;
      }
      if (typeof outcome.payload.text === "string" && outcome.payload.text !== textIn) {
        input = [{ type: "text", text: outcome.payload.text }, ...input.filter((b) => b.type !== "text")];
      }
    }
    await session.append({ role: "user", content: input }, turnId);

    let step = 0;
    let compactedThisStep = false;
    while (true) {
      if (signal.aborted) {
        reason = "cancelled";
        break;
      }
      if (step >= session.config.maxTurns) {
        reason = "max_turns";
        await emit({
          type: "info",
          turnId,
          message: `stopped after ${session.config.maxTurns} model calls (max_turns); send another message to continue`,
        });
        break;
      }
      step++;
      const compaction = await compactSafely(run, false);
      if (compaction === "cancelled") {
        reason = "cancelled";
        break;
      }
      if (compaction !== "done" && compaction !== "skipped") {
        await emit(compaction);
        reason = "error";
        break;
      }

      let modelReply: ModelReply;
      try {
        modelReply = await callModel(run, (u) => {
          turnUsage = addUsage(turnUsage, u);
          session.usage = addUsage(session.usage, u);
        });
        compactedThisStep = false;
      } catch (error) {
        if (signal.aborted) {
          reason = "cancelled";
          break;
        }
        if (error instanceof LlmContextOverflowError && !compactedThisStep) {
          compactedThisStep = true;
          const compaction = await compactSafely(run, true);
          if (compaction === "done") {
            step--;
            continue;
          }
          if (compaction === "cancelled") {
            reason = "cancelled";
            break;
          }
          if (compaction !== "skipped") {
            await emit(compaction);
            reason = "error";
            break;
          }
        }
        await emit(providerErrorEvent(turnId, error));
        reason = "error";
        break;
      }

      const assistant: ContentBlock[] = [];
      if (modelReply.thinking?.text) assistant.push({ type: "thinking", ...modelReply.thinking });
      if (modelReply.text) assistant.push({ type: "text", text: modelReply.text });
      assistant.push(...modelReply.toolCalls);
      if (assistant.length > 0) await session.append({ role: "assistant", content: assistant }, turnId);
      if (modelReply.text) texts.push(modelReply.text);

      if (signal.aborted && modelReply.toolCalls.length === 0) {
        reason = "cancelled";
        break;
      }
      if (modelReply.toolCalls.length === 0) break;

      const results = await runToolCalls(run, modelReply.toolCalls);
      await session.append({ role: "user", content: results }, turnId);
      if (signal.aborted) {
        reason = "cancelled";
        break;
      }
    }

    if (reason === "completed") {
      reply = texts.at(-1) ?? "";
      if (session.hooks?.has("before_reply")) {
        const outcome = await session.hooks.run("before_reply", { text: reply }, session.hookContext);
        if (outcome.decision === "block") {
          await emit({ type: "info", turnId, message: `reply blocked by ${outcome.by}: ${outcome.reason}` });
          reply = undefined;
          reason = "blocked";
        } else if (typeof outcome.payload.text === "string") {
          reply = outcome.payload.text;
        }
      }
    }
  } catch (error) {
    // A bug or an unexpected failure: report it, keep the session usable.
    session.logger?.error({ err: (error as Error).stack, turnId }, "turn failed unexpectedly");
    await emit({
      type: "error",
      turnId,
      code: "internal_error",
      message: (error as Error).message,
      retryable: false,
    });
    reason = signal.aborted ? "cancelled" : "error";
  } finally {
    await emit({ type: "usage", turnId, turn: turnUsage, session: session.usage });
    await emit({
      type: "turn_end",
      turnId,
      reason,
      usage: turnUsage,
      ...(reply === undefined ? {} : { reply }),
    });
  }
}

/** Streams one model response, emitting text and thinking as they arrive. */
async function callModel(run: TurnRun, onUsage: (u: Partial<Usage>) => void): Promise<ModelReply> {
  const { session, events, turnId, signal } = run;
  const reply: ModelReply = { text: "", thinking: undefined, toolCalls: [] };
  const config = session.config;
  try {
    for await (const event of config.provider.stream({
      model: config.model,
      ...(config.system === undefined ? {} : { system: config.system }),
      messages: session.history,
      tools: turnTools(run).specs,
      maxTokens: config.maxTokens,
      ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
      ...(config.thinkingBudget === undefined ? {} : { thinkingBudget: config.thinkingBudget }),
      signal,
    })) {
      switch (event.type) {
        case "text_delta":
          reply.text += event.text;
          if (!events.offer({ type: "text_delta", turnId, text: event.text })) await events.room();
          break;
        case "thinking_delta":
          reply.thinking ??= { text: "" };
          reply.thinking.text += event.text;
          if (event.signature) reply.thinking.signature = event.signature;
          if (event.text && !events.offer({ type: "thinking", turnId, text: event.text }))
            await events.room();
          break;
        case "tool_call":
          reply.toolCalls.push({
            type: "tool_use",
            id: uniqueCallId(run, event.id),
            name: event.name,
            input: event.input,
          });
          break;
        case "usage":
          onUsage(event.usage);
          break;
        case "retry":
          await events.push({
            type: "info",
            turnId,
            message: `${event.reason}; retrying in ${(event.delayMs / 1000).toFixed(1)} s (${event.attempt}/${event.maxAttempts})`,
          });
          break;
        case "stop":
          break;
      }
      if (signal.aborted) break;
    }
  } catch (error) {
    if (!signal.aborted && reply.text === "" && reply.toolCalls.length === 0) throw error;
    if (!signal.aborted) {
      // Output had streamed: keep it in the history, then report the failure.
      if (reply.text)
        await session.append({ role: "assistant", content: [{ type: "text", text: reply.text }] }, turnId);
      throw error;
    }
  }
  if (signal.aborted) {
    // Cancelled mid-stream: keep the words that were shown, drop half-announced tool calls.
    reply.toolCalls = [];
    reply.thinking = undefined;
  }
  return reply;
}

/**
 * The model's id for a call, or a fresh one when the model already used it in this turn: two calls
 * sharing an id would let an approval (or a result) meant for one apply to the other. The new id
 * keeps the providers' id alphabet (letters, digits, `_`, `-`).
 */
function uniqueCallId(run: TurnRun, id: string): string {
  run.callIds ??= new Set();
  const used = run.callIds;
  const base = id === "" ? "call" : id;
  let unique = base;
  for (let n = 2; used.has(unique); n++) unique = `${base}_${n}`;
  used.add(unique);
  return unique;
}

function providerErrorEvent(turnId: string, error: unknown, during?: string): TurnEvent {
  const retryable = isRetryable(error);
  let message = (error as Error)?.message ?? String(error);
  if (error instanceof LlmRateLimitedError && error.retryAfterSecs !== undefined) {
    message = `${message} (retry after ${error.retryAfterSecs} s)`;
  }
  if (error instanceof LlmAuthenticationError) message = `authentication failed: ${message}`;
  if (error instanceof LlmModelNotFoundError) message = `model not found: ${message}`;
  if (during) message = `${during} failed: ${message}`;
  return { type: "error", turnId, code: "provider_error", message, retryable };
}

/**
 * Compaction asks the model for a summary, so it fails and gets stopped like any model call: a
 * stop is a cancellation (the history is left as it was), a failure is the provider's error.
 */
async function compactSafely(
  run: TurnRun,
  force: boolean,
): Promise<"done" | "skipped" | "cancelled" | TurnEvent> {
  try {
    const compacted = await maybeCompact(run, force);
    if (run.signal.aborted) return "cancelled";
    return compacted ? "done" : "skipped";
  } catch (error) {
    if (run.signal.aborted) return "cancelled";
    return providerErrorEvent(run.turnId, error, "compacting the conversation");
  }
}

async function maybeCompact(run: TurnRun, force: boolean): Promise<boolean> {
  const { session, events, turnId, signal } = run;
  const window = session.contextWindow();
  if (window === undefined) return false;
  const options = { contextWindow: window, maxTokens: session.config.maxTokens };
  const chars = (session.config.system?.length ?? 0) + session.historyChars + turnTools(run).chars;
  const estimate = Math.ceil(chars / 4);
  if (!force && !needsCompaction(estimate, options)) return false;
  const cut = compactionCut(session.history);
  if (cut <= 0) return false;
  const result = await compact(session.config.provider, session.config.model, session.history, cut, signal);
  // A stopped summary is cut off: never let it replace the conversation.
  if (signal.aborted) return false;
  session.replaceHistory(result.messages);
  await events.push({
    type: "info",
    turnId,
    message: `compacted ${result.removed} earlier messages into a summary to stay within the model's context window`,
  });
  return true;
}

/** Runs every call of one model response in parallel; returns their results in call order. */
async function runToolCalls(run: TurnRun, calls: ToolUseBlock[]): Promise<ToolResultBlock[]> {
  return Promise.all(calls.map((call) => runToolCall(run, call)));
}

async function runToolCall(run: TurnRun, call: ToolUseBlock): Promise<ToolResultBlock> {
  const { session, events, turnId, signal } = run;
  const tool = session.findTool(call.name);
  const category: ToolCategory = tool?.category ?? "exec";
  let args = call.input;
  const cancelled = async (why: string): Promise<ToolResultBlock> => {
    await events.push({ type: "tool_cancelled", turnId, callId: call.id, name: call.name, reason: why });
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

  const description = describeCall(tool, call.name, args);
  const subject = { name: call.name, category, command: commandOf(tool, args) };
  const needsApproval = tool !== undefined && session.policy.needsApproval(subject);
  await events.push({
    type: "tool_requested",
    turnId,
    callId: call.id,
    name: call.name,
    category,
    args,
    description,
    needsApproval,
  });

  if (needsApproval) {
    const refusal = session.approvalRefusal;
    if (refusal) return cancelled(refusal);
    try {
      const decision = await session.approvals.wait(call.id, subject, signal);
      if (!decision.approved) {
        const reason = decision.reason || "denied by the user";
        await events.push({ type: "tool_cancelled", turnId, callId: call.id, name: call.name, reason });
        return {
          type: "tool_result",
          toolUseId: call.id,
          content: `The user denied this tool call. Reason: ${reason}`,
          isError: true,
        };
      }
    } catch (error) {
      if (error instanceof ApprovalCancelledError) return cancelled("cancelled: the turn was stopped");
      throw error;
    }
  }
  if (signal.aborted) return cancelled("cancelled: the turn was stopped");

  await events.push({ type: "tool_running", turnId, callId: call.id, name: call.name });
  const output = await raceAbort(session.invokeTool(call.name, args, call.id, signal), signal);
  if (output === ABORTED) return cancelled("cancelled: the turn was stopped");

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

  await events.push({
    type: "tool_result",
    turnId,
    callId: call.id,
    name: call.name,
    status: result.isError ? "error" : "success",
    output: result.output,
    outputType: result.outputType ?? "text",
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

function describeCall(
  tool: { describe?(args: Record<string, unknown>): string } | undefined,
  name: string,
  args: Record<string, unknown>,
): string {
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
