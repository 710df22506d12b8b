/**
 * Pairing a "device" with the loopback channel, the way a phone links a WhatsApp account: the
 * daemon asks for a challenge (`channel.pairing.start`), the channel shows a QR code whose payload
 * is a URL on its own HTTP listener, and whoever "scans" it — POSTs to that URL — plays the phone:
 *
 *   start            → qr_ready       {qr_ascii, qr_png_base64}   (reported right after the reply)
 *   POST /pairing/scan {code, device} → awaiting_user              (the phone asks its user)
 *   POST /pairing/confirm {code}      → linked  {device_jid: "<device>@loopback"}
 *   no scan in time                   → expired {error}            (LOOPBACK_PAIRING_TTL_MS)
 *   channel.pairing.cancel            → forgotten, nothing reported (the daemon ended it)
 *
 * The code is 128 random bits: only who sees the QR code can complete the challenge. Each report
 * is a `channel.pairing.update` notification (the SDK's `broker.pairingUpdate`).
 */
import { randomBytes } from "node:crypto";
import type { PairingStartReply, PairingUpdate } from "nexo-plugin-sdk";
import QRCode from "qrcode";

export type PairingReport = (update: PairingUpdate) => Promise<void>;

/** A scan or confirm the channel cannot accept; `status` is the HTTP answer. */
export class PairingRefusedError extends Error {
  constructor(
    readonly status: 404 | 409,
    message: string,
  ) {
    super(message);
    this.name = "PairingRefusedError";
  }
}

interface Challenge {
  id: string;
  code: string;
  state: "qr_ready" | "awaiting_user";
  device?: string;
  timer: NodeJS.Timeout;
}

export class LoopbackPairing {
  private readonly byCode = new Map<string, Challenge>();
  private readonly byId = new Map<string, Challenge>();

  constructor(
    private readonly report: PairingReport,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Opens a challenge scannable at `baseUrl` until the earlier of `ttlMs` from now and the
   * daemon's deadline; the QR code is reported once the caller has answered the daemon.
   */
  async start(
    challengeId: string,
    baseUrl: string,
    ttlMs: number,
    hostDeadlineMs: number,
  ): Promise<PairingStartReply> {
    const code = randomBytes(16).toString("base64url");
    const payload = `${baseUrl}/pairing/scan?code=${code}`;
    const [qrAscii, png] = await Promise.all([
      QRCode.toString(payload, { type: "utf8" }),
      QRCode.toBuffer(payload, { type: "png", margin: 2, scale: 4 }),
    ]);
    const expiresAtMs = Math.min(Date.now() + ttlMs, hostDeadlineMs);
    const challenge: Challenge = {
      id: challengeId,
      code,
      state: "qr_ready",
      timer: setTimeout(() => this.expire(challenge), Math.max(0, expiresAtMs - Date.now())),
    };
    this.byCode.set(code, challenge);
    this.byId.set(challengeId, challenge);
    setImmediate(() =>
      this.send({
        challenge_id: challengeId,
        state: "qr_ready",
        data: { qr_ascii: qrAscii, qr_png_base64: png.toString("base64") },
      }),
    );
    return {
      expires_at_ms: expiresAtMs,
      instructions: "Scan the QR code: POST {code, device} to its URL, then POST {code} to /pairing/confirm",
    };
  }

  /** The daemon ended the challenge: forget it. Unknown ids are fine (cancel is idempotent). */
  cancel(challengeId: string): void {
    const challenge = this.byId.get(challengeId);
    if (challenge !== undefined) this.forget(challenge);
  }

  /** A device scanned the QR code. */
  scan(code: string, device: string): void {
    const challenge = this.live(code);
    if (challenge.state !== "qr_ready")
      throw new PairingRefusedError(409, "this QR code was already scanned");
    challenge.state = "awaiting_user";
    challenge.device = device;
    this.send({ challenge_id: challenge.id, state: "awaiting_user" });
  }

  /** The scanning device's user confirmed: the account is linked. */
  confirm(code: string): string {
    const challenge = this.live(code);
    if (challenge.state !== "awaiting_user" || challenge.device === undefined)
      throw new PairingRefusedError(409, "scan the QR code first");
    const deviceJid = `${challenge.device}@loopback`;
    this.forget(challenge);
    this.send({ challenge_id: challenge.id, state: "linked", data: { device_jid: deviceJid } });
    this.log(`pairing ${challenge.id} linked ${deviceJid}`);
    return deviceJid;
  }

  /** Every open challenge ends (the channel stops); the daemon expires them on its side. */
  close(): void {
    for (const challenge of this.byId.values()) this.forget(challenge);
  }

  private live(code: string): Challenge {
    const challenge = this.byCode.get(code);
    if (challenge === undefined)
      throw new PairingRefusedError(404, "no open pairing challenge has this code (expired or cancelled?)");
    return challenge;
  }

  private expire(challenge: Challenge): void {
    this.forget(challenge);
    this.send({
      challenge_id: challenge.id,
      state: "expired",
      data: { error: "the QR code was not scanned and confirmed in time" },
    });
  }

  private forget(challenge: Challenge): void {
    clearTimeout(challenge.timer);
    this.byCode.delete(challenge.code);
    this.byId.delete(challenge.id);
  }

  private send(update: PairingUpdate): void {
    this.report(update).catch((error: Error) =>
      this.log(`cannot report pairing ${update.challenge_id} ${update.state}: ${error.message}`),
    );
  }
}
