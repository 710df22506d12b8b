/**
 * The tool registry: one namespace for built-ins, MCP tools, plugin tools and microapp tools.
 *
 * Names are unique across sources (a clash is refused, never silently shadowed). Each tool's input
 * schema is checked at registration, so a structurally broken schema fails loudly there, and
 * compiled by ajv on the tool's first call; nexo's own built-in tools, whose schemas a test proves
 * valid, skip the check (schema-validator.ts says when what is checked, and why). `invoke` is the only way the engine runs a tool: it validates, executes, caps the
 * output, and turns every failure into an error output the model can read.
 */
import type { Tool, ToolCategory, ToolContext, ToolOutput, ToolSpec } from "../types.js";
import {
  DuplicateToolError,
  InvalidToolError,
  type ToolArgumentIssue,
  ToolArgumentsError,
  UnknownToolError,
} from "./errors.js";
import { type ArgumentValidator, SchemaValidators, trustedValidator } from "./schema-validator.js";
import { closeNames } from "./suggest.js";
import { errorOutput } from "./tool-output.js";
import { truncateHead } from "./truncate.js";

/** Default cap on a tool output's text: 100 KB. */
export const DEFAULT_MAX_OUTPUT_BYTES = 100 * 1024;

/** Names every provider accepts (Anthropic and OpenAI both limit tool names to this shape). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface ToolRegistryOptions {
  /** Text outputs longer than this (UTF-8 bytes) are cut, with a marker. Images are not cut. */
  readonly maxOutputBytes?: number;
}

export type ToolValidation =
  | { ok: true }
  | { ok: false; error: ToolArgumentsError | UnknownToolError; issues: readonly ToolArgumentIssue[] };

/** The verdict on valid arguments: one object for every call, not one made per call. */
const VALID: ToolValidation = Object.freeze({ ok: true });

interface Entry {
  tool: Tool;
  validate: ArgumentValidator;
  release: () => void;
  /** What the model is told about the tool (frozen: `specs` hands the same object out every time). */
  spec: ToolSpec;
}

