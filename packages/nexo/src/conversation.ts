/**
 * Conversation content: one canonical shape (content blocks in the style of the Anthropic
 * Messages API) shared by the engine, which each provider translates to and from its wire format,
 * and the store, which persists it. It lives below both so that neither imports the other.
 */

export interface TextBlock {
  type: "text";
  text: string;
}
export interface ThinkingBlock {
  type: "thinking";
  text: string;
  /** Anthropic's signature, needed to send thinking back in a later request. */
  signature?: string;
}
export interface ImageBlock {
  type: "image";
  mediaType: string;
  /** base64 */
  data: string;
}
export interface ToolUseBlock {
  type: "tool_use";
  /** The call id, unique within the session. */
  id: string;
  name: string;
  input: Record<string, unknown>;
}
export interface ToolResultBlock {
  type: "tool_result";
  toolUseId: string;
  content: string;
  isError?: boolean;
}

export type ContentBlock = TextBlock | ThinkingBlock | ImageBlock | ToolUseBlock | ToolResultBlock;

export interface ChatMessage {
  role: "user" | "assistant";
  content: ContentBlock[];
}
