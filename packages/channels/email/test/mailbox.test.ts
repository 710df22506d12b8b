/**
 * The mailbox reader (../src/mailbox.ts) on its own, against a private Dovecot that announces no
 * IDLE: new mail is found by the poll alone, each mail is handed over once and flagged \Seen, and
 * a second reader on the same state file (a restart) does not hand over what the first one did.
 */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ImapFlow } from "imapflow";
import { waitFor } from "../../../nexo/test/helpers/wait.js";
import { readEmailConfig } from "../src/config.js";
import { Mailbox } from "../src/mailbox.js";
import { Dovecot } from "./mail-servers.js";

const AGENT = "agent@example.test";
const PASSWORD = "poll-only-password";
const mail = (id: string, text: string) =>
  `From: ada@example.test\r\nTo: ${AGENT}\r\nSubject: ${text}\r\nMessage-ID: <${id}@example.test>\r\n\r\n${text}\r\n`;

describe("mailbox reader on a server without IDLE", () => {
  const dovecot = new Dovecot({ withoutIdle: true });
  const stateFile = join(mkdtempSync(join(tmpdir(), "nexo-email-mailbox-")), "mailbox.json");
  const handed: string[] = [];
  const reader = () => {
    const config = readEmailConfig({
      EMAIL_ADDRESS: AGENT,
      EMAIL_PASSWORD: PASSWORD,
      EMAIL_IMAP_HOST: "127.0.0.1",
      EMAIL_IMAP_PORT: String(dovecot.port),
      EMAIL_IMAP_SECURITY: "none",
      EMAIL_POLL_SECS: "1",
    });
    return new Mailbox({
      config,
      login: config.login!,
      stateFile,
      handle: async (_uid, source) => {
        handed.push(/^Subject: (.*)$/m.exec(source.toString())?.[1]?.trim() ?? "");
      },
      log: () => {},
    });
  };

  before(async () => {
    dovecot.setPassword(AGENT, PASSWORD);
    await dovecot.start();
  });
  after(() => dovecot.stop());

  test("new mail is found by polling; each is handed over once, flagged \\Seen, and not again after a restart", async () => {
    await dovecot.deliver(AGENT, mail("m1", "before the start"));
    const first = reader();
    await first.start();
    assert.equal(first.idle, false, "the server announced no IDLE");
    await waitFor("the mail there before the start", () => (handed.length >= 1 ? true : undefined), 30_000);
    await dovecot.deliver(AGENT, mail("m2", "while running"));
    await waitFor("the mail found by the poll", () => (handed.length >= 2 ? true : undefined), 30_000);
    await first.stop();

    await dovecot.deliver(AGENT, mail("m3", "while stopped"));
    const second = reader();
    await second.start();
    await waitFor("the mail that came while stopped", () => (handed.length >= 3 ? true : undefined), 30_000);
    await second.stop();
    assert.deepEqual(handed, ["before the start", "while running", "while stopped"]);

    const client = new ImapFlow({
      host: "127.0.0.1",
      port: dovecot.port,
      secure: false,
      auth: { user: AGENT, pass: PASSWORD },
      logger: false,
    });
    await client.connect();
    await client.mailboxOpen("INBOX");
    const unseen = await client.search({ seen: false }, { uid: true });
    await client.logout();
    assert.deepEqual(unseen, []);
  });
});
