/**
 * The email channel through a real daemon: `nexo start` (the built CLI) with the compiled plugin
 * enabled from plugins.yaml, an agent on @nexo/mock-llm, a private Dovecot as the agent's mailbox
 * and a local SMTP server (./mail-servers.ts). A person's mail reaches the agent and its reply
 * goes out threaded (In-Reply-To, References, "Re:"), and the person's answer to it continues the
 * same conversation; a file attached comes to the agent as a file and a file named in the reply
 * is attached; a bounce marks the reply it names failed and reaches no agent, and neither does an
 * out-of-office reply; a reply queued while the SMTP server refuses survives a daemon restart and
 * goes out after it; `nexo plugin check` passes; no password is in any log line. Run
 * `npm run build` first.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MockLlmServer } from "@nexo/mock-llm";
import nodemailer, { type Transporter } from "nodemailer";
import { runCli } from "../../../nexo/test/helpers/cli.js";
import { SLOW_MACHINE_INIT_MS } from "../../../nexo/test/helpers/daemon-dir.js";
import { type DaemonProcess, startDaemonProcess } from "../../../nexo/test/helpers/daemon-process.js";
import { waitFor } from "../../../nexo/test/helpers/wait.js";
import { lastUserText, writeChannelDaemonConfig } from "../../common/test/channel-daemon.js";
import { Dovecot, type Received, SmtpSink } from "./mail-servers.js";

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const AGENT = "agent@example.test";
const AGENT_PASSWORD = "agent-mailbox-password-1";
const ALICE = "alice@example.test";
const ALICE_PASSWORD = "alice-password-42";
const BOB = "bob@elsewhere.test";
const CHART = Buffer.from("\x89PNG\r\n\x1a\n a chart, not really");
const REPORT = Buffer.from("%PDF-1.4 the quarterly report, not really\n");

const header = (r: Received, name: string): string | undefined => {
  const value = r.mail.headers.get(name);
  return value === undefined ? undefined : String(value);
};

describe("email channel through nexo start", () => {
  const dovecot = new Dovecot();
  const smtp = new SmtpSink(dovecot, [AGENT]);
  const mock = new MockLlmServer();
  const config = mkdtempSync(join(tmpdir(), "nexo-email-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-email-state-"));
  const mediaDir = mkdtempSync(join(tmpdir(), "nexo-email-media-"));
  const pluginState = join(stateDir, "plugins", "email");
  const logs: string[] = [];
  let daemon: DaemonProcess;
  let alice: Transporter;
  const start = async () => {
    daemon = await startDaemonProcess({ config, stateDir, env: { EMAIL_PASSWORD: AGENT_PASSWORD } });
    await waitFor(
      "the channel to read the mailbox",
      () => (/email: reading INBOX/.test(daemon.stderr()) ? true : undefined),
      60_000,
    );
  };
  const stop = async () => {
    const exit = await daemon.stop();
    logs.push(daemon.stderr());
    return exit;
  };
  const replyTo = (text: string) =>
    smtp.next((r) => r.to.includes(ALICE) && (r.mail.text ?? "").includes(text));
  const deliveries = () =>
    readFileSync(join(pluginState, "outbox", "delivery.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  before(async () => {
    dovecot.setPassword(AGENT, AGENT_PASSWORD);
    dovecot.setPassword(ALICE, ALICE_PASSWORD);
    await dovecot.start();
    await smtp.start();
    await mock.start();
    alice = nodemailer.createTransport({
      host: "127.0.0.1",
      port: smtp.port,
      secure: false,
      ignoreTLS: true,
      auth: { user: ALICE, pass: ALICE_PASSWORD },
    });
    mock.reset([
      { match: "hello agent", text: "Hi Alice, from the agent." },
      { match: "what did I say first", text: "You said hello." },
      {
        match: "what is in this file",
        text: `A report. Here is my chart:\nMEDIA: ${join(mediaDir, "chart.png")}`,
      },
      { match: "forward this to bob", text: "Sure, Bob." },
      { match: "still there", text: "Still here." },
      { match: "remember the milk", text: "Noted: the milk." },
      { match: "and after the restart", text: "The milk, still." },
    ]);
    writeFileSync(join(mediaDir, "chart.png"), CHART);
    writeChannelDaemonConfig({
      config,
      stateDir,
      llmUrl: mock.url,
      plugin: "email",
      pluginDir: PLUGIN_DIR,
      pluginSettings: `    env:
      EMAIL_ADDRESS: ${AGENT}
      EMAIL_FROM_NAME: Ana
      EMAIL_USER: ${AGENT}
      EMAIL_PASSWORD: \${EMAIL_PASSWORD}
      EMAIL_IMAP_HOST: 127.0.0.1
      EMAIL_IMAP_PORT: "${dovecot.port}"
      EMAIL_IMAP_SECURITY: none
      EMAIL_SMTP_PORT: "${smtp.port}"
      EMAIL_SMTP_SECURITY: none
      EMAIL_ALLOWED_SENDERS: "${ALICE}, elsewhere.test"
      EMAIL_MEDIA_DIRS: ${mediaDir}
      EMAIL_SEND_WAIT_MS: "1000"
`,
    });
    await start();
  });
  after(async () => {
    if (daemon !== undefined && daemon.child.exitCode === null) await stop();
    alice?.close();
    await smtp.stop();
    await dovecot.stop();
    await mock.close();
  });

  let first: Received;

  test("a mail in, the agent's reply out in the same thread; the answer to it continues the conversation", async () => {
    const sent = await alice.sendMail({
      from: `Alice <${ALICE}>`,
      to: AGENT,
      subject: "Hello",
      text: "hello agent",
    });
    first = await replyTo("Hi Alice, from the agent.");
    assert.equal(lastUserText(mock.requests().at(-1)), "Subject: Hello\n\nhello agent");
    assert.equal(first.mail.subject, "Re: Hello");
    assert.equal(first.mail.inReplyTo, sent.messageId);
    assert.deepEqual([first.mail.references].flat(), [sent.messageId]);
    assert.equal(first.mail.from?.value[0]?.address, AGENT);
    assert.equal(first.mail.from?.value[0]?.name, "Ana");
    assert.equal(header(first, "auto-submitted"), "auto-replied");
    assert.equal(first.user, AGENT);

    // Alice answers the agent's mail, quoting it, as a mail client does.
    const answer = await alice.sendMail({
      from: ALICE,
      to: AGENT,
      subject: "Re: Hello",
      inReplyTo: first.mail.messageId,
      references: [sent.messageId, first.mail.messageId!],
      text: `what did I say first?\n\nOn Tue, 1 Dec 2026, Ana <${AGENT}> wrote:\n> Hi Alice, from the agent.\n`,
    });
    const second = await replyTo("You said hello.");
    assert.equal(lastUserText(mock.requests().at(-1)), "what did I say first?");
    const history = JSON.stringify(mock.requests().at(-1)?.body);
    assert.match(history, /hello agent/, "the same session: the model sees the first mail");
    assert.equal(second.mail.subject, "Re: Hello");
    assert.equal(second.mail.inReplyTo, answer.messageId);
    assert.deepEqual([second.mail.references].flat(), [
      sent.messageId,
      first.mail.messageId,
      answer.messageId,
    ]);
  });

  test("a file attached reaches the agent as a file; a file named in its reply is attached", async () => {
    await alice.sendMail({
      from: ALICE,
      to: AGENT,
      subject: "The report",
      text: "what is in this file?",
      attachments: [{ filename: "report.pdf", content: REPORT, contentType: "application/pdf" }],
    });
    const reply = await replyTo("A report. Here is my chart:");
    const said = lastUserText(mock.requests().at(-1));
    const path =
      /\[document "report\.pdf" attached: (\S+) \(application\/pdf, [\d.]+ B\)\]/.exec(said)?.[1] ?? "";
    assert.ok(path.startsWith(join(pluginState, "media", "in")), said);
    assert.deepEqual(readFileSync(path), REPORT);
    assert.equal(reply.mail.subject, "Re: The report");
    assert.doesNotMatch(reply.mail.text ?? "", /MEDIA:/);
    assert.equal(reply.mail.attachments.length, 1);
    assert.equal(reply.mail.attachments[0]!.filename, "chart.png");
    assert.deepEqual(reply.mail.attachments[0]!.content, CHART);
  });

  test("a bounce marks the reply it names failed and reaches no agent; nor does an out-of-office reply", async () => {
    await alice.sendMail({ from: BOB, to: AGENT, subject: "Forward", text: "forward this to bob" });
    const toBob = await smtp.next((r) => r.to.includes(BOB));
    const calls = mock.requests().length;
    const bounce = [
      "From: Mail Delivery System <MAILER-DAEMON@mx.elsewhere.test>",
      `To: ${AGENT}`,
      "Subject: Undelivered Mail Returned to Sender",
      "Message-ID: <bounce-1@mx.elsewhere.test>",
      "Auto-Submitted: auto-replied",
      "MIME-Version: 1.0",
      'Content-Type: multipart/report; report-type=delivery-status; boundary="dsn"',
      "",
      "--dsn",
      "Content-Type: text/plain",
      "",
      "Your message could not be delivered.",
      "--dsn",
      "Content-Type: message/delivery-status",
      "",
      "Reporting-MTA: dns; mx.elsewhere.test",
      "",
      `Final-Recipient: rfc822; ${BOB}`,
      "Action: failed",
      "Status: 5.1.1",
      "Diagnostic-Code: smtp; 550 5.1.1 <bob@elsewhere.test>: mailbox unknown",
      "",
      "--dsn",
      "Content-Type: text/rfc822-headers",
      "",
      `From: ${AGENT}`,
      `To: ${BOB}`,
      `Message-ID: ${toBob.mail.messageId}`,
      "Subject: Re: Forward",
      "",
      "--dsn--",
      "",
    ].join("\r\n");
    await dovecot.deliver(AGENT, bounce);
    const failed = await waitFor(
      "the bounced reply's delivery status",
      () => deliveries().find((d) => d.bounced_after_sent === true),
      60_000,
    );
    assert.equal(failed.status, "failed");
    assert.equal(failed.to, BOB);
    assert.match(String(failed.last_error), /bounced: status 5\.1\.1: smtp; 550 5\.1\.1/);
    const sentLine = deliveries().find((d) => d.id === failed.id && d.status === "sent");
    assert.ok(sentLine, "the same message was first recorded as sent");

    await alice.sendMail({
      from: ALICE,
      to: AGENT,
      subject: "Out of office: Re: Hello",
      text: "I am away until Monday.",
      headers: { "Auto-Submitted": "auto-replied" },
    });
    // A mail after both: its answer proves the two before it were read and passed over.
    await alice.sendMail({ from: ALICE, to: AGENT, subject: "Ping", text: "still there?" });
    await replyTo("Still here.");
    assert.equal(mock.requests().length, calls + 1, "only the last mail reached the agent");
    assert.equal(
      smtp.received.some((r) => r.to.some((to) => /mailer-daemon/i.test(to))),
      false,
      "nothing was sent to the mailer daemon",
    );
    await waitFor("the bounce in the log", () =>
      /bounce from mailer-daemon@mx\.elsewhere\.test: mail <.+> to bob@elsewhere\.test was not delivered/.test(
        daemon.stderr(),
      )
        ? true
        : undefined,
    );
    assert.match(daemon.stderr(), /ignored: mail from alice@example\.test: Auto-Submitted: auto-replied/);
  });

  test("a reply queued while the SMTP server refuses survives a daemon restart and goes out after it", async () => {
    smtp.outage(451, "4.3.0 Try again later");
    const sent = await alice.sendMail({
      from: ALICE,
      to: AGENT,
      subject: "Groceries",
      text: "remember the milk",
    });
    const pending = join(pluginState, "outbox", "pending");
    const queued = await waitFor(
      "the reply in the queue with a failed attempt",
      () => {
        for (const name of readdirSync(pending).filter((f) => f.endsWith(".json"))) {
          const record = JSON.parse(readFileSync(join(pending, name), "utf8"));
          if (record.item.text === "Noted: the milk." && record.attempts >= 1 && record.last_error)
            return { name, record };
        }
        return undefined;
      },
      60_000,
    );
    assert.match(queued.record.last_error, /451/);
    const exit = await stop();
    assert.equal(exit.code, 0);
    assert.ok(
      existsSync(join(pending, queued.name)),
      "the queued reply is still on disk after the daemon stopped",
    );

    smtp.restore();
    await start();
    const late = await replyTo("Noted: the milk.");
    assert.equal(late.mail.inReplyTo, sent.messageId);
    assert.equal(late.mail.subject, "Re: Groceries");
    const delivered = await waitFor("the queued reply's delivery status", () =>
      deliveries().find((d) => d.id === queued.record.id && d.status === "sent"),
    );
    assert.ok(Number(delivered.attempts) >= 2, "tried before the restart, sent after it");

    // The thread goes on after the restart, in the same session.
    await alice.sendMail({
      from: ALICE,
      to: AGENT,
      subject: "Re: Groceries",
      inReplyTo: late.mail.messageId,
      references: [sent.messageId, late.mail.messageId!],
      text: "and after the restart?",
    });
    const after = await replyTo("The milk, still.");
    assert.match(JSON.stringify(mock.requests().at(-1)?.body), /remember the milk/);
    assert.equal(after.mail.subject, "Re: Groceries");
  });

  test("nexo plugin check passes on the channel", async () => {
    const result = await runCli(["plugin", "check", PLUGIN_DIR], {
      timeoutMs: 60_000,
      env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /plugin check: passed/);
  });

  test("the password is in no log line of either run", async () => {
    await stop();
    const all = logs.join("\n");
    assert.match(all, /email: reading INBOX of agent@example\.test/);
    assert.equal(all.includes(AGENT_PASSWORD), false, "the mailbox password is in the daemon's log");
  });
});
