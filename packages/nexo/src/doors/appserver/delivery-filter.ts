/**
 * Which notifications one connection receives, decided once from what it declared in `initialize`:
 * - `optOutNotificationMethods`: exact, case-sensitive method names it never wants;
 * - `streamingSupport: false`: no deltas at all (item/completed still carries the whole text);
 * - `commandExecutionStreaming` (default off): `commandExecution` items and their output deltas;
 * - `toolExecutionLifecycle` (default off): `toolExecution` items;
 * - `configChange: false`: no `workspace/configChanged`.
 * Items a connection did not ask for are also left out of the turns it reads (`turn/completed`,
 * `thread/read`), so each connection sees one consistent view.
 */
import type { ChannelAdapterCapability, ClientCapabilities } from "@nexo/wire/schemas/appserver";

/** Deltas: previews of what a later `item/completed` carries whole (see outbox.ts). */
export function isStreamingDelta(method: string): boolean {
  return (
    method === "item/agentMessage/delta" ||
    method === "item/reasoning/delta" ||
    method === "item/commandExecution/outputDelta" ||
    method === "item/toolCall/argumentsDelta"
  );
}

/** The effective capabilities of a client: its declaration with the protocol's defaults applied. */
export interface EffectiveClientCapabilities {
  approvalSupport: boolean;
  streamingSupport: boolean;
  commandExecutionStreaming: boolean;
  toolExecutionLifecycle: boolean;
  configChange: boolean;
  optOut: ReadonlySet<string>;
  /** Present when the client is an external channel adapter (channel-adapters.ts). */
  channelAdapter: ChannelAdapterCapability | undefined;
}

export function effectiveCapabilities(declared: ClientCapabilities | undefined): EffectiveClientCapabilities {
  return {
    approvalSupport: declared?.approvalSupport ?? true,
    streamingSupport: declared?.streamingSupport ?? true,
    commandExecutionStreaming: declared?.commandExecutionStreaming ?? false,
    toolExecutionLifecycle: declared?.toolExecutionLifecycle ?? false,
    configChange: declared?.configChange ?? true,
    optOut: new Set(declared?.optOutNotificationMethods ?? []),
    channelAdapter: declared?.channelAdapter,
  };
}

interface ItemLike {
  type?: unknown;
}

export class DeliveryFilter {
  constructor(private readonly caps: EffectiveClientCapabilities) {}

  /** Whether this connection receives `method` with these params. */
  allows(method: string, params: unknown): boolean {
    if (this.caps.optOut.has(method)) return false;
    if (!this.caps.streamingSupport && isStreamingDelta(method)) return false;
    if (method === "item/commandExecution/outputDelta") return this.caps.commandExecutionStreaming;
    if (method === "workspace/configChanged") return this.caps.configChange;
    if (method === "item/started" || method === "item/completed") {
      return this.wantsItem((params as { item?: ItemLike } | undefined)?.item);
    }
    return true;
  }

  /** Whether an item of this type belongs in this connection's view. */
  wantsItem(item: ItemLike | undefined): boolean {
    const type = item?.type;
    if (type === "commandExecution") return this.caps.commandExecutionStreaming;
    if (type === "toolExecution") return this.caps.toolExecutionLifecycle;
    return true;
  }

  /** `items` without the ones this connection did not ask for (the same array when none is dropped). */
  items<T extends ItemLike>(items: T[]): T[] {
    if (this.caps.commandExecutionStreaming && this.caps.toolExecutionLifecycle) return items;
    return items.every((item) => this.wantsItem(item)) ? items : items.filter((item) => this.wantsItem(item));
  }
}
