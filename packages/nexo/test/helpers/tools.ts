/** A ToolContext for calling tools directly in tests: session "s", agent "a", call "c", confined. */
import type { ToolContext } from "../../src/engine/types.js";

export function toolContext(workspace: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    signal: new AbortController().signal,
    sessionId: "s",
    agentId: "a",
    callId: "c",
    workspace,
    unconfined: false,
    ...overrides,
  };
}
