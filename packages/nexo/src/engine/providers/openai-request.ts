/**
 * nexo's canonical conversation → an OpenAI Chat Completions request body.
 *
 * The system prompt becomes the first message; tool results leave the user turn and become
 * `tool` messages placed right after the assistant message that asked for them (the API requires
 * that order); tool calls carry their arguments as JSON text. Thinking is not sent back: servers
 * that stream `reasoning_content` (DeepSeek, vLLM) either ignore it or reject it on input.
 */
import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { ChatMessage, ChatRequest, ToolSpec } from "../types.js";

export interface OpenAiRequestOptions {
  /** `max_completion_tokens` (OpenAI's current name) or `max_tokens` (what most compatible servers take). */
  maxTokensParam: "max_tokens" | "max_completion_tokens";
  /** Ask for a final usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Send `reasoning_effort` derived from the thinking budget (OpenAI reasoning models only). */
  reasoningEffort: boolean;
}

function userMessages(message: ChatMessage): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  for (const block of message.content) {
    if (block.type !== "tool_result") continue;
    // Chat Completions has no error flag on tool results; the model is told in words.
    out.push({
      role: "tool",
      tool_call_id: block.toolUseId,
      content: block.isError ? `Error: ${block.content}` : block.content,
    });
  }
  const parts: ChatCompletionContentPart[] = [];
  for (const block of message.content) {
    if (block.type === "text" && block.text !== "") parts.push({ type: "text", text: block.text });
    if (block.type === "image") {
      parts.push({ type: "image_url", image_url: { url: `data:${block.mediaType};base64,${block.data}` } });
    }
  }
  if (parts.length > 0) {
    // Plain text goes as a string: several compatible servers accept only that form.
    const textOnly = parts.every((p) => p.type === "text");
    out.push({
      role: "user",
      content: textOnly ? parts.map((p) => (p.type === "text" ? p.text : "")).join("\n") : parts,
    });
  }
  return out;
}

function assistantMessage(message: ChatMessage): ChatCompletionMessageParam | undefined {
  const text = message.content
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("");
  const toolCalls = message.content
    .filter((b) => b.type === "tool_use")
    .map((b) => ({
      id: b.id,
      type: "function" as const,
      function: { name: b.name, arguments: JSON.stringify(b.input) },
    }));
  if (text === "" && toolCalls.length === 0) return undefined;
  return {
    role: "assistant",
    content: text === "" ? null : text,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
}

export function toOpenAiMessages(
  system: string | undefined,
  messages: readonly ChatMessage[],
): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (system) out.push({ role: "system", content: system });
  for (const message of messages) {
    if (message.role === "user") out.push(...userMessages(message));
    else {
      const mapped = assistantMessage(message);
      if (mapped) out.push(mapped);
    }
  }
  return out;
}

export function toOpenAiTools(tools: readonly ToolSpec[]): ChatCompletionTool[] {
  return tools.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  }));
}

/** OpenAI's reasoning models take an effort level, not a budget; the budget picks the level. */
export function reasoningEffortFor(budget: number): "low" | "medium" | "high" {
  if (budget <= 4096) return "low";
  if (budget <= 16_384) return "medium";
  return "high";
}

export function toOpenAiParams(
  request: ChatRequest,
  model: string,
  options: OpenAiRequestOptions,
): ChatCompletionCreateParamsStreaming {
  const params: ChatCompletionCreateParamsStreaming = {
    model,
    messages: toOpenAiMessages(request.system, request.messages),
    stream: true,
  };
  params[options.maxTokensParam] = request.maxTokens;
  if (options.includeUsage) params.stream_options = { include_usage: true };
  if (request.tools && request.tools.length > 0) params.tools = toOpenAiTools(request.tools);
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (options.reasoningEffort && request.thinkingBudget !== undefined && request.thinkingBudget > 0) {
    params.reasoning_effort = reasoningEffortFor(request.thinkingBudget);
  }
  return params;
}
