/**
 * The contract methods upstream SDKs lack: channels (§5.x), LLM providers (§5.y, sync and
 * streamed), hooks (§5.z) and vector memory (§5.w). Each registered only when the plugin gave its
 * handler, so the peer answers the others with -32601 as the contract expects.
 */
import { plugin } from "@nexo/wire/schemas";
import { PluginError, RpcTransportError, WireError } from "./errors.js";
import type { LlmChatContext, PluginAdapterOptions } from "./options.js";
import { checkResult, type DispatchEnv, describeIssues, handlerContext, serve } from "./serve.js";
import { toStrictJson } from "./wire.js";

export function serveExtensionMethods(env: DispatchEnv, options: PluginAdapterOptions): void {
  serveChannels(env, options);
  serveLlmChat(env, options);
  serveHook(env, options);
  serveMemoryBackend(env, options);
}

function okResult(method: string, value: unknown): unknown {
  return value === undefined || value === null
    ? { ok: true }
    : checkResult(method, plugin.OkResultSchema, value);
}

function serveChannels(env: DispatchEnv, options: PluginAdapterOptions): void {
  const { onChannelStart, onChannelStop, onChannelSendOutbound } = options;
  if (onChannelStart) {
    serve(env, {
      method: "channel.start",
      params: plugin.ChannelStartParamsSchema,
      label: (p) => `channel.start ${p.kind}${p.instance ? `/${p.instance}` : ""}`,
      handle: async (p, task) =>
        okResult("channel.start", await onChannelStart(p, handlerContext(env, task))),
    });
  }
  if (onChannelStop) {
    serve(env, {
      method: "channel.stop",
      params: plugin.ChannelStopParamsSchema,
      label: (p) => `channel.stop ${p.kind}`,
      handle: async (p, task) => okResult("channel.stop", await onChannelStop(p, handlerContext(env, task))),
    });
  }
  if (onChannelSendOutbound) {
    serve(env, {
      method: "channel.send_outbound",
      params: plugin.ChannelSendOutboundParamsSchema,
      label: (p) => `channel.send_outbound ${p.kind} (${p.msg.kind})`,
      handle: async (p, task) =>
        checkResult(
          "channel.send_outbound",
          plugin.ChannelSendOutboundResultSchema,
          await onChannelSendOutbound(p, handlerContext(env, task)),
        ),
    });
  }
}

function serveLlmChat(env: DispatchEnv, options: PluginAdapterOptions): void {
  const onLlmChat = options.onLlmChat;
  if (!onLlmChat) return;
  serve(env, {
    method: "llm.chat",
    params: plugin.LlmChatParamsSchema,
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
              new WireError(`invalid llm.chat.delta chunk: ${describeIssues(check.error.issues)}`),
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
      const value =
        p.stream && reply !== null && typeof reply === "object" && reply.content === undefined
          ? { ...reply, content: { type: "text", text: "" } }
          : reply;
      return checkResult("llm.chat", plugin.LlmChatResultSchema, value);
    },
  });
}

function serveHook(env: DispatchEnv, options: PluginAdapterOptions): void {
  const onHook = options.onHook;
  if (!onHook) return;
  serve(env, {
    method: "hook.on_hook",
    params: plugin.HookOnHookParamsSchema,
    label: (p) => `hook.on_hook ${p.hook_name}`,
    handle: async (p, task) => {
      const response = await onHook(p, handlerContext(env, task));
      return response === undefined || response === null
        ? {}
        : checkResult("hook.on_hook", plugin.HookResponseSchema, response);
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
      params: plugin.VectorUpsertParamsSchema,
      label: (p) => `memory.vector_upsert ${p.backend}/${p.collection} (${p.records.length} records)`,
      handle: async (p, task) =>
        checkResult(
          "memory.vector_upsert",
          plugin.VectorUpsertResultSchema,
          await vectorUpsert.call(backend, p, handlerContext(env, task)),
        ),
    });
  }
  if (vectorSearch) {
    serve(env, {
      method: "memory.vector_search",
      params: plugin.VectorSearchParamsSchema,
      label: (p) => `memory.vector_search ${p.backend}/${p.collection}`,
      handle: async (p, task) =>
        checkResult(
          "memory.vector_search",
          plugin.VectorSearchResultSchema,
          await vectorSearch.call(backend, p, handlerContext(env, task)),
        ),
    });
  }
  if (vectorDelete) {
    serve(env, {
      method: "memory.vector_delete",
      params: plugin.VectorDeleteParamsSchema,
      label: (p) => `memory.vector_delete ${p.backend}/${p.collection} (${p.ids.length} ids)`,
      handle: async (p, task) =>
        checkResult(
          "memory.vector_delete",
          plugin.VectorDeleteResultSchema,
          await vectorDelete.call(backend, p, handlerContext(env, task)),
        ),
    });
  }
}
