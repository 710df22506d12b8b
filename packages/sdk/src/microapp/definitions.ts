/**
 * What a microapp declares — its tools and hooks — and the rules checked where each is defined, so
 * a mistake fails on the author's machine instead of at the daemon's boot: tool names are
 * `<extension id>_<tool>` with the id's `-` written `_` (extension `agent-creator` names its tools
 * `agent_creator_<tool>`), the rule the daemon applies; no name twice; hook names usable in a
 * method name.
 */
import type { ResultIn } from "@nexo/wire";
import type { microapp } from "@nexo/wire/schemas";
import { microapp as schemas } from "@nexo/wire/schemas";
import type { AdminClient } from "./admin-client.js";
import { MicroappDefinitionError } from "./errors.js";
import type { MicroappLogger } from "./log.js";

type Awaitable<T> = T | Promise<T>;

/** What every handler receives besides its params. */
export interface HandlerContext {
  /** Aborted when the daemon goes away or shutdown stops waiting for this call. */
  readonly signal: AbortSignal;
  /** The admin RPC (the same client as `app.admin`). */
  readonly admin: AdminClient;
  readonly log: MicroappLogger;
}

/** What a tool handler receives besides the agent's arguments. */
export interface ToolContext extends HandlerContext {
  /** The tool's full name. */
  readonly tool: string;
  /** Which agent, channel and account fired the call (`account_id` is the tenant key). */
  readonly binding: microapp.MicroappBindingContext;
  /** The message that triggered the turn; absent for turns no message triggered. */
  readonly inbound: microapp.MicroappInboundRef | undefined;
}

/**
 * A tool's handler. What it returns is the `output` (any JSON; the agent sees it stringified);
 * `undefined` is sent as `null`. Throw `ToolFailure` for a failure the agent should read.
 */
export type ToolHandler<Args> = (args: Args, ctx: ToolContext) => unknown;

export interface ToolSpec<Args = Record<string, unknown>> {
  /** `<extension id with - as _>_<tool>`: letters, digits, `_` and `-`. */
  name: string;
  description?: string;
  /** JSON Schema of the arguments; default `{type: "object"}`. */
  inputSchema?: Record<string, unknown>;
  handler: ToolHandler<Args>;
}

export interface HookContext extends HandlerContext {
  /** The hook's name (the `<name>` of `hooks/<name>`). */
  readonly hook: string;
}

/** A hook's vote (`allow`, `deny`, `abstain`), with an optional reason and metadata. */
export type HookDecision = ResultIn<{ hook: typeof schemas.microappHookMethod }, "hook">;
/** Returning nothing abstains. */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler without a return statement abstains
export type HookHandler = (params: unknown, ctx: HookContext) => Awaitable<HookDecision | void>;

/** The catalogue entry `initialize` and `tools/list` send for a tool. */
export function toolDefinition(spec: ToolSpec<never>): microapp.MicroappToolDefinition {
  const definition: microapp.MicroappToolDefinition = {
    name: spec.name,
    input_schema: spec.inputSchema ?? { type: "object" },
  };
  if (spec.description !== undefined) definition.description = spec.description;
  return definition;
}

/** Throws MicroappDefinitionError unless `spec` is a well-formed tool of extension `id`. */
export function checkToolSpec(id: string, spec: ToolSpec<never>, taken: ReadonlySet<string>): void {
  if (spec === null || typeof spec !== "object") {
    throw new MicroappDefinitionError("a tool is an object {name, description?, inputSchema?, handler}");
  }
  const { name } = spec;
  if (typeof name !== "string") throw new MicroappDefinitionError("a tool's name must be a string");
  const problem = schemas.microappToolNameProblem(id, name);
  if (problem !== undefined) throw new MicroappDefinitionError(problem);
  if (taken.has(name)) throw new MicroappDefinitionError(`tool "${name}" is defined twice`);
  if (typeof spec.handler !== "function") {
    throw new MicroappDefinitionError(`tool "${name}": handler must be a function`);
  }
  const schema = spec.inputSchema;
  if (schema !== undefined && (schema === null || typeof schema !== "object" || Array.isArray(schema))) {
    throw new MicroappDefinitionError(`tool "${name}": inputSchema must be a JSON Schema object`);
  }
  if (spec.description !== undefined && typeof spec.description !== "string") {
    throw new MicroappDefinitionError(`tool "${name}": description must be a string`);
  }
}

/** Throws MicroappDefinitionError unless `name` can be served as `hooks/<name>`, once. */
export function checkHook(name: string, handler: HookHandler, taken: ReadonlySet<string>): void {
  if (typeof name !== "string" || !schemas.HOOK_NAME_REGEX.test(name)) {
    throw new MicroappDefinitionError(
      `hook ${JSON.stringify(name)}: hook names use letters, digits, '_', '.', ':' and '-'`,
    );
  }
  if (taken.has(name)) throw new MicroappDefinitionError(`hook "${name}" is defined twice`);
  if (typeof handler !== "function")
    throw new MicroappDefinitionError(`hook "${name}": handler must be a function`);
}

/** Checks the extension id a microapp declares against the rule of extensions.yaml keys. */
export function checkExtensionId(id: unknown): asserts id is string {
  if (typeof id !== "string" || !schemas.EXTENSION_ID_PATTERN.test(id)) {
    throw new MicroappDefinitionError(
      `the microapp id must be its extension id (1-32 chars of a-z, 0-9, '_' and '-', starting with a letter), got ${JSON.stringify(id)}`,
    );
  }
}
