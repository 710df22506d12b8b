/**
 * One model call of a turn: stream the response, publishing the model's reasoning and text as
 * items (each started when its first piece arrives and ended with its whole text when the call
 * ends), tool-call argument fragments as they are written, and the complete calls, re-keyed so
 * that every call of the turn has an id of its own.
 */
import { LlmAuthenticationError, LlmModelNotFoundError, LlmRateLimitedError } from "@nexo/wire";
import { isRetryable } from "./providers/errors.js";
import type { MidTurnEvent } from "./thread-hub.js";
import { nextItemId, type TurnRun, turnTools, uniqueCallId } from "./turn-run.js";
import { addUsage, type ChatRequest, emptyUsage, type ToolUseBlock, type Usage } from "./types.js";

/** What the model produced in one request. */
export interface ModelReply {
  text: string;
  thinking: { text: string; signature?: string } | undefined;
  toolCalls: ToolUseBlock[];
}

/** The items of one model call that are open while it streams. */
class StepItems {
  private textId: string | undefined;
  private reasoningId: string | undefined;

  constructor(
    private readonly run: TurnRun,
    private readonly reply: ModelReply,
  ) {}

  text(text: string): void {
    const { run } = this;
    if (this.reasoningId !== undefined) this.endReasoning();
    if (this.textId === undefined) {
      this.textId = nextItemId(run, "msg");
      run.emit({ type: "message_start", turnId: run.turnId, itemId: this.textId });
    }
    run.emit({ type: "text_delta", turnId: run.turnId, itemId: this.textId, text });
  }

  reasoning(text: string): void {
    const { run } = this;
    if (this.reasoningId === undefined) {
      this.reasoningId = nextItemId(run, "reasoning");
      run.emit({ type: "reasoning_start", turnId: run.turnId, itemId: this.reasoningId });
    }
    run.emit({ type: "reasoning_delta", turnId: run.turnId, itemId: this.reasoningId, text });
  }

  /** Ends whatever is open, with the text each item had when the call ended. */
  end(): void {
    if (this.reasoningId !== undefined) this.endReasoning();
    if (this.textId !== undefined) {
      const { run } = this;
      run.emit({ type: "message_end", turnId: run.turnId, itemId: this.textId, text: this.reply.text });
      this.textId = undefined;
    }
  }

  private endReasoning(): void {
    const { run } = this;
    const text = this.reply.thinking?.text ?? "";
    run.emit({ type: "reasoning_end", turnId: run.turnId, itemId: this.reasoningId!, text });
    this.reasoningId = undefined;
  }
}

/**
 * Streams one model response. Usage is added to the turn's and session's totals as it arrives, and
 * published as `step_usage` once the call ends.
 */
export async function callModel(run: TurnRun): Promise<ModelReply> {
  const { session, turnId, signal } = run;
  const reply: ModelReply = { text: "", thinking: undefined, toolCalls: [] };
  const items = new StepItems(run, reply);
  /** Streamed calls by their position in the response (made at the first): id given out, tool name. */
  let streamed: Map<number, { callId: string; name: string }> | undefined;
  let stepUsage: Usage | undefined;
  const config = session.config;
  try {
    for await (const event of config.provider.stream(chatRequest(run))) {
      switch (event.type) {
        case "text_delta":
          reply.text += event.text;
          items.text(event.text);
          break;
        case "thinking_delta":
          reply.thinking ??= { text: "" };
          reply.thinking.text += event.text;
          if (event.signature) reply.thinking.signature = event.signature;
          if (event.text) items.reasoning(event.text);
          break;
        case "tool_call_delta": {
          streamed ??= new Map();
          let call = streamed.get(event.index);
          if (call === undefined) {
            call = { callId: uniqueCallId(run, event.id ?? ""), name: event.name ?? "" };
            streamed.set(event.index, call);
          }
          if (event.delta) {
            run.emit({
              type: "tool_args_delta",
              turnId,
              callId: call.callId,
              name: call.name,
              delta: event.delta,
            });
          }
          break;
        }
        case "tool_call": {
          const known = event.index === undefined ? undefined : streamed?.get(event.index);
          reply.toolCalls.push({
            type: "tool_use",
            id: known?.callId ?? uniqueCallId(run, event.id),
            name: event.name,
            input: event.input,
          });
          break;
        }
        case "usage":
          stepUsage = addUsage(stepUsage ?? emptyUsage(), event.usage);
          run.usage = addUsage(run.usage, event.usage);
          session.usage = addUsage(session.usage, event.usage);
          break;
        case "retry":
          run.emit({
            type: "info",
            turnId,
            message: `${event.reason}; retrying in ${(event.delayMs / 1000).toFixed(1)} s (${event.attempt}/${event.maxAttempts})`,
          });
          break;
        case "stop":
          break;
      }
      if (run.isStopped) break;
    }
  } catch (error) {
    if (!signal.aborted && reply.text === "" && reply.toolCalls.length === 0) throw error;
    if (!signal.aborted) {
      // Output had streamed: keep it in the history, then report the failure.
      if (reply.text)
        session.append({ role: "assistant", content: [{ type: "text", text: reply.text }] }, turnId);
      throw error;
    }
  } finally {
    items.end();
    if (stepUsage !== undefined) run.emit({ type: "step_usage", turnId, usage: stepUsage, turn: run.usage });
  }
  if (signal.aborted) {
    // Cancelled mid-stream: keep the words that were shown, drop half-announced tool calls.
    reply.toolCalls = [];
    reply.thinking = undefined;
  }
  return reply;
}

/** The request of one model call, built field by field (no throw-away objects of conditional spreads). */
function chatRequest(run: TurnRun): ChatRequest {
  const { config } = run.session;
  const request: ChatRequest = {
    model: config.model,
    messages: run.session.history,
    tools: turnTools(run).specs,
    maxTokens: config.maxTokens,
    signal: run.signal,
  };
  if (config.system !== undefined) request.system = config.system;
  if (config.temperature !== undefined) request.temperature = config.temperature;
  if (config.thinkingBudget !== undefined) request.thinkingBudget = config.thinkingBudget;
  return request;
}

export function providerErrorEvent(turnId: string, error: unknown, during?: string): MidTurnEvent {
  const retryable = isRetryable(error);
  let message = (error as Error)?.message ?? String(error);
  if (error instanceof LlmRateLimitedError && error.retryAfterSecs !== undefined) {
    message = `${message} (retry after ${error.retryAfterSecs} s)`;
  }
  if (error instanceof LlmAuthenticationError) message = `authentication failed: ${message}`;
  if (error instanceof LlmModelNotFoundError) message = `model not found: ${message}`;
  if (during) message = `${during} failed: ${message}`;
  return { type: "error", turnId, failure: "provider", message, retryable };
}
