/**
 * Requests a microapp sends the daemon (ids prefixed `app:`), each gated by a capability the
 * operator granted in extensions.yaml. `nexo/dispatch` is defined here; the `nexo/admin/*` family
 * is the admin RPC (../admin).
 */
import { z } from "zod";
import type { AdminCapability } from "../admin/capabilities.js";
import { type MethodSchema, method } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";

/** Send a message through a channel plugin (e.g. WhatsApp). */
export const MicroappDispatchParamsSchema = lazySchema("microapp.outbound", () =>
  z.looseObject({
    /** The recipient, in the channel's addressing (a phone number, a chat id, …). */
    to: z.string().min(1),
    channel: z.string().min(1),
    body: z.string(),
    /** Which of the channel's accounts sends; absent: the channel's default. */
    account_id: z.string().min(1).optional(),
  }),
);
export type MicroappDispatchParams = z.infer<typeof MicroappDispatchParamsSchema>;

export const MicroappDispatchResultSchema = lazySchema("microapp.outbound", () =>
  z.looseObject({
    /** The provider's message id, when the channel reports one. */
    msg_id: z.string().optional(),
  }),
);
export type MicroappDispatchResult = z.infer<typeof MicroappDispatchResultSchema>;

export interface MicroappOutboundMethodSchema<
  P extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> extends MethodSchema<P, R> {
  capability: AdminCapability;
}

export const microappOutboundMethods = {
  "nexo/dispatch": {
    ...method(MicroappDispatchParamsSchema, MicroappDispatchResultSchema),
    capability: "dispatch_outbound",
  },
} as const satisfies Record<string, MicroappOutboundMethodSchema>;
export type MicroappOutboundMethodName = keyof typeof microappOutboundMethods;
