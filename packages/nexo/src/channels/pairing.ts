/**
 * Pairing challenges: linking a channel account (a WhatsApp phone, …) by a challenge the operator
 * completes out of band, driven by the channel's provider (./features.ts, ChannelPairing).
 *
 * A challenge starts `pending`; the provider reports each change (`qr_ready` with the QR code,
 * `awaiting_user` once scanned, `linked` with the device id, or `expired`) and every change goes
 * to `onChange` — the admin RPC pushes it to microapps as `pairing_status_changed`. A challenge
 * ends in `linked`, `expired` or `cancelled` and never changes after that.
 *
 * The deadline is the host's (`ttlMs`) or the provider's own when earlier (a QR code's lifetime).
 * The provider is expected to report `expired` itself; if it has not `graceMs` after the deadline,
 * the challenge expires here (a provider that went away cannot hold a challenge open), and a
 * status read past that point sees it expired at once. Ended challenges stay readable for
 * `keepEndedMs`, then are forgotten. Nothing here survives a restart: a QR code lives for seconds,
 * so a stored challenge would be useless after one.
 */
import type { admin } from "@nexo/wire/schemas";
import { v7 as uuidv7 } from "uuid";
import type { ChannelPairing } from "./features.js";

export const DEFAULT_PAIRING_TTL_MS = 180_000;
export const DEFAULT_PAIRING_GRACE_MS = 2_000;
export const DEFAULT_KEEP_ENDED_MS = 600_000;

const TERMINAL: ReadonlySet<admin.PairingState> = new Set(["linked", "expired", "cancelled"]);

export interface PairingStartRequest {
  agentId: string;
  channel: string;
  instance?: string | undefined;
  /** Link by phone number (a pairing code) instead of a QR code; passed to the provider only. */
  phoneNumber?: string | undefined;
}

export type PairingStarted = admin.PairingStartResult;

export interface PairingChallengesOptions {
  /** The channel's pairing; throws (channel_unavailable) when the channel cannot pair here. */
  pairingOf(channel: string): ChannelPairing;
  /** Every state change after the start, in order. */
  onChange(status: admin.PairingStatus): void;
  /** Logs a provider's failure to cancel (the challenge is ended here regardless). */
  warn?(message: string, fields: Record<string, unknown>): void;
  ttlMs?: number;
  graceMs?: number;
  keepEndedMs?: number;
  now?: () => number;
}

interface Challenge {
  status: admin.PairingStatus;
  pairing: ChannelPairing;
  expiresAtMs: number;
  /** Set once ended: when it may be forgotten. */
  forgetAtMs?: number;
  timer?: NodeJS.Timeout;
  unlisten?: () => void;
}

export class PairingChallenges {
  private readonly challenges = new Map<string, Challenge>();
  private readonly ttlMs: number;
  private readonly graceMs: number;
  private readonly keepEndedMs: number;
  private readonly now: () => number;

