/**
 * A microapp's tool catalogue and hook list as `initialize` (and `tools/list`) announce them,
 * checked tool by tool: a tool whose name lacks the extension's prefix (`<id with - as _>_`), is
 * malformed or appears twice is rejected — left out, with an error naming it — and the others are
 * offered. One bad tool does not take down a microapp that also serves hooks and admin calls, and
 * the model never sees a tool that could collide with another extension's.
 */
import { formatIssues } from "@nexo/wire";
import * as microapp from "@nexo/wire/schemas/microapp";
import { z } from "zod";
import { disposableSchema } from "../../config/disposable-schema.js";
import { HOOK_NAME_TO_POINT } from "../plugins/hook.js";

/**
 * The initialize result with its tools left unread, so they can be checked one by one. Built on
 * use and let go (disposableSchema), as is the tools/list envelope: a microapp's handshake and a
 * catalogue refresh read them, nothing per call does. Each extends a fresh wire result schema (its
 * builder): extending the wire's kept lazy one would build that for the process's life.
 */
export const InitializeEnvelopeSchema = disposableSchema(() =>
  microapp.microappInitializeResultSchema().extend({
    tools: z.array(z.unknown()),
    hooks: z.array(z.unknown()).optional(),
  }),
);
export const ToolsListEnvelopeSchema = disposableSchema(() =>
  microapp.microappToolsListResultSchema().extend({
    tools: z.array(z.unknown()),
  }),
);

export interface MicroappCatalog {
  /** The accepted tools by name, in the order announced. */
  readonly tools: ReadonlyMap<string, microapp.MicroappToolDefinition>;
  /** One sentence per rejected tool. */
  readonly rejected: readonly string[];
}

export function checkToolCatalog(extensionId: string, announced: readonly unknown[]): MicroappCatalog {
  const tools = new Map<string, microapp.MicroappToolDefinition>();
  const rejected: string[] = [];
  announced.forEach((raw, index) => {
    const name = (raw as { name?: unknown } | null)?.name;
    const label = typeof name === "string" ? `tool "${name}"` : `tools[${index}]`;
    if (typeof name === "string") {
      const problem = microapp.microappToolNameProblem(extensionId, name);
      if (problem !== undefined) {
        rejected.push(`${problem}; rejected`);
        return;
      }
    }
    const parsed = microapp.MicroappToolDefinitionSchema.safeParse(raw);
    if (!parsed.success) {
      rejected.push(`${label} rejected: ${formatIssues(parsed.error.issues, "(tool)")}`);
      return;
    }
    if (tools.has(parsed.data.name)) {
      rejected.push(`${label} is announced twice; the second is rejected`);
      return;
    }
    tools.set(parsed.data.name, parsed.data);
  });
  return { tools, rejected };
}

export interface MicroappHooks {
  /** Hook names nexo fires, in the order announced. */
  readonly names: readonly string[];
  /** One sentence per announced hook that will never be called. */
  readonly ignored: readonly string[];
}

export function checkHooks(announced: readonly unknown[] | undefined): MicroappHooks {
  const names: string[] = [];
  const ignored: string[] = [];
  for (const raw of announced ?? []) {
    const parsed = microapp.MicroappHookNameSchema.safeParse(raw);
    if (!parsed.success) {
      ignored.push(`hook ${JSON.stringify(raw)} is not a hook name; ignored`);
    } else if (HOOK_NAME_TO_POINT[parsed.data] === undefined) {
      ignored.push(
        `hook "${parsed.data}" is not a hook point nexo fires (${Object.keys(HOOK_NAME_TO_POINT).join(", ")}); it will never be called`,
      );
    } else if (!names.includes(parsed.data)) {
      names.push(parsed.data);
    }
  }
  return { names, ignored };
}
