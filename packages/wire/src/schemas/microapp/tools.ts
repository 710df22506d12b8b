/**
 * The tools a microapp exposes to agents, and the naming rule that keeps two microapps' tools from
 * colliding in one LLM catalogue: every tool name is `<extension_id>_<tool>`.
 *
 * The contract's own example shows how ids with hyphens map: extension `agent-creator` names its
 * tool `agent_creator_create`, because LLM tool names conventionally avoid `-` in the namespace
 * part. Both the literal id and that underscore form are accepted as the prefix; a `/` or any
 * other separator is not.
 */
import { z } from "zod";

/**
 * The shape of a well-formed namespaced tool name, independent of which extension owns it: a
 * prefix, an underscore, a tool part; letters, digits, `_` and `-` only (what LLM providers
 * accept in a tool name). Use isValidMicroappToolName to check the prefix against an extension.
 */
export const MICROAPP_TOOL_NAME_REGEX = /^[A-Za-z0-9-]+_[A-Za-z0-9_-]*[A-Za-z0-9-]$/;

const TOOL_PART_REGEX = /^[A-Za-z0-9_-]*[A-Za-z0-9-]$/;

/** The prefixes a tool of this extension may carry, literal id first. */
export function microappToolPrefixes(extensionId: string): string[] {
  const literal = `${extensionId}_`;
  const underscored = `${extensionId.replaceAll("-", "_")}_`;
  return literal === underscored ? [literal] : [literal, underscored];
}

/**
 * True when `name` is `<extension_id>_<tool>` for this extension: the extension's prefix
 * (literal or with `-` as `_`), then a non-empty tool part in the tool-name alphabet.
 */
export function isValidMicroappToolName(extensionId: string, name: string): boolean {
  if (extensionId.length === 0 || !MICROAPP_TOOL_NAME_REGEX.test(name)) return false;
  return microappToolPrefixes(extensionId).some(
    (prefix) => name.startsWith(prefix) && TOOL_PART_REGEX.test(name.slice(prefix.length)),
  );
}

/** A tool as `initialize` and `tools/list` declare it; `input_schema` is a JSON Schema object. */
export const MicroappToolDefinitionSchema = z.looseObject({
  name: z.string().regex(MICROAPP_TOOL_NAME_REGEX, {
    message: "tool names are <extension_id>_<tool> using letters, digits, '_' and '-'",
  }),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
});
export type MicroappToolDefinition = z.infer<typeof MicroappToolDefinitionSchema>;

/**
 * A tool catalogue checked against its extension: every name must carry the extension's prefix
 * and no name may appear twice. The daemon applies this on every initialize / tools/list.
 */
export function microappToolCatalogSchema(extensionId: string) {
  return z.array(MicroappToolDefinitionSchema).superRefine((tools, ctx) => {
    const seen = new Set<string>();
    tools.forEach((tool, index) => {
      if (!isValidMicroappToolName(extensionId, tool.name)) {
        const expected = microappToolPrefixes(extensionId).join(`" or "`);
        ctx.addIssue({
          code: "custom",
          path: [index, "name"],
          message: `tool "${tool.name}" must be prefixed "${expected}" (extension ${extensionId})`,
        });
      }
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
