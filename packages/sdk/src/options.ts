/**
 * What a plugin gives its PluginAdapter: the upstream options, unchanged, plus handlers for the
 * contract methods upstream lacks (channels §5.x, LLM providers §5.y, hooks §5.z, vector memory
 * §5.w) and the bounds of this SDK's shutdown and outbound frames.
 *
 * A handler left out means the method is not implemented: the host gets -32601, which the contract
 * reads as "unsupported" for channels and as "continue" for hooks.
 */
import type { plugin } from "@nexo/wire/schemas";
import type { BrokerSender } from "./broker.js";
import type { Event } from "./event.js";
import type { ToolDef, ToolHandler, ToolHandlerWithContext } from "./tools.js";

export type EventHandler = (topic: string, event: Event, broker: BrokerSender) => void | Promise<void>;
export type ShutdownHandler = () => void | Promise<void>;

/** What every handler of the nexo-specific methods receives besides its params. */
export interface HandlerContext {
  readonly broker: BrokerSender;
  readonly pluginId: string;
  /** Aborted when the host goes away or shutdown abandons this call. */
  readonly signal: AbortSignal;
}

type Awaitable<T> = T | Promise<T>;
/** A reply that may be left out: TypeScript infers `void` for a handler that returns nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: `void` is exactly what a handler without a return statement has
type OptionalReply<T> = Awaitable<T | void>;

// --- channels (§5.x) -----------------------------------------------------------------------------

/** Returning nothing answers `{ok: true}`. */
export type ChannelStartHandler = (
  params: plugin.ChannelStartParams,
  ctx: HandlerContext,
) => OptionalReply<plugin.OkResult>;
export type ChannelStopHandler = (
  params: plugin.ChannelStopParams,
  ctx: HandlerContext,
) => OptionalReply<plugin.OkResult>;
export type ChannelSendOutboundHandler = (
  params: plugin.ChannelSendOutboundParams,
  ctx: HandlerContext,
) => Awaitable<plugin.ChannelSendOutboundResult>;

// --- nexo's optional channel features (pairing, bots, credentials) --------------------------------

/**
 * Handlers for the optional channel features (wire schemas, plugin/channel-features.ts). Each
 * feature given is advertised in the `initialize` reply (`channel_features`), so the host sends its
 * methods; a feature left out is never asked for. Within a feature, a method left out answers
 * -32601, which the host reads as "this step does not apply" for `credentials.validate` (every shape
 * accepted), `credentials.persist` (no runtime state to write) and `credentials.probe` (not probed).
 */
/** The shapes of the optional channel features, for handler authors. */
export type PairingStartParams = plugin.ChannelPairingStartParams;
export type PairingStartReply = plugin.ChannelPairingStartResult;
export type PairingCancelParams = plugin.ChannelPairingCancelParams;
export type PairingUpdate = plugin.ChannelPairingUpdateParams;
export type BotsListParams = plugin.ChannelBotsListParams;
export type BotsListReply = plugin.ChannelBotsListResult;
export type BotsSendParams = plugin.ChannelBotsSendParams;
export type BotsSendReply = plugin.ChannelBotsSendResult;
export type CredentialParams = plugin.ChannelCredentialsParams;
export type CredentialValidity = plugin.ChannelCredentialsValidateResult;
export type CredentialProbe = plugin.ChannelCredentialsProbeResult;

export interface ChannelFeatureHandlers {
  /**
   * Pairing: `start` answers at once; report each state change afterwards with
   * `broker.pairingUpdate({challenge_id, state, data?})` until `linked`, `expired` or `cancelled`.
   */
  pairing?: {
    start(
      params: plugin.ChannelPairingStartParams,
      ctx: HandlerContext,
    ): OptionalReply<plugin.ChannelPairingStartResult>;
    /** Stops a challenge; also called for one already over (answer `{ok: true}` regardless). */
    cancel(params: plugin.ChannelPairingCancelParams, ctx: HandlerContext): Awaitable<void>;
  };
  bots?: {
    list(params: plugin.ChannelBotsListParams, ctx: HandlerContext): Awaitable<plugin.ChannelBotsListResult>;
    send(params: plugin.ChannelBotsSendParams, ctx: HandlerContext): Awaitable<plugin.ChannelBotsSendResult>;
  };
  /**
   * Reply streaming: called with each piece of a reply while the agent writes it
   * (`channel.reply.delta`, a notification: nothing to answer, and a throw is only logged). The
   * whole reply still comes as `channel.send_outbound`; the pieces are a preview.
   */
  replyStream?: (params: plugin.ChannelReplyDeltaParams) => void;
  /** The credential persister `credentials/register` runs. */
  credentials?: {
    validate?(
      params: plugin.ChannelCredentialsParams,
      ctx: HandlerContext,
    ): Awaitable<plugin.ChannelCredentialsValidateResult>;
    persist?(params: plugin.ChannelCredentialsParams, ctx: HandlerContext): Awaitable<void>;
    probe?(
      params: plugin.ChannelCredentialsParams,
      ctx: HandlerContext,
    ): Awaitable<plugin.ChannelCredentialsProbeResult>;
  };
}

