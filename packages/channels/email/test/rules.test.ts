/**
 * The email channel's decisions that need no server, on their own: which mails are bounces (the
 * RFC 3464 report and the older mailer-daemon notice), which are automatic, what text of a reply
 * the agent reads, how threads are found from In-Reply-To / References, and the settings that
 * would send a password in the clear. The daemon tests (./daemon.test.ts) run them end to end.
 */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { Allowlist, ChannelConfigError } from "@nexo/channels-common";
import { detectBounce } from "../src/bounce.js";
import { readEmailConfig } from "../src/config.js";
import { registeredOf } from "../src/credentials.js";
import { automatic, decideMail, newText } from "../src/inbound.js";
import { baseSubject, ThreadStore } from "../src/threads.js";

const headers = (values: Record<string, string>) => ({ get: (name: string) => values[name] });

describe("email rules", () => {
  test("an old-style failure notice from MAILER-DAEMON is a bounce naming the quoted mail", () => {
    const raw = [
      "From: MAILER-DAEMON@mx.example.test",
      "Subject: failure notice",
      "X-Failed-Recipients: gone@example.test",
      "",
      "Sorry, we were unable to deliver your message to the following address.",
      "<gone@example.test>: 550 5.1.1 No such user",
      "--- Below this line is a copy of the message.",
      "Message-ID: <ours-1@example.test>",
      "Subject: Re: hello",
    ].join("\r\n");
    const bounce = detectBounce({
      contentType: { value: "text/plain", params: {} },
      fromAddress: "mailer-daemon@mx.example.test",
      returnPath: "<>",
      subject: "failure notice",
      failedRecipientsHeader: "gone@example.test",
      raw,
    });
    assert.deepEqual(bounce?.recipients, ["gone@example.test"]);
    assert.deepEqual(bounce?.quotedIds, ["<ours-1@example.test>"]);
    assert.equal(bounce?.action, "failed");
    // A person's mail that happens to mention a failure is not one.
    assert.equal(
      detectBounce({
        contentType: { value: "text/plain", params: {} },
        fromAddress: "ada@example.test",
        returnPath: "<ada@example.test>",
        subject: "Delivery failure of my parcel",
        failedRecipientsHeader: undefined,
        raw: "Subject: x\r\n\r\nwhere is it?",
      }),
      undefined,
    );
  });

  test("automatic and list mail is recognised; Auto-Submitted: no is a person's", () => {
    assert.match(automatic(headers({ "auto-submitted": "auto-replied" })) ?? "", /Auto-Submitted/);
    assert.match(automatic(headers({ "list-id": "<team.example.test>" })) ?? "", /mailing-list/);
    assert.match(automatic(headers({ precedence: "bulk" })) ?? "", /Precedence/);
    assert.equal(automatic(headers({ "auto-submitted": "no" })), undefined);
    const mail = (from: string) => ({
      headers: headers({}),
      contentType: undefined,
      fromAddress: from,
      fromName: "",
      replyToAddress: from,
      subject: "hi",
      text: "hi",
      raw: "",
    });
    const rules = { ownAddress: "Agent@Example.test", allowedSenders: Allowlist.parse("example.test") };
    assert.deepEqual(decideMail(mail("ada@example.test"), rules), { accept: { text: "hi" } });
    assert.match(JSON.stringify(decideMail(mail("agent@example.test"), rules)), /own address/);
    assert.match(JSON.stringify(decideMail(mail("eve@evil.test"), rules)), /EMAIL_ALLOWED_SENDERS/);
  });

  test("the agent reads the new text of a reply, not the quoted history", () => {
    const text =
      "Yes, Friday works.\n\nOn Tue, 1 Dec 2026 at 10:00, Ana <agent@example.test> wrote:\n> Does Friday work?\n>\n> Ana";
    assert.equal(newText(text), "Yes, Friday works.");
    assert.equal(newText("> quoted\nmine\n> more quoted\nmine too"), "mine\nmine too");
    assert.equal(baseSubject("Re: AW: Fwd: Plans"), "Plans");
  });

  test("a reply finds its thread by In-Reply-To or References; an unrelated mail starts another", () => {
    const store = new ThreadStore(join(mkdtempSync(join(tmpdir(), "nexo-email-threads-")), "threads.json"));
    const base = { subject: "Plans", from: "ada@example.test", replyTo: "ada@example.test" };
    const first = store.inbound({ ...base, messageId: "<a@x>", inReplyTo: [], references: [] });
    assert.equal(first.isNew, true);
    store.sent(first.thread, "<ours@y>", {
      outbox_id: "1",
      to: "ada@example.test",
      contact: first.thread.contact,
    });
    // A client that sets only References (no In-Reply-To) still lands in the thread.
    const answer = store.inbound({
      ...base,
      messageId: "<b@x>",
      inReplyTo: [],
      references: ["<a@x>", "<ours@y>"],
    });
    assert.equal(answer.isNew, false);
    assert.equal(answer.thread.contact, first.thread.contact);
    assert.deepEqual(answer.thread.references, ["<a@x>", "<ours@y>", "<b@x>"]);
    const other = store.inbound({ ...base, messageId: "<c@x>", inReplyTo: [], references: [] });
    assert.notEqual(other.thread.contact, first.thread.contact);
    assert.match(first.thread.contact, /^ada@example\.test#[0-9a-f]{12}$/);
  });

  test("a password is never sent in the clear to another machine", () => {
    const env = { EMAIL_ADDRESS: "agent@example.test", EMAIL_IMAP_HOST: "imap.example.test" };
    assert.throws(
      () => readEmailConfig({ ...env, EMAIL_IMAP_SECURITY: "none" }),
      (error: unknown) => error instanceof ChannelConfigError && error.variable === "EMAIL_IMAP_SECURITY",
    );
    assert.equal(
      readEmailConfig({ ...env, EMAIL_IMAP_HOST: "127.0.0.1", EMAIL_IMAP_SECURITY: "none" }).imap.security,
      "none",
    );
    const registered = registeredOf(
      { address: "agent@example.test", password: "secret-password" },
      {
        imap: { host: "imap.example.test", port: 143, tls: "none" },
        smtp: { host: "smtp.example.test", port: 587, tls: "starttls" },
      },
    );
    assert.equal("reason" in registered && registered.reason, "invalid_metadata");
  });
});
