/**
 * What a tools/call tells the microapp about where the call came from: the binding (which agent,
 * channel and account — the tenant key multi-tenant microapps partition data by) and the inbound
 * message that triggered the turn.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

export const MicroappBindingContextSchema = lazySchema("microapp.context", () =>
  z.looseObject({
    agent_id: z.string().min(1),
    channel: z.string().min(1).optional(),
    /** The account (tenant) on the channel side. */
    account_id: z.string().min(1).optional(),
    /** `<channel>:<account_id>`, stable across agents.yaml reloads. */
    binding_id: z.string().min(1).optional(),
    /** Position of the binding in the agent's binding list. */
    binding_index: z.number().int().nonnegative().optional(),
  }),
);
export type MicroappBindingContext = z.infer<typeof MicroappBindingContextSchema>;

/** The triggering message; `kind` names its origin (e.g. `whatsapp_message`). */
export const MicroappInboundRefSchema = lazySchema("microapp.context", () =>
  z.looseObject({
    kind: z.string().min(1),
    from: z.string().optional(),
    ts_ms: z.number().int().nonnegative().optional(),
    session_id: z.string().min(1).optional(),
  }),
);
export type MicroappInboundRef = z.infer<typeof MicroappInboundRefSchema>;
