/**
 * `nexo/dispatch` (dispatch_outbound): a microapp sends one text message through a channel plugin —
 * the same adapter and the same `channel.send` the router uses for an agent's reply. A channel no
 * plugin serves here is -32603 `channel_unavailable`; the plugin's own refusals (unknown recipient,
 * rate limited, …) reach the microapp with the plugin's codes. `account_id` names the channel's
 * instance when the channel has several.
 */
import { defineAdminDomain } from "../domain.js";
import { DISPATCH_DOMAIN } from "../methods.js";
import { viaService } from "../service-errors.js";

export const dispatchDomain = defineAdminDomain({
  domain: DISPATCH_DOMAIN,
  handlers: ({ daemon }) =>
    daemon && {
      "nexo/dispatch": ({ channel, to, body, account_id }) =>
        viaService(async () => {
          const receipt = await daemon.channels.send(channel, {
            kind: "text",
            to,
            body,
            ...(account_id === undefined ? {} : { instance: account_id }),
          });
          return { msg_id: receipt.messageId };
        }),
    },
});
