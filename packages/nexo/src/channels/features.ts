/**
 * What a channel may offer beyond sending and receiving: the optional features the operator
 * surface uses. A ChannelAdapter exposes the ones its provider offers right now through
 * `features()` (a plugin advertises them in its `initialize` reply, so a restarted plugin may offer
 * other ones); a feature left out is one the admin RPC reports as channel_unavailable.
 *
 * - pairing: link an account by a challenge the operator completes out of band (a QR code), the
 *   provider reporting each state change;
 * - bots: the AI bots an agent's linked account can talk to, and a one-off message to one;
 * - credentials: the persister `credentials/register` runs — a shape check, the channel's own
 *   runtime state written, a connectivity probe;
 * - replyStream: the pieces of a reply while the agent writes it, before the whole reply is sent
 *   (the router uses it; a channel without it gets the whole reply only).
 *
 * The shapes are the plugin contract's (../../wire schemas, plugin/channel-features.ts).
 */
import type { plugin } from "@nexo/wire/schemas";

/** A request's params less `kind` (the adapter adds it) and less the schemas' open index signature. */
type WithoutKind<T> = { [K in keyof T as K extends "kind" ? never : string extends K ? never : K]: T[K] };

export interface ChannelPairing {
  /** Begins a challenge; the provider reports its progress through `onUpdate`. */
  start(params: WithoutKind<plugin.ChannelPairingStartParams>): Promise<plugin.ChannelPairingStartResult>;
  /** Stops a challenge; fine for one the provider no longer knows. */
  cancel(challengeId: string): Promise<void>;
  /** Calls `listener` with every state change the provider reports. Returns the remover. */
  onUpdate(listener: (update: plugin.ChannelPairingUpdateParams) => void): () => void;
}

export interface ChannelBots {
  list(params: WithoutKind<plugin.ChannelBotsListParams>): Promise<plugin.ChannelBot[]>;
  /** Returns the channel's message id. */
  send(params: WithoutKind<plugin.ChannelBotsSendParams>): Promise<string>;
}

export type ChannelCredential = WithoutKind<plugin.ChannelCredentialsParams>;

export interface ChannelCredentialPersister {
  /** The network-free shape check. */
  validate(credential: ChannelCredential): Promise<plugin.ChannelCredentialsValidateResult>;
  /** Writes the channel's own runtime state; false when the provider has no such step. */
  persist(credential: ChannelCredential): Promise<boolean>;
  /** The best-effort connectivity check; `not_probed` when the provider does not probe. */
  probe(credential: ChannelCredential): Promise<plugin.ChannelCredentialsProbeResult>;
}

/** A piece of a reply being written, for a channel that shows replies growing. */
export type ChannelReplyDelta = WithoutKind<plugin.ChannelReplyDeltaParams>;

export interface ChannelReplyStream {
  /** Sends one piece; fire and forget (the whole reply follows through sendOutbound). */
  delta(piece: ChannelReplyDelta): void;
}

export interface ChannelFeatures {
  pairing?: ChannelPairing;
  bots?: ChannelBots;
  credentials?: ChannelCredentialPersister;
  replyStream?: ChannelReplyStream;
}
