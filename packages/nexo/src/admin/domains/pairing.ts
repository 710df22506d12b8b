/**
 * `nexo/admin/pairing/*` (pairing_initiate): link a channel account (e.g. a WhatsApp phone by QR
 * code) through the channel plugin that serves the channel — the plugin drives the challenge, this
 * domain keeps it (channels/pairing.ts) and pushes every state change to the microapps holding
 * pairing_initiate as `nexo/notify/pairing_status_changed` `{challenge_id, state, data?, channel,
 * instance?}` (the same shape `status` answers).
 *
 * - start: an unknown agent is -32603 `not_found` (as agents/get); a channel whose plugin does not offer pairing, or that no
 *   plugin serves here, is -32603 `channel_unavailable`; the plugin's own refusal reaches the caller
 *   with the plugin's code. The answer comes before any notification about the challenge.
 * - status: an unknown (or long-ended) challenge is -32603 `not_found` (the reference's code).
 * - cancel: `{cancelled: false}` for an unknown or already ended challenge; otherwise the challenge
 *   ends `cancelled`, the plugin is told and the notification goes out.
 *
 * - start with `phone_number` (E.164, checked by the wire schema: -32602 otherwise) links by a
 *   pairing code instead of a QR code: the number is handed to the plugin and kept nowhere here
 *   (the audit row's hash is taken with it blanked, see ../audit.ts).
 *
 * Challenges are in memory only: a daemon restart drops them (a QR code lives for seconds). When
 * the daemon stops, every live challenge ends (its plugin told to stop showing the code, its
 * timer cleared); a plugin that cannot cancel one is logged.
 */
import type { ChannelPairing } from "../../channels/features.js";
import { PairingChallenges } from "../../channels/pairing.js";
import { NotFoundError } from "../../daemon/services/index.js";
import { defineAdminDomain } from "../domain.js";
import { viaService } from "../service-errors.js";

export const pairingDomain = defineAdminDomain({
  domain: "pairing",
  handlers: ({ daemon, notify, now }, { logger, onClose }) => {
    if (daemon === undefined) return undefined;
    const challenges = new PairingChallenges({
      pairingOf: (channel): ChannelPairing => daemon.channels.feature(channel, "pairing"),
      onChange: (status) => void notify?.("nexo/notify/pairing_status_changed", status),
      warn: (message, fields) => logger.warn(fields, message),
      ...(now === undefined ? {} : { now }),
    });
    onClose(() => challenges.close());
    return {
      "nexo/admin/pairing/start": ({ agent_id, channel, instance, phone_number }) =>
        viaService(async () => {
          await daemon.agents.get(agent_id);
          return challenges.start({ agentId: agent_id, channel, instance, phoneNumber: phone_number });
        }),

      "nexo/admin/pairing/status": ({ challenge_id }) =>
        viaService(() => {
          const status = challenges.status(challenge_id);
          if (status === undefined) throw new NotFoundError("pairing_challenge", challenge_id);
          return status;
        }),

      "nexo/admin/pairing/cancel": ({ challenge_id }) => ({ cancelled: challenges.cancel(challenge_id) }),
    };
  },
});
