/**
 * Tool-call arguments arrive from the model as JSON text, streamed in fragments. A model can send
 * broken JSON or a non-object; that must become a clear provider error naming the tool, never an
 * exception from deep inside a parser.
 */
import { LlmProviderError } from "./errors.js";

export function parseToolArguments(raw: string, toolName: string, provider: string): Record<string, unknown> {
  if (raw.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new LlmProviderError(
      `${provider}: the model sent invalid JSON arguments for tool "${toolName}" (${(error as Error).message}): ${preview(raw)}`,
      { provider, retryable: false, tool: toolName },
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new LlmProviderError(
      `${provider}: the arguments for tool "${toolName}" must be a JSON object, got ${preview(raw)}`,
      { provider, retryable: false, tool: toolName },
    );
  }
  return value as Record<string, unknown>;
}

function preview(raw: string): string {
  return raw.length > 200 ? `${raw.slice(0, 200)}…` : raw;
}