// --- LLM providers (§5.y) ------------------------------------------------------------------------

export interface LlmChatContext extends HandlerContext {
  /** True when the host asked for a stream (`params.stream`): send deltas, then return. */
  readonly stream: boolean;
  /**
   * Sends one `llm.chat.delta` chunk (`text_delta`, `tool_call_start`, `tool_call_args_delta`,
   * `tool_call_end`, `usage`, `end`). Only for streamed requests and before the handler returns;
   * throws PluginError otherwise, WireError for a chunk the schema refuses.
   */
  sendDelta(chunk: plugin.LlmChatChunk): Promise<void>;
}

/**
 * The final `llm.chat` result. For a stream `content` may be left out: the text went out as
 * deltas, and `{type: "text", text: ""}` is sent.
 */
export interface LlmChatReply {
  content?: plugin.LlmResponseContent;
  usage: plugin.TokenUsage;
  finish_reason: plugin.LlmFinishReason;
  cache_usage?: plugin.LlmCacheUsage;
  [key: string]: unknown;
}

export type LlmChatHandler = (params: plugin.LlmChatParams, ctx: LlmChatContext) => Awaitable<LlmChatReply>;

// --- hooks (§5.z) --------------------------------------------------------------------------------

/** Returning nothing answers `{}`: continue. */
export type HookHandler = (
  params: plugin.HookOnHookParams,
  ctx: HandlerContext,
) => OptionalReply<plugin.HookResponseInput>;

// --- vector memory (§5.w) ------------------------------------------------------------------------

export interface MemoryBackendHandlers {
  vectorUpsert?(params: plugin.VectorUpsertParams, ctx: HandlerContext): Awaitable<plugin.VectorCountResult>;
  vectorSearch?(params: plugin.VectorSearchParams, ctx: HandlerContext): Awaitable<plugin.VectorSearchResult>;
  vectorDelete?(params: plugin.VectorDeleteParams, ctx: HandlerContext): Awaitable<plugin.VectorCountResult>;
}

export const DEFAULT_SHUTDOWN_DRAIN_TIMEOUT_MS = 5_000;

export interface PluginAdapterOptions {
  /** The text of `nexo-plugin.toml`; validated by the constructor (ManifestError). */
  manifestToml: string;
  /** Sent as `server_version` in the `initialize` reply. Default `<id>-<version>` (contract §4.1). */
  serverVersion?: string;
  /** Runs, detached, for every `broker.event`. */
  onEvent?: EventHandler;
  /** Awaited (within `shutdownDrainTimeoutMs`) before the `{ok: true}` shutdown reply; errors are logged. */
  onShutdown?: ShutdownHandler;
  /** The tool catalog of the `initialize` reply; every name must be in `[plugin.extends].tools`. */
  tools?: ToolDef[];
  onTool?: ToolHandler;
  /** Wins over `onTool` when both are set. */
  onToolWithContext?: ToolHandlerWithContext;
  /** Default true: `process.stdout.write` is diverted to stderr (see stdout-guard.ts). */
  enableStdoutGuard?: boolean;
  /** Inbound line cap in bytes, newline excluded. Default 1 MiB; longer lines are dropped and logged. */
  maxFrameBytes?: number;
  /** Default true: SIGTERM and SIGINT end `run()` through the same drain as stdin EOF. */
  handleProcessSignals?: boolean;

  // --- nexo additions ---

  /**
   * How long shutdown (and EOF, and a signal) waits for in-flight handlers, and then separately
   * for `onShutdown`. Work still running at the bound is abandoned and logged. Default 5000 ms.
   */
  shutdownDrainTimeoutMs?: number;
  /**
   * Outbound frame cap in bytes. Default 1 MiB, the cap the contract's peers apply to a line: a
   * longer reply would be dropped by the host and the call would only time out, so it is turned
   * into an error reply here instead.
   */
  maxOutgoingFrameBytes?: number;
  onChannelStart?: ChannelStartHandler;
  onChannelStop?: ChannelStopHandler;
  onChannelSendOutbound?: ChannelSendOutboundHandler;
  /** nexo's optional channel features; see ChannelFeatureHandlers. */
  channelFeatures?: ChannelFeatureHandlers;
  onLlmChat?: LlmChatHandler;
  onHook?: HookHandler;
  memoryBackend?: MemoryBackendHandlers;
}
