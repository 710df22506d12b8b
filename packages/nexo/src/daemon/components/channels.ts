/**
 * The channels component: `channel.start` for every (kind, instance) an active agent is bound to
 * and a local adapter serves — at boot, when a plugin comes up late or restarts (a crashed plugin's
 * new process starts with no channel running, so it is sent `channel.start` again), and after a
 * reload; on stop, `channel.stop` for every adapter, so no new message comes in while the turns in
 * flight finish. A kind without a local adapter is served by another daemon
 * through the broker; a failing `channel.start` is logged and does not stop the daemon (the
 * plugin may recover, and other channels must keep working).
 */
import type { ChannelAdapter, ChannelRegistry } from "../../channels/registry.js";
import type { Logger } from "../../log.js";
import type { Component } from "../lifecycle.js";
import type { DaemonAgent } from "./registries.js";

/** One bound (kind, instance), as the channels list shows it. */
export interface BoundChannel {
  kind: string;
  /** null: the kind's instance-less traffic. */
  instance: string | null;
  /** The active agents bound to it (one, since a binding routes to a single agent). */
  agents: string[];
  /** Who serves the kind here (`plugin:<id>`), or undefined when no local adapter does. */
  owner: string | undefined;
  /** Whether `channel.start` last succeeded for it. */
  started: boolean;
  /** Why the last `channel.start` failed. */
  error?: string;
}

export class BoundChannels implements Component {
  readonly name = "channels";
  /** channel.start sent, per `<kind>.<instance>`: to which adapter, and its outcome once known. */
  private readonly sent = new Map<string, { adapter: ChannelAdapter; done: Promise<void> }>();
  private readonly outcomes = new Map<string, { started: boolean; error?: string }>();
  private unlisten: (() => void) | undefined;

  constructor(
    private readonly registry: ChannelRegistry,
    private readonly agents: () => Iterable<DaemonAgent>,
    /** Calls back whenever a plugin's wrappers went into the registries (a late or restarted plugin). */
    private readonly onPluginWired: (listener: () => void) => () => void,
    private readonly logger: Logger,
    /** Calls back when a wired plugin's crashed process was replaced by a new one. */
    private readonly onPluginRespawned: (listener: (pluginId: string) => void) => () => void = () => () => {},
  ) {}

  async start(): Promise<void> {
    // A plugin whose first attempt failed comes up later; its bound channels start then.
    const unwired = this.onPluginWired(() => void this.startBound());
    const unrespawned = this.onPluginRespawned((pluginId) => {
      const owner = `plugin:${pluginId}`;
      for (const [key, sent] of this.sent) if (sent.adapter.owner === owner) this.sent.delete(key);
      void this.startBound();
    });
    this.unlisten = () => {
      unwired();
      unrespawned();
    };
    await this.startBound();
  }

  /**
   * channel.start for every bound (kind, instance) served locally that was not sent to its adapter
   * yet (a restarted plugin's adapter is a new one). Resolves when each has started or failed.
   */
  async startBound(): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const bound of this.bound()) {
      const adapter = this.registry.get(bound.kind);
      const key = keyOf(bound.kind, bound.instance);
      if (!adapter) {
        this.logger.info(
          { channel: bound.kind },
          "no local adapter for this channel: its messages are expected through the broker",
        );
        this.outcomes.delete(key);
        continue;
      }
      const sent = this.sent.get(key);
      if (sent?.adapter === adapter) {
        waits.push(sent.done);
        continue;
      }
      // Recorded before the call, so a second startBound meanwhile waits for this one.
      const done = this.send(adapter, key, bound.instance);
      this.sent.set(key, { adapter, done });
      await done;
    }
    await Promise.all(waits);
  }

  /** Forget what was sent, so the next startBound sends channel.start again to every channel (a reload). */
  resend(): void {
    this.sent.clear();
  }

  async stop(): Promise<void> {
    this.unlisten?.();
    for (const adapter of this.registry.list()) {
      await adapter
        .stop()
        .catch((error: Error) =>
          this.logger.warn({ channel: adapter.kind, err: error.message }, "channel.stop failed"),
        );
    }
  }

  private async send(adapter: ChannelAdapter, key: string, instance: string | null): Promise<void> {
    try {
      await adapter.start({ instance });
      this.outcomes.set(key, { started: true });
    } catch (error) {
      const message = (error as Error).message;
      this.outcomes.set(key, { started: false, error: message });
      this.logger.error({ channel: adapter.kind, err: message }, "channel.start failed");
    }
  }

  /** Every (kind, instance) an active agent is bound to, with who serves it and whether it started. */
  list(): BoundChannel[] {
    return this.bound().map((bound) => {
      const outcome = this.outcomes.get(keyOf(bound.kind, bound.instance));
      return {
        ...bound,
        owner: this.registry.get(bound.kind)?.owner,
        started: outcome?.started ?? false,
        ...(outcome?.error === undefined ? {} : { error: outcome.error }),
      };
    });
  }

  private bound(): Array<{ kind: string; instance: string | null; agents: string[] }> {
    const byKey = new Map<string, { kind: string; instance: string | null; agents: string[] }>();
    for (const agent of this.agents()) {
      if (!agent.active) continue;
      for (const binding of agent.bindings) {
        const instance = binding.instance ?? null;
        const key = keyOf(binding.plugin, instance);
        const entry = byKey.get(key) ?? { kind: binding.plugin, instance, agents: [] };
        entry.agents.push(agent.id);
        byKey.set(key, entry);
      }
    }
    return [...byKey.values()];
  }
}

const keyOf = (kind: string, instance: string | null) => `${kind}.${instance ?? ""}`;
