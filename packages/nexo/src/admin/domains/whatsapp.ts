/**
 * `nexo/admin/whatsapp/bot/*` (channels_crud): the AI bots an agent's linked account can talk to,
 * and a one-off message to one of them — through the channel plugin serving the agent's channel,
 * when that plugin offers bots (`channel.bots.list` / `channel.bots.send`).
 *
 * The channel is the agent's first inbound binding whose plugin offers bots (a WhatsApp binding,
 * for the WhatsApp plugin), with that binding's instance. An agent none of whose channels offers
 * bots — no binding, a channel no plugin serves here, a plugin without bots — is -32603
 * `channel_unavailable` with `data.feature: "bots"`; an unknown agent is -32603 `not_found`. A
 * bot's replies go to the plugin, never to the agent.
 */
import type { ChannelBots } from "../../channels/features.js";
import { ChannelUnavailableError, type DaemonServices } from "../../daemon/services/index.js";
import { defineAdminDomain } from "../domain.js";
import { viaService } from "../service-errors.js";

export const whatsappDomain = defineAdminDomain({
  domain: "whatsapp",
  handlers: ({ daemon }) =>
    daemon && {
      "nexo/admin/whatsapp/bot/list": ({ agent_id }) =>
        viaService(async () => {
          const { bots, instance } = await botsOf(daemon, agent_id);
          return { agent_id, bots: await bots.list({ agent_id, instance }) };
        }),

      "nexo/admin/whatsapp/bot/send": ({ agent_id, bot_jid, text }) =>
        viaService(async () => {
          const { bots, instance } = await botsOf(daemon, agent_id);
          return { msg_id: await bots.send({ agent_id, instance, bot_jid, text }) };
        }),
    },
});

async function botsOf(
  daemon: DaemonServices,
  agentId: string,
): Promise<{ bots: ChannelBots; instance: string | null }> {
  const bindings = (await daemon.agents.get(agentId)).inbound_bindings ?? [];
  for (const binding of bindings) {
    const bots = daemon.channels.optionalFeature(binding.plugin, "bots");
    if (bots !== undefined) return { bots, instance: binding.instance ?? null };
  }
  throw new ChannelUnavailableError(bindings[0]?.plugin ?? "whatsapp", "bots");
}
