/**
 * One completion outside a conversation: flat `{role, content}` messages in, the text out. What a
 * plugin's `llm.complete` and a microapp's `nexo/admin/llm/complete` both run on a provider the
 * daemon already resolved, so the two services cannot drift apart.
 */
import type { ChatMessage, ChatRequest, LlmProvider, StopReason, Usage } from "../types.js";

export interface FlatMessage {
  /** `system` messages join the system prompt; `tool` is plain text (no call id to pair it with). */
  role: "system" | "user" | "assistant" | "tool";
  content: string;
}

export interface OneShotInput {
  model: string;
  systemPrompt?: string;
  messages: readonly FlatMessage[];
  maxTokens: number;
  temperature?: number;
  signal: AbortSignal;
}

/** The request for `input`, or undefined when it holds no message but system ones (nothing to answer). */
export function oneShotRequest(input: OneShotInput): ChatRequest | undefined {
  const system = [
    input.systemPrompt,
    ...input.messages.filter((m) => m.role === "system").map((m) => m.content),
  ]
    .filter((text): text is string => text !== undefined && text !== "")
    .join("\n\n");
  const messages: ChatMessage[] = input.messages
    .filter((m) => m.role !== "system")
    .map((m) => ({
      role: m.role === "assistant" ? "assistant" : "user",
      content: [{ type: "text", text: m.content }],
    }));
  if (messages.length === 0) return undefined;
  return {
    model: input.model,
    ...(system === "" ? {} : { system }),
    messages,
    maxTokens: input.maxTokens,
    ...(input.temperature === undefined ? {} : { temperature: input.temperature }),
    signal: input.signal,
  };
}

export interface OneShotResult {
  content: string;
  /** Tool calls the model made anyway (a one-shot offers no tools); callers decide what that means. */
  toolCalls: number;
  usage: Pick<Usage, "inputTokens" | "outputTokens">;
  stop: StopReason;
}

/**
 * Streams `request` to the end and collects it. `onText` sees each text delta as it arrives and is
 * awaited, so a slow reader slows the provider instead of growing a buffer. Provider errors reject.
 */
export async function runOneShot(
  provider: LlmProvider,
  request: ChatRequest,
  onText?: (text: string) => unknown,
): Promise<OneShotResult> {
  const result: OneShotResult = {
    content: "",
    toolCalls: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    stop: "end_turn",
  };
  for await (const event of provider.stream(request)) {
    if (event.type === "text_delta") {
      result.content += event.text;
      if (onText !== undefined && event.text !== "") await onText(event.text);
    } else if (event.type === "tool_call") {
      result.toolCalls += 1;
    } else if (event.type === "usage") {
      result.usage.inputTokens += event.usage.inputTokens ?? 0;
      result.usage.outputTokens += event.usage.outputTokens ?? 0;
    } else if (event.type === "stop") {
      result.stop = event.reason;
    }
  }
  return result;
}
