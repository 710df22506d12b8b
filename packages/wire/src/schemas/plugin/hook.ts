/**
 * Hook handlers (plugin contract §5.z): `hook.on_hook`, a host → child request for plugins
 * declaring `[plugin.extends].hooks`. The reply is the host's HookResponse; `{}` means continue.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

export const HookOnHookParamsSchema = lazySchema("plugin.hook", () =>
  z.looseObject({
    plugin_id: z.string().min(1),
    /** The hook point being fired, e.g. `before_message`. */
    hook_name: z.string().min(1),
    /** The event under inspection; its shape depends on the hook point. */
    event: z.unknown().optional(),
  }),
);
export type HookOnHookParams = z.infer<typeof HookOnHookParamsSchema>;

export const HOOK_DECISIONS = ["allow", "block", "transform"] as const;
export const HookDecisionSchema = lazySchema("plugin.hook", () => z.enum(HOOK_DECISIONS));
export type HookDecision = z.infer<typeof HookDecisionSchema>;

/**
 * A hook's verdict. Every member is optional and the booleans default to `false`, so `{}` is the
 * "allow / no-op" reply. Optional members also accept `null`, which the reference host's decoder
 * treats as absent.
 */
export const HookResponseSchema = lazySchema("plugin.hook", () =>
  z.looseObject({
    /** Legacy block signal; still honoured alongside `decision`. */
    abort: z.boolean().default(false),
    reason: z.string().nullish(),
    /** Keys that replace the event's keys for later handlers; non-objects are ignored by the host. */
    override: z.unknown().optional(),
    decision: HookDecisionSchema.nullish(),
    /** The rewritten body; only meaningful with `decision: "transform"`. */
    transformed_body: z.string().nullish(),
    /** Anti-loop signal: suppress pending auto-replies for this conversation. */
    do_not_reply_again: z.boolean().default(false),
  }),
);
export type HookResponse = z.infer<typeof HookResponseSchema>;
export type HookResponseInput = z.input<typeof HookResponseSchema>;

export const HookOnHookResultSchema = HookResponseSchema;
export type HookOnHookResult = HookResponse;
