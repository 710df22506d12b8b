/**
 * What the manifest declares against what the plugin implements: the advertised tool catalog must
 * be a subset of `[plugin.extends].tools` (a hard failure at the host, so a construction error
 * here), and a declared capability without a handler, or a handler for an undeclared one, is
 * reported on stderr.
 */
import { formatIssues } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import { ManifestError, PluginError } from "./errors.js";
import { logWarning } from "./log.js";
import type { ParsedManifest } from "./manifest.js";
import type { PluginAdapterOptions } from "./options.js";
import { type ToolDef, toolDefToJson } from "./tools.js";
import { toStrictJson } from "./wire.js";

/**
 * The catalog must be a subset of `[plugin.extends].tools`: the host kills a plugin advertising an
 * undeclared tool (§4.1.1), so the SDK fails at construction instead.
 */
export function checkToolCatalog(tools: ToolDef[], parsed: ParsedManifest): ToolDef[] {
  if (!Array.isArray(tools)) throw new PluginError("`tools` must be an array of ToolDef");
  if (tools.length === 0) return [];
  const declared = parsed.document.plugin.extends?.tools;
  const names = tools.map((tool) => tool.name);
  if (declared === undefined) {
    throw new ManifestError(
      `tools are advertised but the manifest has no [plugin.extends].tools list; advertised: ${names.join(", ")}`,
      "plugin.extends.tools",
    );
  }
  const undeclared = names.filter((name) => !declared.includes(name));
  if (undeclared.length > 0) {
    throw new ManifestError(
      `tool(s) not declared in [plugin.extends].tools [${declared.join(", ")}]: ${undeclared.join(", ")}`,
      "plugin.extends.tools",
    );
  }
  const seen = new Set<string>();
  tools.forEach((tool, index) => {
    const check = plugin.RemoteToolDefSchema.safeParse(toolDefToJson(tool));
    if (!check.success) {
      throw new PluginError(
        `tools[${index}] (${String(tool.name)}): ${formatIssues(check.error.issues, "(tool)")}`,
      );
    }
    if (seen.has(tool.name)) throw new PluginError(`tool "${tool.name}" is listed twice in \`tools\``);
    seen.add(tool.name);
    toStrictJson(tool.inputSchema ?? {}, `tools[${index}].inputSchema`);
  });
  return tools;
}

/** Declared capabilities without handlers (or the reverse) are almost always a mistake. */
export function warnAboutUnmatchedDeclarations(
  parsed: ParsedManifest,
  o: PluginAdapterOptions,
  hasToolHandler: boolean,
): void {
  const declared = parsed.document.plugin.extends ?? {};
  const backend = o.memoryBackend;
  const checks: Array<[string, string[] | undefined, boolean, string]> = [
    [
      "channels",
      declared.channels,
      Boolean(o.onChannelStart || o.onChannelStop || o.onChannelSendOutbound),
      "onChannelStart/onChannelStop/onChannelSendOutbound",
    ],
    ["llm_providers", declared.llm_providers, Boolean(o.onLlmChat), "onLlmChat"],
    [
      "memory_backends",
      declared.memory_backends,
      Boolean(backend?.vectorUpsert || backend?.vectorSearch || backend?.vectorDelete),
      "memoryBackend",
    ],
    ["hooks", declared.hooks, Boolean(o.onHook), "onHook"],
    ["tools", declared.tools, hasToolHandler, "onTool/onToolWithContext"],
  ];
  for (const [section, ids, handled, handlerName] of checks) {
    const hasIds = (ids?.length ?? 0) > 0;
    if (hasIds && !handled) {
      logWarning(
        `[plugin.extends].${section} is declared but no ${handlerName} handler is set: the host's calls will get -32601`,
      );
    } else if (!hasIds && handled) {
      logWarning(
        `${handlerName} is set but [plugin.extends].${section} is empty: the host will never call it`,
      );
    }
  }
}
