/**
 * nexo's canonical conversation → an Anthropic Messages API request body.
 *
 * The canonical shape is already Anthropic's, so this is mostly renaming, plus the API's rules:
 * tool results come first in a user turn, empty text blocks are refused, thinking can only be sent
 * back with the signature it came with, and `temperature` may not be set while thinking is on.
 * Prompt caching puts an ephemeral breakpoint on the last tool and on the system prompt, so both
 * prefixes are reused across the many requests of an agent loop.
 */
import type {
  Base64ImageSource,
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  TextBlockParam,
  Tool,
} from "@anthropic-ai/sdk/resources/messages";
import type { ChatMessage, ChatRequest, ContentBlock, ToolSpec } from "../types.js";

/** The smallest thinking budget the API accepts. */
export const MIN_THINKING_BUDGET = 1024;

const EPHEMERAL = { type: "ephemeral" } as const;

export interface AnthropicRequestOptions {
  /** Mark system prompt and tools with cache breakpoints (on unless turned off in llm.yaml). */
  promptCaching: boolean;
}

function userBlock(block: ContentBlock): ContentBlockParam | undefined {
  switch (block.type) {
    case "text":
      return block.text === "" ? undefined : { type: "text", text: block.text };
    case "image":
      return {
        type: "image",
        source: {
          type: "base64",
          media_type: block.mediaType as Base64ImageSource["media_type"],
          data: block.data,
        },
      };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: block.toolUseId,
        content: block.content,
        ...(block.isError ? { is_error: true } : {}),
      };
    // A user turn never carries the model's own thinking or tool calls; nothing to send.
    case "thinking":
    case "tool_use":
      return undefined;
  }
}

function assistantBlock(block: ContentBlock): ContentBlockParam | undefined {
  switch (block.type) {
    case "text":
      return block.text === "" ? undefined : { type: "text", text: block.text };
    case "thinking":
      // Without its signature the API rejects a thinking block, so an unsigned one (from another
      // provider, or the scripted model) is left out rather than failing the whole request.
      return block.signature
        ? { type: "thinking", thinking: block.text, signature: block.signature }
        : undefined;
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    case "image":
    case "tool_result":
      return undefined;
  }
}

export function toAnthropicMessages(messages: readonly ChatMessage[]): MessageParam[] {
  const turns: Array<{ role: ChatMessage["role"]; content: ContentBlockParam[] }> = [];
  for (const message of messages) {
    const map = message.role === "user" ? userBlock : assistantBlock;
    const content = message.content.map(map).filter((b): b is ContentBlockParam => b !== undefined);
    if (content.length === 0) continue;
    // The API wants strictly alternating roles; history edits (compaction, a dropped empty turn)
    // can leave two turns of one role in a row, which are merged.
    const previous = turns[turns.length - 1];
    if (previous && previous.role === message.role) previous.content.push(...content);
    else turns.push({ role: message.role, content });
  }
  for (const turn of turns) {
    if (turn.role !== "user") continue;
    // Tool results must open the user turn that answers the tool calls.
    turn.content = [
      ...turn.content.filter((b) => b.type === "tool_result"),
      ...turn.content.filter((b) => b.type !== "tool_result"),
    ];
  }
  return turns;
}

export function toAnthropicTools(tools: readonly ToolSpec[], promptCaching: boolean): Tool[] {
  return tools.map((tool, index) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { type: "object", ...tool.inputSchema } as Tool.InputSchema,
    ...(promptCaching && index === tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
  }));
}

export function toAnthropicParams(
  request: ChatRequest,
  model: string,
  options: AnthropicRequestOptions,
): MessageCreateParamsStreaming {
  // `temperature` is gone from this SDK's types (newer models reject sampling parameters), but
  // older models still take it, so it is sent when the caller sets one.
  const params: MessageCreateParamsStreaming & { temperature?: number } = {
    model,
    max_tokens: request.maxTokens,
    messages: toAnthropicMessages(request.messages),
    stream: true,
  };
  if (request.system) {
    const system: TextBlockParam = { type: "text", text: request.system };
    if (options.promptCaching) system.cache_control = EPHEMERAL;
    params.system = [system];
  }
  if (request.tools && request.tools.length > 0) {
    params.tools = toAnthropicTools(request.tools, options.promptCaching);
  }
  if (request.thinkingBudget !== undefined && request.thinkingBudget > 0) {
    const budget = Math.max(MIN_THINKING_BUDGET, Math.floor(request.thinkingBudget));
    params.thinking = { type: "enabled", budget_tokens: budget };
    // The budget must stay below max_tokens; the reply still gets the room the caller asked for.
    if (params.max_tokens <= budget) params.max_tokens = budget + request.maxTokens;
  } else if (request.temperature !== undefined) {
    params.temperature = request.temperature;
  }
  return params;
}