  constructor(private readonly options: PairingChallengesOptions) {
    this.ttlMs = options.ttlMs ?? DEFAULT_PAIRING_TTL_MS;
    this.graceMs = options.graceMs ?? DEFAULT_PAIRING_GRACE_MS;
    this.keepEndedMs = options.keepEndedMs ?? DEFAULT_KEEP_ENDED_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * Starts a challenge through the channel's provider. Rejects with the provider's error (the
   * challenge is then forgotten) or with the channel's unavailability.
   */
  async start(request: PairingStartRequest): Promise<PairingStarted> {
    this.forgetEnded();
    const pairing = this.options.pairingOf(request.channel);
    const challengeId = uuidv7();
    const hostDeadline = this.now() + this.ttlMs;
    const challenge: Challenge = {
      pairing,
      expiresAtMs: hostDeadline,
      status: {
        challenge_id: challengeId,
        state: "pending",
        channel: request.channel,
        ...(request.instance === undefined ? {} : { instance: request.instance }),
      },
    };
    this.challenges.set(challengeId, challenge);
    // Changes the provider reports before its reply reaches us are kept and told after the reply,
    // so a microapp learns the challenge id before any notification about it.
    let held: admin.PairingStatus[] | undefined = [];
    const tell = (status: admin.PairingStatus) => {
      if (held) held.push(status);
      else this.options.onChange(status);
    };
    challenge.unlisten = pairing.onUpdate((update) => {
      if (update.challenge_id !== challengeId) return;
      this.apply(challenge, update.state, update.data, tell);
    });
    let reply: Awaited<ReturnType<ChannelPairing["start"]>>;
    try {
      reply = await pairing.start({
        challenge_id: challengeId,
        agent_id: request.agentId,
        instance: request.instance ?? null,
        expires_at_ms: hostDeadline,
        // The number goes to the provider and nowhere else: the challenge does not keep it.
        ...(request.phoneNumber === undefined ? {} : { phone_number: request.phoneNumber }),
      });
    } catch (error) {
      challenge.unlisten();
      this.challenges.delete(challengeId);
      throw error;
    }
    if (reply.expires_at_ms !== undefined && reply.expires_at_ms < hostDeadline)
      challenge.expiresAtMs = reply.expires_at_ms;
    if (!TERMINAL.has(challenge.status.state)) this.arm(challenge, tell);
    const pending = held;
    held = undefined;
    setImmediate(() => {
      for (const status of pending) this.options.onChange(status);
    });
    return {
      challenge_id: challengeId,
      expires_at_ms: challenge.expiresAtMs,
      ...(reply.instructions === undefined ? {} : { instructions: reply.instructions }),
    };
  }

  /** The challenge as it stands; undefined when unknown (never started, or forgotten). */
  status(challengeId: string): admin.PairingStatus | undefined {
    this.forgetEnded();
    const challenge = this.challenges.get(challengeId);
    if (challenge === undefined) return undefined;
    if (!TERMINAL.has(challenge.status.state) && this.now() >= challenge.expiresAtMs + this.graceMs)
      this.expire(challenge, (status) => this.options.onChange(status));
    return structuredClone(challenge.status);
  }

  /** Ends a live challenge (the provider is told); false when unknown or already ended. */
  cancel(challengeId: string): boolean {
    const challenge = this.challenges.get(challengeId);
    if (challenge === undefined || TERMINAL.has(challenge.status.state)) return false;
    this.end(challenge, "cancelled", { error: "cancelled by the operator" }, (status) =>
      this.options.onChange(status),
    );
    this.tellProvider(challenge);
    return true;
  }

  /** Ends every live challenge (the daemon stops): the providers are told, nobody is notified. */
  close(): void {
    for (const challenge of this.challenges.values()) {
      if (TERMINAL.has(challenge.status.state)) continue;
      this.end(challenge, "cancelled", { error: "the daemon stopped" }, () => {});
      this.tellProvider(challenge);
    }
  }

  private apply(
    challenge: Challenge,
    state: admin.PairingState,
    data: admin.PairingStatusData | undefined,
    tell: (status: admin.PairingStatus) => void,
  ): void {
    if (TERMINAL.has(challenge.status.state)) return;
    if (TERMINAL.has(state)) {
      this.end(challenge, state, data, tell);
      return;
    }
    challenge.status = withState(challenge.status, state, data);
    tell(structuredClone(challenge.status));
  }

  private arm(challenge: Challenge, tell: (status: admin.PairingStatus) => void): void {
    const delay = Math.max(0, challenge.expiresAtMs + this.graceMs - this.now());
    challenge.timer = setTimeout(() => {
      if (TERMINAL.has(challenge.status.state)) return;
      this.expire(challenge, tell);
    }, delay);
    challenge.timer.unref();
  }

  private expire(challenge: Challenge, tell: (status: admin.PairingStatus) => void): void {
    this.end(
      challenge,
      "expired",
      { error: "the channel did not complete the pairing before its deadline" },
      tell,
    );
    this.tellProvider(challenge);
  }

  private end(
    challenge: Challenge,
    state: admin.PairingState,
    data: admin.PairingStatusData | undefined,
    tell: (status: admin.PairingStatus) => void,
  ): void {
    clearTimeout(challenge.timer);
    challenge.unlisten?.();
    challenge.status = withState(challenge.status, state, data);
    challenge.forgetAtMs = this.now() + this.keepEndedMs;
    tell(structuredClone(challenge.status));
  }

  /** Best effort: the provider stops showing a QR code nobody will scan. */
  private tellProvider(challenge: Challenge): void {
    const { challenge_id: id, channel } = challenge.status;
    challenge.pairing.cancel(id).catch((error: Error) => {
      this.options.warn?.("the channel could not cancel a pairing challenge", {
        challenge_id: id,
        channel,
        err: error.message,
      });
    });
  }

  private forgetEnded(): void {
    const now = this.now();
    for (const [id, challenge] of this.challenges) {
      if (challenge.forgetAtMs !== undefined && challenge.forgetAtMs <= now) this.challenges.delete(id);
    }
  }
}

function withState(
  status: admin.PairingStatus,
  state: admin.PairingState,
  data: admin.PairingStatusData | undefined,
): admin.PairingStatus {
  const { data: _previous, ...rest } = status;
  return { ...rest, state, ...(data === undefined ? {} : { data }) };
}
