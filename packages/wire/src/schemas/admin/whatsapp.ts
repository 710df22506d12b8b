/**
 * `nexo/admin/whatsapp/bot/*`: the AI bots a WhatsApp-bound agent's paired phone can talk to, and
 * a one-off message to one of them. Gated by channels_crud. Bot replies never reach the agent.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { NonEmptyStringSchema } from "./common.js";

export const WhatsappBotListParamsSchema = lazySchema("admin.whatsapp", () =>
  z.looseObject({ agent_id: NonEmptyStringSchema }),
);
export type WhatsappBotListParams = z.infer<typeof WhatsappBotListParamsSchema>;

export const WhatsappBotSchema = lazySchema("admin.whatsapp", () =>
  z.looseObject({
    /** e.g. `718584497008509@bot`. */
    jid: NonEmptyStringSchema,
    persona_id: z.string(),
  }),
);
export type WhatsappBot = z.infer<typeof WhatsappBotSchema>;

export const WhatsappBotListResultSchema = lazySchema("admin.whatsapp", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    bots: z.array(WhatsappBotSchema),
  }),
);
export type WhatsappBotListResult = z.infer<typeof WhatsappBotListResultSchema>;

export const WhatsappBotSendParamsSchema = lazySchema("admin.whatsapp", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    bot_jid: z.string().endsWith("@bot", { message: 'bot_jid must end in "@bot"' }),
    text: NonEmptyStringSchema,
  }),
);
export type WhatsappBotSendParams = z.infer<typeof WhatsappBotSendParamsSchema>;

/** The outbound message id; the bot's reply chunks refer to it. */
export const WhatsappBotSendResultSchema = lazySchema("admin.whatsapp", () =>
  z.looseObject({ msg_id: NonEmptyStringSchema }),
);
export type WhatsappBotSendResult = z.infer<typeof WhatsappBotSendResultSchema>;
