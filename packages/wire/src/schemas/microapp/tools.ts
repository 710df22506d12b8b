/**
 * The tools a microapp exposes to agents, and the naming rule that keeps two microapps' tools from
 * colliding in one LLM catalogue: every tool name is `<extension_id>_<tool>`.
 *
 * The contract's own example shows how ids with hyphens map: extension `agent-creator` names its
 * tool `agent_creator_create`. The prefix is the id with every `-` written `_`, then `_`: the one
 * spelling, so a catalogue never holds `agent-creator_x` and `agent_creator_x` side by side. A
 * literal hyphenated prefix, a `/` or any other separator is rejected.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

/**
 * The shape of a well-formed namespaced tool name, independent of which extension owns it: a
 * prefix, an underscore, a tool part; letters, digits, `_` and `-` only (what LLM providers
 * accept in a tool name). Use isValidMicroappToolName to check the prefix against an extension.
 */
export const MICROAPP_TOOL_NAME_REGEX = /^[A-Za-z0-9-]+_[A-Za-z0-9_-]*[A-Za-z0-9-]$/;

const TOOL_PART_REGEX = /^[A-Za-z0-9_-]*[A-Za-z0-9-]$/;

/** The prefix every tool of this extension carries: the id with `-` as `_`, then `_`. */
export function microappToolPrefix(extensionId: string): string {
  return `${extensionId.replaceAll("-", "_")}_`;
}

/**
 * True when `name` is `<extension_id with - as _>_<tool>` for this extension: the prefix, then a
 * non-empty tool part in the tool-name alphabet.
 */
export function isValidMicroappToolName(extensionId: string, name: string): boolean {
  if (extensionId.length === 0 || !MICROAPP_TOOL_NAME_REGEX.test(name)) return false;
  const prefix = microappToolPrefix(extensionId);
  return name.startsWith(prefix) && TOOL_PART_REGEX.test(name.slice(prefix.length));
}

/**
 * Why `name` is not a tool name of this extension, in words a microapp author can act on, or
 * undefined when it is one.
 */
export function microappToolNameProblem(extensionId: string, name: string): string | undefined {
  if (isValidMicroappToolName(extensionId, name)) return undefined;
  const prefix = microappToolPrefix(extensionId);
  if (!name.startsWith(prefix))
    return `tool "${name}" is not prefixed "${prefix}" (tools of extension ${extensionId} are named ${prefix}<tool>)`;
  return `tool "${name}" is not a valid tool name (letters, digits, '_' and '-' after "${prefix}", not ending in '_')`;
}

/** A tool as `initialize` and `tools/list` declare it; `input_schema` is a JSON Schema object. */
export const MicroappToolDefinitionSchema = lazySchema("microapp.tools", () =>
  z.looseObject({
    name: z.string().regex(MICROAPP_TOOL_NAME_REGEX, {
      message: "tool names are <extension_id>_<tool> using letters, digits, '_' and '-'",
    }),
    description: z.string().optional(),
    input_schema: z.record(z.string(), z.unknown()),
  }),
);
export type MicroappToolDefinition = z.infer<typeof MicroappToolDefinitionSchema>;

/**
 * A tool catalogue checked against its extension: every name must carry the extension's prefix
 * and no name may appear twice. The daemon applies this on every initialize / tools/list.
 */
export function microappToolCatalogSchema(extensionId: string) {
  return z.array(MicroappToolDefinitionSchema).superRefine((tools, ctx) => {
    const seen = new Set<string>();
    tools.forEach((tool, index) => {
      const problem = microappToolNameProblem(extensionId, tool.name);
      if (problem !== undefined) ctx.addIssue({ code: "custom", path: [index, "name"], message: problem });
      if (seen.has(tool.name)) {
        ctx.addIssue({
          code: "custom",
          path: [index, "name"],
          message: `tool "${tool.name}" is declared twice`,
        });
      }
      seen.add(tool.name);
    });
  });
}
