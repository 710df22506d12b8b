/**
 * Which WhatsApp messages reach the agent (src/inbound.ts) and how phone numbers become chats
 * (src/address.ts), without any I/O: the allowlist by number or privacy id, groups on and off,
 * the account's own messages, bots, broadcasts, wrapped (ephemeral) content and media kinds.
 */
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { Allowlist } from "@nexo/channels-common";
import type { WAMessage } from "baileys";
import { normalisePhoneList, stripDevice, toJid } from "../src/address.js";
import { loadBaileys } from "../src/baileys.js";
import { decideInbound } from "../src/inbound.js";

// The channel loads Baileys at its first start; these tests call the decision directly.
before(() => loadBaileys());

const ALICE = "447700900123@s.whatsapp.net";
const allowed = Allowlist.parse(normalisePhoneList("+44 7700 900123"));
const config = { allowed, groups: "off" as const };
const message = (key: Record<string, unknown>, content: Record<string, unknown>): WAMessage =>
  ({ key: { fromMe: false, id: "ABC", ...key }, message: content }) as WAMessage;

describe("whatsapp inbound rules and addresses", () => {
  test("numbers and JIDs", () => {
    assert.equal(toJid("+44 7700 900123"), ALICE);
    assert.equal(toJid("447700900123:12@s.whatsapp.net"), ALICE);
    assert.equal(toJid("1203630@g.us"), "1203630@g.us");
    assert.equal(toJid("alice"), undefined);
    assert.equal(toJid("12"), undefined);
    assert.equal(stripDevice("447700900001:7@s.whatsapp.net"), "447700900001@s.whatsapp.net");
    assert.equal(normalisePhoneList(" *, +1 555 000 0000"), "*,15550000000@s.whatsapp.net");
  });

  test("an allowed person's text is accepted; strangers, own messages, bots and broadcasts are not", () => {
    const accepted = decideInbound(message({ remoteJid: ALICE }, { conversation: " hi " }), config);
    assert.ok("accept" in accepted);
    assert.equal(accepted.accept.text, "hi");
    assert.equal(accepted.accept.messageId, `${ALICE}:ABC`);
    const ignored = (
      key: Record<string, unknown>,
      content: Record<string, unknown> = { conversation: "x" },
    ) => {
      const decision = decideInbound(message(key, content), config);
      assert.ok("ignore" in decision, JSON.stringify(decision));
      return decision.ignore;
    };
    assert.match(ignored({ remoteJid: "15550000000@s.whatsapp.net" }), /not in WHATSAPP_ALLOWED_NUMBERS/);
    assert.match(ignored({ remoteJid: ALICE, fromMe: true }), /own message/);
    assert.match(ignored({ remoteJid: "867051314767696@bot" }), /bot/);
    assert.match(ignored({ remoteJid: "status@broadcast" }), /broadcast/);
    assert.match(ignored({ remoteJid: ALICE }, { protocolMessage: { type: 0 } }), /no text or media/);
  });

  test("a privacy id (@lid) is matched by the phone-number JID the message also carries", () => {
    const decision = decideInbound(
      message({ remoteJid: "123456789012345@lid", remoteJidAlt: ALICE }, { conversation: "via lid" }),
      config,
    );
    assert.ok("accept" in decision);
    assert.equal(decision.accept.chat, "123456789012345@lid");
  });

  test("groups: off by default; with all, an allowed member's message is the group's conversation", () => {
    const inGroup = message({ remoteJid: "1203630@g.us", participant: ALICE }, { conversation: "team" });
    assert.ok("ignore" in decideInbound(inGroup, config));
    const on = decideInbound(inGroup, { allowed, groups: "all" });
    assert.ok("accept" in on);
    assert.equal(on.accept.chat, "1203630@g.us");
    assert.equal(on.accept.sender, ALICE);
    assert.equal(on.accept.group, true);
  });

  test("media kinds, captions and wrapped (disappearing) messages", () => {
    const voice = decideInbound(
      message({ remoteJid: ALICE }, { audioMessage: { ptt: true, mimetype: "audio/ogg; codecs=opus" } }),
      config,
    );
    assert.ok("accept" in voice);
    assert.equal(voice.accept.media?.kind, "voice");
    const doc = decideInbound(
      message(
        { remoteJid: ALICE },
        {
          ephemeralMessage: {
            message: {
              documentMessage: { fileName: "report.pdf", mimetype: "application/pdf", caption: "read" },
            },
          },
        },
      ),
      config,
    );
    assert.ok("accept" in doc);
    assert.deepEqual(doc.accept.media, {
      kind: "document",
      mime: "application/pdf",
      fileName: "report.pdf",
      size: undefined,
    });
    assert.equal(doc.accept.text, "read");
  });
});
