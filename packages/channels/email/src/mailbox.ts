/**
 * Inbound: the agent's mailbox over IMAP. One connection selects the folder and waits in IDLE, so
 * a new mail is announced by the server (`EXISTS`) and read at once; every EMAIL_POLL_SECS the
 * folder is checked anyway (a server without IDLE, or a notification lost on a broken link), and
 * a dropped connection is re-opened with backoff.
 *
 * Which mails are new is kept by UID in mailbox-<instance>.json: each mail is handed over, then
 * flagged \Seen, then its UID recorded — a crash in between hands the same mail over again,
 * which nexo's router recognises by its message id. On the first start (or when the server
 * renumbered the folder: a new UIDVALIDITY) the mails not yet \Seen are read, not the whole
 * history. A mail larger than EMAIL_MAX_BYTES is left unread and logged.
 */
import { readFileSync } from "node:fs";
import { writeFileAtomic } from "@nexo/channels-common";
import type { ImapFlow } from "imapflow";
import type { EmailConfig, Login } from "./config.js";
import { imapClient } from "./credentials.js";

interface SavedState {
  uid_validity: string;
  last_uid: number;
}

export interface MailboxOptions {
  config: EmailConfig;
  login: Login;
  stateFile: string;
  /** Hands one mail over; throwing stops this pass (the mail is read again on the next one). */
  handle: (uid: number, source: Buffer) => Promise<void>;
  log: (line: string) => void;
}

const MAX_BACKOFF_MS = 60_000;

export class Mailbox {
  private client: ImapFlow | undefined;
  private state: SavedState | undefined;
  private stopped = false;
  private passing: Promise<void> | undefined;
  private again = false;
  private poll: NodeJS.Timeout | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private failures = 0;
  /** Whether the server announced IDLE (else the poll is the only way mail is noticed). */
  idle = false;

  constructor(private readonly options: MailboxOptions) {
    try {
      this.state = JSON.parse(readFileSync(options.stateFile, "utf8")) as SavedState;
    } catch {
      this.state = undefined;
    }
  }

  /** Logs in and selects the folder (errors are the caller's: a refused login, no server), then reads what is new. */
  async start(): Promise<void> {
    await this.connect();
    this.poll = setInterval(() => this.kick(), this.options.config.pollSecs * 1000);
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poll);
    clearTimeout(this.reconnect);
    await this.passing?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) await client.logout().catch(() => client.close());
  }

  private async connect(): Promise<void> {
    const client = imapClient(this.options.config, this.options.login);
    client.on("error", (error: Error) => this.options.log(`IMAP: ${error.message}`));
    try {
      await client.connect();
      await client.mailboxOpen(this.options.config.mailbox);
    } catch (error) {
      client.close();
      throw error;
    }
    this.idle = client.capabilities.has("IDLE");
    client.on("exists", () => this.kick());
    client.on("close", () => {
      if (this.client !== client || this.stopped) return;
      this.client = undefined;
      this.scheduleReconnect("the IMAP connection closed");
    });
    this.client = client;
    this.failures = 0;
  }

  private scheduleReconnect(why: string): void {
    if (this.stopped) return;
    this.failures++;
    const wait = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (this.failures - 1));
    this.options.log(`${why}; reconnecting in ${wait} ms`);
    clearTimeout(this.reconnect);
    this.reconnect = setTimeout(() => {
      this.connect().then(
        () => {
          this.options.log(`IMAP reconnected to ${this.options.config.imap.host}`);
          this.kick();
        },
        (error: Error) => this.scheduleReconnect(`IMAP reconnect failed: ${error.message}`),
      );
    }, wait);
  }

  /** Reads what is new now, or right after the pass under way. */
  private kick(): void {
    if (this.stopped) return;
    if (this.passing !== undefined) {
      this.again = true;
      return;
    }
    this.passing = (async () => {
      do {
        this.again = false;
        await this.pass();
      } while (this.again && !this.stopped);
    })()
      .catch((error: Error) =>
        this.options.log(`reading the mailbox failed: ${error.message}; retried later`),
      )
      .finally(() => {
        this.passing = undefined;
      });
  }

  private async pass(): Promise<void> {
    const client = this.client;
    if (client === undefined || this.stopped) return;
    const { mailbox, maxBytes } = this.options.config;
    const lock = await client.getMailboxLock(mailbox);
    try {
      const validity = String(client.mailbox === false ? "" : client.mailbox.uidValidity);
      const fresh = this.state === undefined || this.state.uid_validity !== validity;
      const state: SavedState = fresh ? { uid_validity: validity, last_uid: 0 } : this.state!;
      const found = fresh
        ? await client.search({ seen: false }, { uid: true })
        : await client.search({ uid: `${state.last_uid + 1}:*` }, { uid: true });
      const uids = (found === false || found === undefined ? [] : found)
        .filter((uid) => uid > state.last_uid)
        .sort((a, b) => a - b);
      if (fresh) this.save(state);
      for (const uid of uids) {
        if (this.stopped) return;
        const head = await client.fetchOne(String(uid), { size: true }, { uid: true });
        if (head === false) continue;
        if ((head.size ?? 0) > maxBytes) {
          this.options.log(
            `mail uid ${uid} left unread: ${head.size} bytes is over EMAIL_MAX_BYTES (${maxBytes})`,
          );
        } else {
          const message = await client.fetchOne(String(uid), { source: true }, { uid: true });
          if (message !== false && message.source !== undefined)
            await this.options.handle(uid, message.source);
          await client.messageFlagsAdd(String(uid), ["\\Seen"], { uid: true });
        }
        state.last_uid = uid;
        this.save(state);
      }
    } finally {
      lock.release();
    }
  }

  private save(state: SavedState): void {
    this.state = state;
    writeFileAtomic(this.options.stateFile, `${JSON.stringify(state)}\n`);
  }
}
