/**
 * One WhatsApp connection and its life: connect with the stored keys, reconnect with backoff when
 * the connection drops, and tell the channel what happened — a QR code to show (pairing), the
 * device linked and the connection open, the device logged out (its keys are then wiped and no
 * reconnection is tried: it needs pairing again, never a crash loop), the QR codes run out.
 *
 * WhatsApp's own sequence, which Baileys exposes as `connection.update` events: an unlinked device
 * gets a series of QR codes; once the phone scans one, the server sends the new credentials
 * (`creds.update`, saved at once) and closes with 515 "restart required"; the next connection
 * opens as the linked device. A QR series that nobody scans ends with 408. 401 means the device
 * was logged out (from the phone, or replaced); 440 that another client took this session over.
 *
 * Linking by phone number is the same connection with another first step: once the server shows
 * it is waiting for a link (the first QR code, which is then not shown), `requestPairingCode`
 * registers the number and returns the 8-character code the person types on the phone. The phone
 * then completes the same pair-success → 515 → open sequence as a scan. Asking earlier fails: the
 * socket is not ready to send until WhatsApp has greeted it. The connection still ends with 408
 * when its QR series runs out, which is then the code's end too.
 */
import type { ConnectionState, WAMessage } from "baileys";
import type { AuthStore } from "./auth-store.js";
import { baileys } from "./baileys.js";
import { baileysLogger, type WhatsAppSocket, type WhatsAppTransport } from "./transport.js";

export type LinkStatus = "idle" | "connecting" | "open" | "closed";

/** Why the device is not linked: logged out, replaced, no code used in time, or no code issued. */
export type UnlinkCause = "logged_out" | "qr_timeout" | "replaced" | "code_refused";

/** How `connect` links an unlinked device: by QR codes, or by a pairing code for `phoneNumber`. */
export type PairingMode = false | { qr: true } | { phoneNumber: string };

export interface LinkHandlers {
  /** Pairing: a new QR code to show. */
  qr(code: string): void;
  /** Pairing by phone number: the code to type on the phone. */
  pairingCode(code: string): void;
  /** Pairing: the phone scanned the code; the device is finishing its link. */
  scanned(): void;
  /** The connection is open as `account`. */
  open(account: string): void;
  /** The connection dropped; a reconnection is scheduled unless `final`. */
  closed(reason: string, final: boolean): void;
  /** The device is not linked (anymore): logged out, or no code was scanned in time. */
  unlinked(reason: string, cause: UnlinkCause): void;
  messages(messages: WAMessage[]): void;
}

export class Link {
  private socket: WhatsAppSocket | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempts = 0;
  private pairing: PairingMode = false;
  /** The pairing code was asked for on this pairing (one per pairing: QR rotation keeps it valid). */
  private codeAsked = false;
  status: LinkStatus = "idle";

  constructor(
    private readonly transport: WhatsAppTransport,
    private readonly auth: AuthStore,
    private readonly handlers: LinkHandlers,
    private readonly log: (line: string) => void,
    private readonly reconnectMaxMs: number,
  ) {}

  /** The open socket, for sending; undefined unless the connection is open. */
  get open(): WhatsAppSocket | undefined {
    return this.status === "open" ? this.socket : undefined;
  }

  /** Connects; `pairing` links an unlinked device (without it, an unlinked device is an error). */
  connect(pairing: PairingMode): void {
    this.pairing = pairing;
    this.codeAsked = false;
    this.attempts = 0;
    this.openSocket();
  }

  /** Disconnects for good (no reconnection); the keys stay. */
  async close(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const socket = this.socket;
    this.socket = undefined;
    this.status = "idle";
    if (socket !== undefined) await socket.end(undefined);
  }

  /** Logs the device out at WhatsApp (best effort) and wipes its keys. */
  async logout(): Promise<void> {
    const socket = this.open;
    if (socket !== undefined) await socket.logout().catch(() => undefined);
    await this.close();
    this.auth.clear();
  }

