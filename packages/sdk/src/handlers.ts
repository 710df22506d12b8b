/**
 * The contract methods upstream SDKs lack: channels (§5.x) with nexo's optional channel features
 * (./channel-features.ts), LLM providers (§5.y, sync and streamed), hooks (§5.z) and vector
 * memory (§5.w). Each registered only when the plugin gave its
 * handler, so the peer answers the others with -32601 as the contract expects.
 */
import { formatIssues, type ResultIn } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import { serveChannelFeatures } from "./channel-features.js";
import { PluginError, RpcTransportError, WireError } from "./errors.js";
import type { LlmChatContext, PluginAdapterOptions } from "./options.js";
import { type DispatchEnv, handlerContext, serve } from "./serve.js";
import { toStrictJson } from "./wire.js";

export function serveExtensionMethods(env: DispatchEnv, options: PluginAdapterOptions): void {
  serveChannels(env, options);
  serveChannelFeatures(env, options.channelFeatures);
  serveLlmChat(env, options);
  serveHook(env, options);
  serveMemoryBackend(env, options);
}

/** A channel handler that returns nothing answers `{ok: true}`; anything else is checked as returned. */
// biome-ignore lint/suspicious/noConfusingVoidType: `void` is what a channel handler without a return statement gives
function okResult(value: plugin.OkResult | undefined | null | void): plugin.OkResult {
  return value === undefined || value === null ? { ok: true } : value;
}

function serveChannels(env: DispatchEnv, options: PluginAdapterOptions): void {
  const { onChannelStart, onChannelStop, onChannelSendOutbound } = options;
  if (onChannelStart) {
    serve(env, {
      method: "channel.start",
      label: (p) => `channel.start ${p.kind}${p.instance ? `/${p.instance}` : ""}`,
      handle: async (p, task) => okResult(await onChannelStart(p, handlerContext(env, task))),
    });
  }
  if (onChannelStop) {
    serve(env, {
      method: "channel.stop",
      label: (p) => `channel.stop ${p.kind}`,
      handle: async (p, task) => okResult(await onChannelStop(p, handlerContext(env, task))),
    });
  }
  if (onChannelSendOutbound) {
    serve(env, {
      method: "channel.send_outbound",
      label: (p) => `channel.send_outbound ${p.kind} (${p.msg.kind})`,
      handle: (p, task) => onChannelSendOutbound(p, handlerContext(env, task)),
    });
  }
}

function serveLlmChat(env: DispatchEnv, options: PluginAdapterOptions): void {
  const onLlmChat = options.onLlmChat;
  if (!onLlmChat) return;
  serve(env, {
    method: "llm.chat",
    label: (p) => `llm.chat ${p.provider}/${p.model}${p.stream ? " (stream)" : ""}`,
    handle: async (p, task, rpc) => {
      let returned = false;
      const base = handlerContext(env, task);
      const ctx: LlmChatContext = {
        broker: base.broker,
        pluginId: base.pluginId,
        get signal() {
          return base.signal;
        },
        stream: p.stream,
        // Not `async`: the frame must be handed to the writer before this returns, so that deltas
        // a handler forgets to await still precede the final reply.
        sendDelta(chunk) {
          if (!p.stream) {
            return Promise.reject(
              new PluginError("sendDelta() is only for streamed llm.chat requests (params.stream = true)"),
            );
          }
          if (returned) {
            return Promise.reject(
              new PluginError(
                "sendDelta() after the llm.chat handler returned: the host has the final reply",
              ),
            );
          }
          const check = plugin.LlmChatChunkSchema.safeParse(chunk);
          if (!check.success) {
            return Promise.reject(
              new WireError(`invalid llm.chat.delta chunk: ${formatIssues(check.error.issues, "(chunk)")}`),
            );
          }
          try {
            toStrictJson(chunk, "chunk");
          } catch (error) {
            return Promise.reject(error);
          }
          return rpc.sendDelta("llm.chat.delta", { chunk }).catch((error: Error) => {
            throw new RpcTransportError(`cannot send llm.chat.delta: ${error.message}`, { cause: error });
          });
        },
      };
      let reply: Awaited<ReturnType<typeof onLlmChat>>;
      try {
        reply = await onLlmChat(p, ctx);
      } finally {
        returned = true;
      }
      // Checked against the contract by the dispatcher; a stream's text already went out as deltas.
      return (
        p.stream && reply !== null && typeof reply === "object" && reply.content === undefined
          ? { ...reply, content: { type: "text", text: "" } }
          : reply
      ) as ResultIn<typeof plugin.pluginMethods, "llm.chat">;
    },
  });
}

function serveHook(env: DispatchEnv, options: PluginAdapterOptions): void {
  const onHook = options.onHook;
  if (!onHook) return;
  serve(env, {
    method: "hook.on_hook",
    label: (p) => `hook.on_hook ${p.hook_name}`,
    handle: async (p, task) => {
      const response = await onHook(p, handlerContext(env, task));
      return response === undefined || response === null ? {} : response;
    },
  });
}

function serveMemoryBackend(env: DispatchEnv, options: PluginAdapterOptions): void {
  const backend = options.memoryBackend;
  if (!backend) return;
  const { vectorUpsert, vectorSearch, vectorDelete } = backend;
  if (vectorUpsert) {
    serve(env, {
      method: "memory.vector_upsert",
      label: (p) => `memory.vector_upsert ${p.backend}/${p.collection} (${p.records.length} records)`,
      handle: (p, task) => vectorUpsert.call(backend, p, handlerContext(env, task)),
    });
  }
  if (vectorSearch) {
    serve(env, {
      method: "memory.vector_search",
      label: (p) => `memory.vector_search ${p.backend}/${p.collection}`,
      handle: (p, task) => vectorSearch.call(backend, p, handlerContext(env, task)),
    });
  }
  if (vectorDelete) {
    serve(env, {
      method: "memory.vector_delete",
      label: (p) => `memory.vector_delete ${p.backend}/${p.collection} (${p.ids.length} ids)`,
      handle: (p, task) => vectorDelete.call(backend, p, handlerContext(env, task)),
    });
  }
}
