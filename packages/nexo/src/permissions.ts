/**
 * The words of tool permissions, declared once for the engine (which decides), the store (which
 * keeps a session's mode and grants) and the daemon's config (which sets an agent's mode and
 * allow-list). These are nexo's own words; doors translate them to their protocol's.
 */
import { z } from "zod";

/**
 * How much runs without asking: `default` asks for every tool that is not allow-listed or granted;
 * `auto_edit` also runs `info` and `edit` tools; `yolo` asks for nothing.
 */
export const APPROVAL_MODES = ["default", "auto_edit", "yolo"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];
export const ApprovalModeSchema = z.enum(APPROVAL_MODES);

/**
 * What a tool can do, which decides when it asks: `info` only reads, `edit` changes files in the
 * workspace, `exec` runs commands or sub-agents (and is what unknown tools count as), `mcp` acts
 * through an MCP server.
 */
export const TOOL_CATEGORIES = ["info", "edit", "exec", "mcp"] as const;
export type ToolCategory = (typeof TOOL_CATEGORIES)[number];
export const ToolCategorySchema = z.enum(TOOL_CATEGORIES);

/**
 * What an approval with scope "always" lets run without asking for the rest of the session —
 * no more than what the user saw (docs/engine.md, "Approvals"):
 * - `category`: every tool of a category (`info` and `edit` calls);
 * - `tool`: one tool by name (MCP tools, and tools that run no command line);
 * - `program`: plain invocations of one program by a command tool (`echo …` through Bash);
 * - `command`: exactly one command line (one that is not a plain invocation).
 */
export const ApprovalGrantSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("category"), category: ToolCategorySchema }),
  z.strictObject({ kind: z.literal("tool"), tool: z.string().min(1) }),
  z.strictObject({ kind: z.literal("program"), tool: z.string().min(1), program: z.string().min(1) }),
  z.strictObject({ kind: z.literal("command"), tool: z.string().min(1), command: z.string().min(1) }),
]);
export type ApprovalGrant = z.infer<typeof ApprovalGrantSchema>;

/** Whether two grants allow the same thing. */
export function sameGrant(a: ApprovalGrant, b: ApprovalGrant): boolean {
  switch (a.kind) {
    case "category":
      return b.kind === "category" && a.category === b.category;
    case "tool":
      return b.kind === "tool" && a.tool === b.tool;
    case "program":
      return b.kind === "program" && a.tool === b.tool && a.program === b.program;
    case "command":
      return b.kind === "command" && a.tool === b.tool && a.command === b.command;
  }
}