/** A tool's spec, made once when it is registered (a tool's name, description and schema are fixed). */
function specOf(tool: Tool): ToolSpec {
  return Object.freeze({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
}

export class ToolRegistry {
  private readonly entries = new Map<string, Entry>();
  /**
   * Every tool's spec, in registration order, until the next `register` or `unregister`: a turn
   * asks for them before each model call, and the unfiltered list is the same until the tools
   * change. Frozen, since every caller gets the same array.
   */
  private allSpecs: readonly ToolSpec[] | undefined;
  private readonly validators = new SchemaValidators();
  private readonly maxOutputBytes: number;

  constructor(options: ToolRegistryOptions = {}) {
    const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    if (!Number.isInteger(max) || max < 1)
      throw new RangeError(`maxOutputBytes must be a positive integer, got ${max}`);
    this.maxOutputBytes = max;
  }

  /** Adds a tool. Throws `DuplicateToolError` on a name clash, `InvalidToolError` on a bad name or schema. */
  register(tool: Tool): void {
    const existing = this.entries.get(tool.name);
    if (existing !== undefined) throw new DuplicateToolError(tool.name, existing.tool.source, tool.source);
    if (!TOOL_NAME.test(tool.name)) {
      throw new InvalidToolError(tool.name, tool.source, "names must be 1-64 characters of A-Z a-z 0-9 _ -");
    }
    const schema = tool.inputSchema as unknown;
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
      throw new InvalidToolError(tool.name, tool.source, "inputSchema must be a JSON Schema object");
    }
    if (tool.inputSchema.type !== "object") {
      throw new InvalidToolError(
        tool.name,
        tool.source,
        'inputSchema must describe an object ("type": "object")',
      );
    }
    if (tool.source === "builtin") {
      this.add(tool, trustedValidator(tool.inputSchema), () => {});
      return;
    }
    let compiled: { validate: ArgumentValidator; release: () => void };
    try {
      compiled = this.validators.compile(tool.inputSchema);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new InvalidToolError(tool.name, tool.source, `invalid inputSchema: ${reason}`, { cause: error });
    }
    this.add(tool, compiled.validate, compiled.release);
  }

  private add(tool: Tool, validate: ArgumentValidator, release: () => void): void {
    this.entries.set(tool.name, { tool, validate, release, spec: specOf(tool) });
    this.allSpecs = undefined;
  }

  /** Adds several tools; stops at the first one that cannot be registered (those before it stay). */
  registerAll(tools: Iterable<Tool>): void {
    for (const tool of tools) this.register(tool);
  }

  /** Removes a tool; false when no tool had that name. */
  unregister(name: string): boolean {
    const entry = this.entries.get(name);
    if (entry === undefined) return false;
    entry.release();
    this.entries.delete(name);
    this.allSpecs = undefined;
    return true;
  }

  get(name: string): Tool | undefined {
    return this.entries.get(name)?.tool;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** All tools in registration order. */
  list(): Tool[] {
    return [...this.entries.values()].map((entry) => entry.tool);
  }

  /**
   * What the model is told about the tools (all of them, or those `filter` keeps). All of them is
   * one array shared until the tools change, frozen like the specs in it.
   */
  specs(filter?: (tool: Tool) => boolean): readonly ToolSpec[] {
    if (filter === undefined) {
      this.allSpecs ??= Object.freeze(Array.from(this.entries.values(), (entry) => entry.spec));
      return this.allSpecs;
    }
    const kept: ToolSpec[] = [];
    for (const entry of this.entries.values()) if (filter(entry.tool)) kept.push(entry.spec);
    return kept;
  }

  /** The approval category of a call; a name nobody registered counts as `exec`, as the spec says. */
  categoryOf(name: string): ToolCategory {
    return this.get(name)?.category ?? "exec";
  }

  /** One human line for a call: the tool's own `describe`, or its name when it has none or fails. */
  describe(name: string, args: Record<string, unknown>): string {
    const tool = this.get(name);
    if (tool?.describe === undefined) return name;
    try {
      return tool.describe(args);
    } catch {
      return name;
    }
  }

  /** Checks `args` against the tool's schema; the error lists every offending field. */
  validate(name: string, args: unknown): ToolValidation {
    const entry = this.entries.get(name);
    if (entry === undefined) {
      return { ok: false, error: this.unknownTool(name), issues: [] };
    }
    const issues = entry.validate(args);
    if (issues.length === 0) return VALID;
    return { ok: false, error: new ToolArgumentsError(name, issues), issues };
  }

  private unknownTool(name: string): UnknownToolError {
    return new UnknownToolError(name, closeNames(name, this.entries.keys()));
  }

  /**
   * Validates and runs a call. Never throws: an unknown tool, bad arguments, a thrown error or a
   * malformed result all come back as an error output. Text output is capped.
   */
  async invoke(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
    // The entry is looked up once here (not again by `validate`): this runs for every tool call.
    const entry = this.entries.get(name);
    if (entry === undefined) return errorOutput(this.unknownTool(name).message);
    const issues = entry.validate(args);
    if (issues.length > 0) return errorOutput(new ToolArgumentsError(name, issues).message);
    const tool = entry.tool;
    if (ctx.signal.aborted) return errorOutput(`${name} was cancelled before it started`);
    let result: ToolOutput;
    try {
      result = await tool.execute(args, ctx);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return errorOutput(`${name} failed: ${reason}`);
    }
    if (typeof result !== "object" || result === null || typeof result.output !== "string") {
      return errorOutput(`${name} failed: it returned no text output`);
    }
    return this.capOutput(result);
  }

  private capOutput(result: ToolOutput): ToolOutput {
    // An image is base64 that only means something whole; its tool bounds its size instead.
    if (result.outputType === "image") return result;
    const { text, cutBytes } = truncateHead(result.output, this.maxOutputBytes);
    if (cutBytes === 0) return result;
    return { ...result, output: text, metadata: { ...result.metadata, truncated_bytes: cutBytes } };
  }
}
