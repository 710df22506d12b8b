/**
 * The mail servers the email channel's tests talk to, both real and on this machine:
 *
 * - Dovecot (Debian's dovecot-imapd, provisioned by scripts/test-deps.json), a private instance
 *   per test file: its own config file (`dovecot -c`), passwd-file users, Maildir storage, IMAP
 *   without TLS on 127.0.0.1 and a free port, all in one temp directory. As root (CI), Dovecot
 *   will not store mail as uid 0, so the mail belongs to its own `dovecot` user and the directory
 *   is made traversable for it; as anyone else, everything runs as that user.
 * - An SMTP server (the `smtp-server` package, from the nodemailer project) that requires a login
 *   checked against the same users, delivers mail for a local user into Dovecot (IMAP APPEND,
 *   which wakes an IDLE client like a real delivery does) and keeps everything else as sent to the
 *   outside world, for the test to read. `outage(code)` makes it answer every mail for the outside world with that code.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ImapFlow } from "imapflow";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, "close");
  return port;
}

function systemUser(name: string): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}:`));
  if (line === undefined) throw new Error(`no system user ${name}: is dovecot-imapd installed?`);
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

export class Dovecot {
  readonly dir: string;
  port = 0;
  private child: ChildProcess | undefined;
  private readonly users = new Map<string, string>();
  private readonly asRoot = process.getuid?.() === 0;

  /** `withoutIdle`: the server announces no IDLE after login, as some providers' servers do. */
  constructor(private readonly options: { withoutIdle?: boolean } = {}) {
    // As root the directory must be reachable by Dovecot's own users, so it sits in /tmp itself
    // (the test runner's per-file temp directory is private to root).
    this.dir = mkdtempSync(join(this.asRoot ? "/tmp" : tmpdir(), "nexo-dovecot-"));
  }

  /** Sets (or changes) a user's password; Dovecot re-reads the passwd-file when it changes. */
  setPassword(user: string, password: string): void {
    this.users.set(user, password);
    const lines = [...this.users].map(([name, pass]) => `${name}:{PLAIN}${pass}::::`);
    writeFileSync(join(this.dir, "passwd"), `${lines.join("\n")}\n`, { mode: 0o644 });
  }

  password(user: string): string | undefined {
    return this.users.get(user);
  }

  async start(): Promise<void> {
    this.port = await freePort();
    const mail = join(this.dir, "mail");
    mkdirSync(join(this.dir, "run"), { recursive: true });
    mkdirSync(mail, { recursive: true });
    let owner: { uid: number; gid: number };
    let internal: string;
    let login: string;
    if (this.asRoot) {
      owner = systemUser("dovecot");
      internal = "dovecot";
      login = "dovenull";
      chmodSync(this.dir, 0o711);
      chownSync(mail, owner.uid, owner.gid);
    } else {
      owner = { uid: process.getuid!(), gid: process.getgid!() };
      internal = userInfo().username;
      login = internal;
    }
    const config = `# A private Dovecot for one test file.
protocols = imap
listen = 127.0.0.1
base_dir = ${this.dir}/run
state_dir = ${this.dir}/state
instance_name = nexo-test-${this.port}
log_path = ${this.dir}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = ${internal}
default_internal_group = ${internal}
default_login_user = ${login}
mail_location = maildir:${mail}/%u
first_valid_uid = 1
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${this.dir}/passwd
}
userdb {
  driver = static
  args = uid=${owner.uid} gid=${owner.gid} home=${mail}/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${this.port}
  }
  inet_listener imaps {
    port = 0
  }
  chroot =
}
service anvil {
  chroot =
}
${this.options.withoutIdle ? "imap_capability = IMAP4rev1 LITERAL+ SASL-IR LOGIN-REFERRALS ID ENABLE SORT MULTIAPPEND UNSELECT CHILDREN NAMESPACE UIDPLUS ESEARCH MOVE\n" : ""}`;
    writeFileSync(join(this.dir, "dovecot.conf"), config);
    if (!this.users.size) this.setPassword("nobody@example.test", "unused-password");
    this.child = spawn(
      existsSync("/usr/sbin/dovecot") ? "/usr/sbin/dovecot" : "dovecot",
      ["-F", "-c", join(this.dir, "dovecot.conf")],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    this.child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (this.child.exitCode !== null) throw new Error(`dovecot exited: ${stderr}`);
      const open = await new Promise<boolean>((resolve) => {
        const socket = new Socket();
        socket.once("connect", () => {
          socket.destroy();
          resolve(true);
        });
        socket.once("error", () => resolve(false));
        socket.connect(this.port, "127.0.0.1");
      });
      if (open) return;
      if (Date.now() > deadline) throw new Error(`dovecot did not listen on ${this.port}: ${stderr}`);
      await sleep(100);
    }
  }

  /** Stores a mail in a user's INBOX, as a delivery does. */
  async deliver(user: string, raw: string | Buffer): Promise<void> {
    const client = new ImapFlow({
      host: "127.0.0.1",
      port: this.port,
      secure: false,
      auth: { user, pass: this.users.get(user)! },
      logger: false,
    });
    client.on("error", () => undefined);
    await client.connect();
    try {
      await client.append("INBOX", raw);
    } finally {
      await client.logout().catch(() => client.close());
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child !== undefined && child.exitCode === null) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface Received {
  from: string;
  to: string[];
  /** Who logged in to send it, and with which password. */
  user: string;
  password: string;
  raw: Buffer;
  mail: ParsedMail;
}

export class SmtpSink {
  port = 0;
  readonly received: Received[] = [];
  private refusal: { code: number; message: string } | undefined;
  private readonly server: SMTPServer;

  constructor(
    private readonly dovecot: Dovecot,
    /** Users whose mail is delivered into Dovecot. */
    private readonly local: readonly string[],
  ) {
    this.server = new SMTPServer({
      secure: false,
      disabledCommands: ["STARTTLS"],
      allowInsecureAuth: true,
      authMethods: ["PLAIN", "LOGIN"],
      logger: false,
      onAuth: (auth, _session, callback) => {
        if (auth.username !== undefined && dovecot.password(auth.username) === auth.password)
          callback(null, { user: `${auth.username}\n${auth.password}` });
        else callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          void this.accept(Buffer.concat(chunks), session).then(
            () => callback(),
            (error: Error & { responseCode?: number }) => callback(error),
          );
        });
      },
    });
    this.server.on("error", () => undefined);
  }

  async start(): Promise<void> {
    this.server.listen(0, "127.0.0.1");
    await once(this.server.server, "listening");
    this.port = (this.server.server.address() as { port: number }).port;
  }

  /** Every mail for the outside world is answered with `code` until restore(). */
  outage(code: number, message = "Try again later"): void {
    this.refusal = { code, message };
  }

  restore(): void {
    this.refusal = undefined;
  }

  private async accept(
    raw: Buffer,
    session: {
      user?: unknown;
      envelope: { mailFrom: false | { address: string }; rcptTo: Array<{ address: string }> };
    },
  ): Promise<void> {
    const [user, password] = String(session.user ?? "").split("\n");
    const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
    if (this.refusal !== undefined && to.some((a) => !this.local.includes(a)))
      throw Object.assign(new Error(this.refusal.message), { responseCode: this.refusal.code });
    for (const address of to.filter((a) => this.local.includes(a))) await this.dovecot.deliver(address, raw);
    const outside = to.filter((a) => !this.local.includes(a));
    if (outside.length === 0) return;
    this.received.push({
      from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
      to: outside,
      user: user ?? "",
      password: password ?? "",
      raw,
      mail: await simpleParser(raw),
    });
  }

  /** The first mail received (from now on or already) that `match` accepts. */
  async next(match: (r: Received) => boolean, timeoutMs = 60_000): Promise<Received> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(match);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error("timed out waiting for a mail at the SMTP server");
      await sleep(50);
    }
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
