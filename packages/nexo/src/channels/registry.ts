/**
 * Channels: the doors between nexo and a messaging service (Slack, Telegram, a webhook …). A
 * channel kind is served by one ChannelAdapter; today adapters come from plugins
 * (`[plugin.extends].channels`, plugin contract §5.x), and the daemon's router sends replies
 * through the registry without caring who implements the kind.
 *
 * Adapters fail with the typed channel errors of @nexo/wire — ChannelConnectionError (-33001),
 * ChannelAuthenticationError (-33002), ChannelRecipientError (-33003, `recipient`, `reason`),
 * ChannelRateLimitedError (-33004, `retryAfterSecs`), ChannelUnsupportedError (-33005, `feature`)
 * — or with a transport error (timeout, the plugin stopped).
 */
import type { plugin } from "@nexo/wire/schemas";
import type { ChannelFeatures } from "./features.js";

/** What to send: `{kind: "text", to, body}`, `{kind: "media", to, url, caption?}` or `{kind: "custom", …}`. */
export type OutboundMessage = plugin.OutboundMessage;

/** The service's acknowledgement of a sent message. */
export interface OutboundReceipt {
  messageId: string;
  /** When it was sent, in Unix seconds. */
  sentAtUnix: number;
}

export interface ChannelStartOptions {
  /** A named instance of the kind (e.g. one of several Slack workspaces); null or absent for none. */
  instance?: string | null;
}

export interface ChannelAdapter {
  readonly kind: string;
  /** Who provides the kind, for logs and status: `plugin:slack`. */
  readonly owner: string;
  /** Connects and begins delivering inbound messages (for `instance`, when given). */
  start(options?: ChannelStartOptions): Promise<void>;
  /** Releases the connection and stops inbound delivery. Idempotent. */
  stop(): Promise<void>;
  sendOutbound(message: OutboundMessage): Promise<OutboundReceipt>;
  /** The optional features (./features.ts) the provider offers now; absent: none. */
  features?(): ChannelFeatures;
}

/** A second adapter for a kind that already has one (two plugins claiming the same channel). */
export class DuplicateChannelError extends Error {
  readonly code = "duplicate_channel" as const;
  readonly kind: string;
  constructor(kind: string, existingOwner: string, newOwner: string) {
    super(
      `channel kind "${kind}" is already provided by ${existingOwner}; ${newOwner} cannot register it too`,
    );
    this.name = "DuplicateChannelError";
    this.kind = kind;
  }
}

/** No adapter serves the kind (a typo in config, or its plugin is not running). */
export class UnknownChannelError extends Error {
  readonly code = "unknown_channel" as const;
  readonly kind: string;
  constructor(kind: string, known: readonly string[]) {
    super(
      `no channel adapter for kind "${kind}"; registered kinds: ${known.length ? known.join(", ") : "(none)"}`,
    );
    this.name = "UnknownChannelError";
    this.kind = kind;
  }
}

export class ChannelRegistry {
  private readonly adapters = new Map<string, ChannelAdapter>();

  /**
   * Adds an adapter under its kind. Returns a function that removes it again, and only it: an
   * adapter registered later under the same kind (with `replace`) is left alone.
   */
  register(adapter: ChannelAdapter, options: { replace?: boolean } = {}): () => void {
    const existing = this.adapters.get(adapter.kind);
    if (existing !== undefined && existing !== adapter && !options.replace) {
      throw new DuplicateChannelError(adapter.kind, existing.owner, adapter.owner);
    }
    this.adapters.set(adapter.kind, adapter);
    return () => {
      if (this.adapters.get(adapter.kind) === adapter) this.adapters.delete(adapter.kind);
    };
  }

  get(kind: string): ChannelAdapter | undefined {
    return this.adapters.get(kind);
  }

  /** Like `get`, but an unknown kind is an UnknownChannelError listing the known ones. */
  require(kind: string): ChannelAdapter {
    const adapter = this.adapters.get(kind);
    if (adapter === undefined) throw new UnknownChannelError(kind, this.kinds());
    return adapter;
  }

  has(kind: string): boolean {
    return this.adapters.has(kind);
  }

  kinds(): string[] {
    return [...this.adapters.keys()].sort();
  }

  list(): ChannelAdapter[] {
    return [...this.adapters.values()];
  }
}
