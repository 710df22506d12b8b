/**
 * The rules for `[plugin.extends].tools` (plugin contract §2.1, §4.1.1), applied by the host
 * instead of the wire schema's generic id rule.
 *
 * DECISION (documented in docs/plugins.md): a tool name may be up to 64 characters,
 * `^[a-z][a-z0-9_]{0,63}$`. The contract gives every `[plugin.extends]` id the 32-character slug
 * rule *and* requires tool names to start with `<plugin_id>_` or `ext_<plugin_id>_`; with a
 * 32-character plugin id both cannot hold. 64 is also the longest tool name the LLM vendors
 * accept, which is where a tool name ends up. The other rules stay as the contract states them:
 * the per-plugin namespace, no duplicates within the list, and no id shared with another
 * `[plugin.extends]` list.
 */
import * as plugin from "@nexo/wire/schemas/plugin";
import type { PathSegment } from "../../config/errors.js";

export const TOOL_NAME_MAX_LENGTH = 64;
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

export interface ToolNameIssue {
  path: PathSegment[];
  message: string;
}

const TOOLS_PATH: PathSegment[] = ["plugin", "extends", "tools"];

/**
 * Checks `tools` (the raw TOML value of `plugin.extends.tools`) given the plugin id and the other
 * extends lists as written. Returns one issue per problem, each with its TOML path.
 */
export function toolListIssues(tools: unknown, pluginId: unknown, extendsTable: unknown): ToolNameIssue[] {
  if (tools === undefined) return [];
  if (!Array.isArray(tools)) return [{ path: TOOLS_PATH, message: "expected an array of tool names" }];
  const issues: ToolNameIssue[] = [];
  const otherLists = claimedIds(extendsTable);
  const seen = new Set<string>();
  tools.forEach((name: unknown, index) => {
    const path = [...TOOLS_PATH, index];
    if (typeof name !== "string") {
      issues.push({ path, message: "expected a string" });
      return;
    }
    if (!TOOL_NAME_PATTERN.test(name)) {
      issues.push({
        path,
        message: `"${name}" must match ^[a-z][a-z0-9_]{0,63}$ (lowercase, digits and _, at most ${TOOL_NAME_MAX_LENGTH} chars)`,
      });
      return;
    }
    if (seen.has(name)) {
      issues.push({ path, message: `"${name}" is listed twice in tools` });
      return;
    }
    seen.add(name);
    const owner = otherLists.get(name);
    if (owner !== undefined) {
      issues.push({
        path,
        message: `"${name}" is already declared in ${owner}; an id may occupy only one [plugin.extends] list`,
      });
      return;
    }
    if (typeof pluginId === "string" && !plugin.toolNameInNamespace(pluginId, name)) {
      issues.push({ path, message: `tool "${name}" must be named ${pluginId}_* or ext_${pluginId}_*` });
    }
  });
  return issues;
}

function claimedIds(extendsTable: unknown): Map<string, string> {
  const claimed = new Map<string, string>();
  if (extendsTable === null || typeof extendsTable !== "object") return claimed;
  for (const section of plugin.EXTENDS_SECTIONS) {
    if (section === "tools") continue;
    const list = (extendsTable as Record<string, unknown>)[section];
    if (!Array.isArray(list)) continue;
    for (const id of list) if (typeof id === "string" && !claimed.has(id)) claimed.set(id, section);
  }
  return claimed;
}

/**
 * A copy of the raw manifest document without `plugin.extends.tools`, so the wire schema checks
 * everything else while the tool list gets the rules above. Anything that is not a table is left
 * as it is for the schema to complain about.
 */
export function withoutToolList(document: unknown): { rest: unknown; tools: unknown } {
  if (!isTable(document) || !isTable(document.plugin) || !isTable(document.plugin.extends)) {
    return { rest: document, tools: undefined };
  }
  const { tools, ...otherLists } = document.plugin.extends;
  return {
    rest: { ...document, plugin: { ...document.plugin, extends: otherLists } },
    tools,
  };
}

function isTable(value: unknown): value is Record<string, unknown> & { plugin?: unknown; extends?: unknown } {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
