/**
 * The WhatsApp channel's settings, all from the plugin's environment (the manifest's defaults,
 * overridden by `env:` for the plugin in plugins.yaml). Read at every `channel.start`.
 *
 *   WHATSAPP_ALLOWED_NUMBERS   who may talk to the agent: phone numbers in international form
 *                              (digits, `+` optional) or JIDs, comma-separated, or `*` for anyone
 *                                                                               default nobody
 *   WHATSAPP_GROUPS            group chats: off (ignored) | all (every message from an allowed
 *                              member reaches the agent; the group is one conversation)
 *                                                                               default off
 *   WHATSAPP_OUTBOUND_ALLOWED  chats the account may send to: known (that wrote to it) | * | numbers
 *                                                                               default known
 *   WHATSAPP_READ_RECEIPTS     on | off: mark accepted messages read (blue ticks) default on
 *   WHATSAPP_TYPING            on | off: "typing…" while the agent works on a message  default on
 *   WHATSAPP_RATE_PER_MINUTE   inbound messages per person per minute            default 20
 *   WHATSAPP_SEND_PER_MINUTE   outbound messages per chat per minute             default 20
 *   WHATSAPP_MEDIA_MAX_BYTES   largest inbound media downloaded                  default 20971520
 *   WHATSAPP_MEDIA_DIRS        local directories files may be sent from (comma-separated)
 *                                                                               default $NEXO_STATE_DIR/media/out
 *   WHATSAPP_SEND_WAIT_MS      how long channel.send_outbound waits for WhatsApp before it answers
 *                              "queued"                                         default 15000
 *   WHATSAPP_RECONNECT_MAX_MS  the longest wait between reconnection attempts   default 60000
 *   WHATSAPP_SOCKET_MODULE     tests only: a module whose makeSocket/downloadMedia replace
 *                              Baileys' (see transport.ts); unset in every real deployment
 */
import { join } from "node:path";
import { Allowlist, ChannelConfigError, envInteger, envOneOf } from "@nexo/channels-common";
import { normalisePhoneList } from "./address.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface WhatsAppConfig {
  stateDir: string;
  allowed: Allowlist;
  groups: "off" | "all";
  outboundAllowed: string | undefined;
  readReceipts: boolean;
  typing: boolean;
  ratePerMinute: number;
  sendPerMinute: number;
  mediaMaxBytes: number;
  mediaDirs: string[];
  sendWaitMs: number;
  reconnectMaxMs: number;
  socketModule: string | undefined;
}

export function readWhatsAppConfig(env: Env): WhatsAppConfig {
  const stateDir = env.NEXO_STATE_DIR?.trim() || process.cwd();
  const mediaDirs = (env.WHATSAPP_MEDIA_DIRS ?? "")
    .split(",")
    .map((dir) => dir.trim())
    .filter((dir) => dir !== "");
  const socketModule = env.WHATSAPP_SOCKET_MODULE?.trim() || undefined;
  if (socketModule !== undefined && !socketModule.startsWith("/"))
    throw new ChannelConfigError("WHATSAPP_SOCKET_MODULE", "must be an absolute path");
  const outbound = env.WHATSAPP_OUTBOUND_ALLOWED?.trim();
  return {
    stateDir,
    allowed: Allowlist.parse(normalisePhoneList(env.WHATSAPP_ALLOWED_NUMBERS)),
    groups: envOneOf(env, "WHATSAPP_GROUPS", ["off", "all"] as const, "off"),
    outboundAllowed:
      outbound === undefined || outbound === "" || outbound === "known" || outbound === "*"
        ? outbound
        : normalisePhoneList(outbound),
    readReceipts: envOneOf(env, "WHATSAPP_READ_RECEIPTS", ["on", "off"] as const, "on") === "on",
    typing: envOneOf(env, "WHATSAPP_TYPING", ["on", "off"] as const, "on") === "on",
    ratePerMinute: envInteger(env, "WHATSAPP_RATE_PER_MINUTE", 20, 1, 10_000),
    sendPerMinute: envInteger(env, "WHATSAPP_SEND_PER_MINUTE", 20, 1, 10_000),
    mediaMaxBytes: envInteger(env, "WHATSAPP_MEDIA_MAX_BYTES", 20 * 1024 * 1024, 0, 1024 * 1024 * 1024),
    mediaDirs: mediaDirs.length > 0 ? mediaDirs : [join(stateDir, "media", "out")],
    sendWaitMs: envInteger(env, "WHATSAPP_SEND_WAIT_MS", 15_000, 0, 300_000),
    reconnectMaxMs: envInteger(env, "WHATSAPP_RECONNECT_MAX_MS", 60_000, 100, 3_600_000),
    socketModule,
  };
}
