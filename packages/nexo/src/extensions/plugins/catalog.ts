/**
 * The tool catalog a plugin advertises in its `initialize` reply, checked against its manifest
 * (plugin contract §4.1.1), with each tool's `input_schema` compiled once so that every call's
 * arguments are validated BEFORE `tool.invoke` reaches the child.
 *
 * - `extends.tools` non-empty → the reply must carry a non-empty `tools` array;
 * - a name advertised but not declared → hard failure (the plugin is refused);
 * - a name declared but not advertised → a warning, and calls to it get -33401 from the host;
 * - a schema whose structure is broken → hard failure naming the tool (the host could not validate
 *   calls). ajv itself compiles each schema on the tool's first call, not here (it stays unloaded
 *   in a daemon whose tools were not called yet); what only ajv finds then (a `$ref` resolving
 *   nowhere) refuses that call and every later one with -33402 naming the schema's problem, and
 *   `nexo plugin check` reports it (engine/tools/schema-validator.ts).
 */
import { ToolArgumentInvalidError, ToolNotFoundError } from "@nexo/wire";
import * as plugin from "@nexo/wire/schemas/plugin";
import { describeArgumentIssues } from "../../engine/tools/errors.js";
import type { ArgumentValidator, SchemaValidators } from "../../engine/tools/schema-validator.js";
import { PluginCatalogError } from "./errors.js";

export interface CatalogTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly validate: ArgumentValidator;
}

export class ToolCatalog {
  readonly pluginId: string;
  /** Advertised tools, in the order the plugin listed them. */
  readonly tools: ReadonlyMap<string, CatalogTool>;
  /** `[plugin.extends].tools` as declared. */
  readonly declared: readonly string[];
  /** Declared tools the running plugin did not advertise (calls to them get -33401). */
  readonly missing: readonly string[];
  private readonly releases: Array<() => void>;

  constructor(
    pluginId: string,
    tools: Map<string, CatalogTool>,
    declared: readonly string[],
    releases: Array<() => void>,
  ) {
    this.pluginId = pluginId;
    this.tools = tools;
    this.declared = declared;
    this.missing = declared.filter((name) => !tools.has(name));
    this.releases = releases;
  }

  /**
   * The tool a call may go to, after the host's own checks. Throws ToolNotFoundError (-33401) for
   * a tool the running plugin does not advertise, ToolArgumentInvalidError (-33402, the offending
   * fields in `details`) for arguments its schema refuses.
   */
  check(toolName: string, args: unknown): CatalogTool {
    const tool = this.tools.get(toolName);
    if (tool === undefined) {
      const message = this.declared.includes(toolName)
        ? `tool not found: "${toolName}" is declared by plugin "${this.pluginId}" but the running plugin does not advertise it`
        : `tool not found: plugin "${this.pluginId}" has no tool "${toolName}"`;
      throw new ToolNotFoundError(message, { tool_name: toolName, plugin_id: this.pluginId });
    }
    const issues = tool.validate(args);
    if (issues.length > 0) {
      throw new ToolArgumentInvalidError(
        `invalid argument: ${toolName}: ${describeArgumentIssues(issues)}`,
        issues.map((issue) => ({ path: issue.path, message: issue.message })),
      );
    }
    return tool;
  }

  /** Forgets the compiled schemas (the catalog of a previous incarnation). */
  release(): void {
    for (const release of this.releases.splice(0)) release();
  }
}

/** The camelCase spelling SDK users write by habit (the MCP spelling); the contract's key is snake_case. */
const MISSPELLED_SCHEMA_KEY = "inputSchema";

export interface BuiltCatalog {
  catalog: ToolCatalog;
  /** Tolerated drift, for the operator's log and `nexo plugin check`. */
  warnings: string[];
}

/** Applies §4.1.1 to an `initialize` reply. Throws PluginCatalogError listing every problem. */
export function buildToolCatalog(
  pluginId: string,
  declared: readonly string[],
  advertised: readonly plugin.RemoteToolDef[] | undefined,
  validators: SchemaValidators,
): BuiltCatalog {
  const problems: string[] = [];
  if (declared.length > 0 && (advertised === undefined || advertised.length === 0)) {
    problems.push(
      `the manifest declares tools (${declared.join(", ")}) but the initialize reply advertises none; a "tools" array is required`,
    );
  }
  const tools = new Map<string, CatalogTool>();
  const releases: Array<() => void> = [];
  const unvalidated: string[] = [];
  for (const def of advertised ?? []) {
    if (!declared.includes(def.name)) {
      problems.push(`tool "${def.name}" is advertised but not declared in [plugin.extends].tools`);
      continue;
    }
    if (!plugin.toolNameInNamespace(pluginId, def.name)) {
      problems.push(`tool "${def.name}" must be named ${pluginId}_* or ext_${pluginId}_*`);
      continue;
    }
    if (MISSPELLED_SCHEMA_KEY in def) {
      problems.push(
        `tool "${def.name}" spells its schema "${MISSPELLED_SCHEMA_KEY}"; the contract's key is "input_schema" (as written, its arguments would never be validated)`,
      );
      continue;
    }
    const inputSchema = def.input_schema ?? {};
    if (Object.keys(inputSchema).length === 0) unvalidated.push(def.name);
    try {
      const compiled = validators.compile(inputSchema);
      releases.push(compiled.release);
      tools.set(def.name, {
        name: def.name,
        description: def.description,
        inputSchema,
        validate: compiled.validate,
      });
    } catch (error) {
      problems.push(
        `tool "${def.name}" has an input_schema that cannot be compiled: ${(error as Error).message}`,
      );
    }
  }
  if (problems.length > 0) {
    for (const release of releases) release();
    throw new PluginCatalogError(problems);
  }
  const catalog = new ToolCatalog(pluginId, tools, declared, releases);
  const warnings = [
    ...catalog.missing.map(
      (name) =>
        `tool "${name}" is declared in [plugin.extends].tools but not advertised; calls to it get -33401`,
    ),
    ...unvalidated.map(
      (name) => `tool "${name}" advertises no input_schema, so its arguments are not validated`,
    ),
  ];
  return { catalog, warnings };
}