  private openSocket(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const { state, saveCreds } = this.auth.open();
    const socket = this.transport.makeSocket({ auth: state, logger: baileysLogger(this.log) });
    this.socket = socket;
    this.status = "connecting";
    const mine = () => this.socket === socket;
    socket.ev.on("creds.update", () => {
      // Saved even from a socket being replaced: these are the keys WhatsApp now expects.
      saveCreds();
    });
    socket.ev.on("connection.update", (update) => {
      if (mine()) this.onUpdate(socket, update);
    });
    socket.ev.on("messages.upsert", ({ messages, type }) => {
      // "append" is history the phone syncs (old messages), only "notify" is new.
      if (mine() && type === "notify") this.handlers.messages(messages);
    });
  }

  private onUpdate(socket: WhatsAppSocket, update: Partial<ConnectionState>): void {
    if (update.qr !== undefined) {
      if (this.pairing !== false && "phoneNumber" in this.pairing)
        this.askCode(socket, this.pairing.phoneNumber);
      else if (this.pairing !== false) this.handlers.qr(update.qr);
      else {
        this.log("WhatsApp asks for a QR code: the device is not linked; start a pairing to link it");
        void this.drop("qr_timeout", "the device is not linked");
        return;
      }
    }
    if (update.isNewLogin) this.handlers.scanned();
    if (update.connection === "open") {
      this.status = "open";
      this.attempts = 0;
      this.pairing = false;
      this.handlers.open(socket.user?.id ?? this.auth.account() ?? "unknown");
      return;
    }
    if (update.connection !== "close") return;
    const error = update.lastDisconnect?.error as (Error & { output?: { statusCode?: number } }) | undefined;
    const code = error?.output?.statusCode;
    const reason = `${error?.message ?? "connection closed"}${code === undefined ? "" : ` (${code})`}`;
    this.socket = undefined;
    this.status = "closed";
    if (code === baileys().DisconnectReason.loggedOut) {
      void this.drop("logged_out", `WhatsApp logged this device out: ${reason}`);
      return;
    }
    if (code === baileys().DisconnectReason.connectionReplaced) {
      void this.drop("replaced", `another WhatsApp Web session took this one over: ${reason}`);
      return;
    }
    if (code === baileys().DisconnectReason.timedOut && this.pairing !== false && !this.auth.linked()) {
      const byCode = "phoneNumber" in this.pairing;
      void this.drop(
        "qr_timeout",
        byCode ? "the pairing code was not entered in time" : "no QR code was scanned in time",
      );
      return;
    }
    if (code === baileys().DisconnectReason.restartRequired) {
      // The normal second step of linking (and a server-side restart): reconnect at once.
      this.handlers.closed(reason, false);
      this.openSocket();
      return;
    }
    const delay = backoff(this.attempts++, this.reconnectMaxMs);
    this.handlers.closed(`${reason}; reconnecting in ${delay} ms`, false);
    this.retryTimer = setTimeout(() => this.openSocket(), delay);
    this.retryTimer.unref();
  }

  /** Once per pairing: WhatsApp is waiting for a link, so the number may now ask for a code. */
  private askCode(socket: WhatsAppSocket, phoneNumber: string): void {
    if (this.codeAsked) return;
    this.codeAsked = true;
    socket.requestPairingCode(phoneNumber).then(
      (code) => {
        if (this.socket === socket) this.handlers.pairingCode(code);
      },
      (error: Error) => {
        if (this.socket === socket)
          void this.drop("code_refused", `WhatsApp did not issue a pairing code: ${error.message}`);
      },
    );
  }

  private async drop(cause: UnlinkCause, reason: string): Promise<void> {
    const wasPairing = this.pairing !== false;
    this.pairing = false;
    await this.close();
    // Dead keys (logged out) or a half-made link (no scan, no code) must not be reused: the next
    // pairing starts from fresh credentials.
    if (cause === "logged_out" || cause === "code_refused" || (cause === "qr_timeout" && wasPairing))
      this.auth.clear();
    this.status = "closed";
    this.handlers.unlinked(reason, cause);
  }
}

/** 1 s, 2 s, 4 s … up to `max`, with a little jitter so many devices do not retry in step. */
export function backoff(attempt: number, max: number): number {
  const base = Math.min(max, 1000 * 2 ** Math.min(attempt, 20));
  return Math.round(base * (0.8 + Math.random() * 0.2));
}
