/**
 * Serving nexo's optional channel features (pairing, bots, the credential persister, reply
 * streaming): which ones the `initialize` reply advertises, and their methods, each registered
 * only when the plugin gave its handler (the peer answers the others -32601).
 */
import { plugin } from "@nexo/wire/schemas";
import { logWarning } from "./log.js";
import type { ChannelFeatureHandlers } from "./options.js";
import { type DispatchEnv, handlerContext, serve } from "./serve.js";

/** The `channel_features` of the `initialize` reply: the features given handlers for. */
export function advertisedChannelFeatures(
  handlers: ChannelFeatureHandlers | undefined,
): plugin.ChannelFeature[] {
  if (handlers === undefined) return [];
  const features: plugin.ChannelFeature[] = [];
  if (handlers.pairing) features.push("pairing");
  if (handlers.bots) features.push("bots");
  if (handlers.credentials) features.push("credentials");
  if (handlers.replyStream) features.push("reply_stream");
  return features;
}

export function serveChannelFeatures(env: DispatchEnv, handlers: ChannelFeatureHandlers | undefined): void {
  const { pairing, bots, credentials, replyStream } = handlers ?? {};
  const ctx = handlerContext;
  if (replyStream) {
    env.peer.onNotification("channel.reply.delta", (raw) => {
      const parsed = plugin.ChannelReplyDeltaParamsSchema.safeParse(raw);
      if (!parsed.success) {
        logWarning("channel.reply.delta dropped: params break the schema", { issue: parsed.error.message });
        return;
      }
      try {
        replyStream(parsed.data);
      } catch (error) {
        logWarning("the replyStream handler failed", { error: (error as Error).message });
      }
    });
  }
  if (pairing) {
    serve(env, {
      method: "channel.pairing.start",
      label: (p) => `channel.pairing.start ${p.kind} ${p.challenge_id}`,
      handle: async (p, task) => (await pairing.start(p, ctx(env, task))) ?? {},
    });
    serve(env, {
      method: "channel.pairing.cancel",
      label: (p) => `channel.pairing.cancel ${p.kind} ${p.challenge_id}`,
      handle: async (p, task) => {
        await pairing.cancel(p, ctx(env, task));
        return { ok: true };
      },
    });
  }
  if (bots) {
    serve(env, {
      method: "channel.bots.list",
      label: (p) => `channel.bots.list ${p.kind} ${p.agent_id}`,
      handle: (p, task) => bots.list(p, ctx(env, task)),
    });
    serve(env, {
      method: "channel.bots.send",
      label: (p) => `channel.bots.send ${p.kind} ${p.bot_jid}`,
      handle: (p, task) => bots.send(p, ctx(env, task)),
    });
  }
  const { validate, persist, probe } = credentials ?? {};
  if (validate) {
    serve(env, {
      method: "channel.credentials.validate",
      label: (p) => `channel.credentials.validate ${p.kind}`,
      handle: (p, task) => validate.call(credentials, p, ctx(env, task)),
    });
  }
  if (persist) {
    serve(env, {
      method: "channel.credentials.persist",
      label: (p) => `channel.credentials.persist ${p.kind}`,
      handle: async (p, task) => {
        await persist.call(credentials, p, ctx(env, task));
        return { ok: true };
      },
    });
  }
  if (probe) {
    serve(env, {
      method: "channel.credentials.probe",
      label: (p) => `channel.credentials.probe ${p.kind}`,
      handle: (p, task) => probe.call(credentials, p, ctx(env, task)),
    });
  }
}
