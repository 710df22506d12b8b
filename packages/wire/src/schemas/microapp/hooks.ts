/**
 * Hooks: the daemon calls `hooks/<name>` for each hook a microapp registered in its initialize
 * result, and the microapp answers with a vote. Abstaining is the default — a microapp that does
 * not understand a hook abstains rather than guesses, so a missing `vote` reads as `abstain`.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

export const HOOK_METHOD_PREFIX = "hooks/";

/** Hook names travel inside a method name, so `/` and whitespace are excluded. */
export const HOOK_NAME_REGEX = /^[A-Za-z0-9_.:-]+$/;

export const MicroappHookNameSchema = lazySchema("microapp.hooks", () =>
  z.string().regex(HOOK_NAME_REGEX, { message: "hook names use letters, digits, '_', '.', ':' and '-'" }),
);

/** `hooks/<name>` for a hook name. */
export function hookMethodName(hook: string): `hooks/${string}` {
  if (!HOOK_NAME_REGEX.test(hook)) throw new TypeError(`invalid hook name: ${JSON.stringify(hook)}`);
  return `${HOOK_METHOD_PREFIX}${hook}`;
}

/** The hook name of a `hooks/<name>` method, or undefined for any other method. */
export function hookNameFromMethod(method: string): string | undefined {
  if (!method.startsWith(HOOK_METHOD_PREFIX)) return undefined;
  const hook = method.slice(HOOK_METHOD_PREFIX.length);
  return HOOK_NAME_REGEX.test(hook) ? hook : undefined;
}

export const HOOK_VOTES = ["allow", "deny", "abstain"] as const;
export const MicroappHookVoteSchema = lazySchema("microapp.hooks", () => z.enum(HOOK_VOTES));
export type MicroappHookVote = z.infer<typeof MicroappHookVoteSchema>;

/** The hook's arguments; their shape depends on the hook. */
export const MicroappHookParamsSchema = lazySchema("microapp.hooks", () => z.unknown());
export type MicroappHookParams = z.infer<typeof MicroappHookParamsSchema>;

export const MicroappHookDecisionSchema = lazySchema("microapp.hooks", () =>
  z.looseObject({
    vote: MicroappHookVoteSchema.default("abstain"),
    /** Why; surfaced in logs and, for deny, to the agent. */
    reason: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  }),
);
export type MicroappHookDecision = z.infer<typeof MicroappHookDecisionSchema>;
