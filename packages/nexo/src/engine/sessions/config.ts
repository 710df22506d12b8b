/**
 * Changing a loaded session's configuration — the model, extended thinking, the approval mode and
 * read-only (plan) mode — the one way every door does it (json-stream `set_config`, AppServer
 * `thread/configure`). A change applies from the session's next model request on; the running
 * request keeps what it started with.
 */
import type { AgentSession } from "../session.js";
import type { ApprovalMode, Tool } from "../types.js";

/** The thinking budget `thinking: on` grants when no budget is given and none was set before. */
export const DEFAULT_THINKING_BUDGET = 10_000;

export interface SessionConfigChange {
  model?: string;
  /** `off` drops extended thinking; `on` turns it on with `budget`, the current one, or the default. */
  thinking?: { enabled: false } | { enabled: true; budget?: number };
  mode?: ApprovalMode;
  /** Offer the model only read-only tools (the `info` category), so it can look and plan but not act. */
  readOnly?: boolean;
}

/** The tool filter each session had before read-only mode narrowed it (restored when it ends). */
const baseFilters = new WeakMap<AgentSession, ((tool: Tool) => boolean) | undefined>();

const readOnlyTool = (tool: Tool): boolean => tool.category === "info";

/**
 * Applies `change` to `session`; returns what changed, one phrase each ("model x", "thinking off",
 * "thinking on (budget N tokens)", "mode yolo", "read-only on"), for the door to report.
 */
export function applySessionConfig(session: AgentSession, change: SessionConfigChange): string[] {
  const changed: string[] = [];
  const { config } = session;
  if (change.model !== undefined && change.model !== config.model) {
    config.model = change.model;
    changed.push(`model ${change.model}`);
  }
  if (change.thinking?.enabled === false) {
    if (config.thinkingBudget !== undefined) changed.push("thinking off");
    delete config.thinkingBudget;
  } else if (change.thinking?.enabled) {
    const budget = change.thinking.budget ?? config.thinkingBudget ?? DEFAULT_THINKING_BUDGET;
    config.thinkingBudget = budget;
    changed.push(`thinking on (budget ${budget} tokens)`);
  }
  if (change.mode !== undefined && change.mode !== session.policy.mode) {
    session.policy.mode = change.mode;
    changed.push(`mode ${change.mode}`);
  }
  if (change.readOnly !== undefined) {
    if (!baseFilters.has(session)) baseFilters.set(session, config.toolFilter);
    const base = baseFilters.get(session);
    const wasReadOnly = config.toolFilter !== base;
    if (change.readOnly) {
      config.toolFilter = base ? (tool) => readOnlyTool(tool) && base(tool) : readOnlyTool;
    } else if (base) {
      config.toolFilter = base;
    } else {
      delete config.toolFilter;
    }
    if (wasReadOnly !== change.readOnly) changed.push(`read-only ${change.readOnly ? "on" : "off"}`);
  }
  return changed;
}
