/**
 * The mailbox login registered and rotated the way an operator does it: a microapp calls the
 * admin RPC's `credentials/register` on a real daemon running the compiled email plugin, with a
 * private Dovecot and a local SMTP server (./mail-servers.ts) as the mail provider. The daemon
 * runs the plugin's persister: validate (a malformed payload is refused before anything is
 * stored), persist (saved; a running channel first logs in with the new login and reconnects, a
 * login the servers refuse is not taken), probe (a login to both servers; its outcome is the
 * reply's validation block). plugins.yaml names no mailbox: the registered one brings its address,
 * login and servers. The agent then answers mail sent with the new password. Run
 * `npm run build` first.
 */
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import nodemailer, { type Transporter } from "nodemailer";
import { type DaemonAdmin, daemonAdmin, errorOf, resultOf } from "../../../nexo/test/helpers/admin-daemon.js";
import { Dovecot, SmtpSink } from "./mail-servers.js";

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const AGENT = "agent@example.test";
const FIRST = "first-mailbox-password";
const SECOND = "second-mailbox-password";
const ALICE = "alice@example.test";
const ALICE_PASSWORD = "alice-password-42";

describe("email login through credentials/register on a daemon", () => {
  const dovecot = new Dovecot();
  const smtp = new SmtpSink(dovecot, [AGENT]);
  let admin: DaemonAdmin;
  let alice: Transporter;
  const metadata = () => ({
    imap: { host: "127.0.0.1", port: dovecot.port, tls: "none" },
    smtp: { host: "127.0.0.1", port: smtp.port, tls: "none" },
  });
  const register = (payload: unknown, meta: unknown = metadata()) =>
    admin.ops("nexo/admin/credentials/register", {
      channel: "email",
      agent_ids: ["ana"],
      payload,
      metadata: meta,
    });
  const mailAndReply = async (text: string) => {
    const sent = await alice.sendMail({ from: ALICE, to: AGENT, subject: text, text });
    return smtp.next((r) => r.to.includes(ALICE) && r.mail.inReplyTo === sent.messageId);
  };

  before(async () => {
    dovecot.setPassword(AGENT, FIRST);
    dovecot.setPassword(ALICE, ALICE_PASSWORD);
    await dovecot.start();
    await smtp.start();
    alice = nodemailer.createTransport({
      host: "127.0.0.1",
      port: smtp.port,
      secure: false,
      ignoreTLS: true,
      auth: { user: ALICE, pass: ALICE_PASSWORD },
    });
    admin = await daemonAdmin(
      {
        "agents.yaml": "agents:\n  - id: ana\n    model: { provider: scripted, model: nexo-scripted-demo }\n",
        "plugins.yaml": `plugins:
  - dir: ${PLUGIN_DIR}
    env:
      EMAIL_ALLOWED_SENDERS: "*"
`,
      },
      ["credentials_crud"],
    );
  });
  after(async () => {
    await admin?.stop();
    alice?.close();
    await smtp.stop();
    await dovecot.stop();
  });

  test("a malformed mailbox is refused by the plugin's validate, and nothing is stored", async () => {
    const payload = errorOf(await register({ address: AGENT, password: "two\nlines" }), -32602);
    assert.equal(payload.data?.reason_code, "invalid_payload");
    assert.match(payload.message, /password/);
    const plaintext = errorOf(
      await register(
        { address: AGENT, password: FIRST },
        { ...metadata(), imap: { host: "imap.example.org", port: 143, tls: "none" } },
      ),
      -32602,
    );
    assert.equal(plaintext.data?.reason_code, "invalid_metadata");
    assert.match(plaintext.message, /in the clear/);
    const oauth = errorOf(
      await register({ address: AGENT, xoauth2_token: "ya29.token-of-some-kind" }),
      -32602,
    );
    assert.match(oauth.message, /xoauth2_token is not supported/);
  });

  test("registered: probed by logging in to both servers, the agent bound, and mail answered", async () => {
    const result = resultOf<{ validation: Record<string, unknown> }>(
      await register({ address: AGENT, password: FIRST }),
    );
    assert.deepEqual(result.validation, {
      probed: true,
      healthy: true,
      reason_code: "ok",
      detail: `logged in as ${AGENT} to IMAP 127.0.0.1 and SMTP 127.0.0.1`,
    });
    assert.match(admin.env.read("agents.yaml"), /plugin: email/);
    const reply = await mailAndReply("hello");
    assert.equal(reply.user, AGENT);
    assert.equal(reply.password, FIRST);
  });

  test("rotated: a password the servers refuse is not taken; the new one reconnects and sends", async () => {
    // The provider changed the password; the running channel's IMAP session stays logged in.
    dovecot.setPassword(AGENT, SECOND);
    const refused = errorOf(await register({ address: AGENT, password: "not-the-password" }), -33002);
    assert.match(refused.message, /refused/);
    const saved = join(admin.env.stateDir, "plugins", "email", "credentials", "_default.json");
    assert.equal(
      JSON.parse(readFileSync(saved, "utf8")).login.password,
      FIRST,
      "the refused login was not saved",
    );

    const result = resultOf<{ validation: Record<string, unknown> }>(
      await register({ address: AGENT, password: SECOND }),
    );
    assert.equal(result.validation.reason_code, "ok");
    const reply = await mailAndReply("hello again");
    assert.equal(reply.password, SECOND, "the reply went out with the new password");
    assert.equal(JSON.parse(readFileSync(saved, "utf8")).login.password, SECOND);
    assert.equal(statSync(saved).mode & 0o777, 0o600);
  });
});
