/**
 * `thread/*`: threads are nexo sessions (threads/service.ts). Side notifications follow the
 * response: `thread/started`, `thread/statusChanged` and `thread/renamed` reach every connection
 * once (the caller included); `thread/deleted` every connection but the caller, whose response is
 * the signal; `thread/resumed` the caller and the thread's subscribers.
 */

import { appServerMethods, type ThreadStatus } from "@nexo/wire/schemas/appserver";
import { THREAD_FLAGS } from "../capability-flags.js";
import type { AppServerConnection } from "../connection.js";
import { appServerErrors } from "../errors.js";
import { afterReply, defineFamily } from "../family.js";
import type { AppServerHost } from "../host.js";

async function changeStatus(
  host: AppServerHost,
  threadId: string,
  status: ThreadStatus,
  options: { withChildren?: boolean } = {},
): Promise<Record<string, never>> {
  // Archiving and unarchiving carry the thread's sub-agent child threads along, as DotCraft does.
  const threads = [threadId, ...(options.withChildren ? await host.threads.descendants(threadId) : [])];
  for (const id of threads) {
    const previous = await host.threads.setStatus(id, status);
    if (previous !== status) {
      afterReply(() =>
        host.broadcast("thread/statusChanged", { threadId: id, previousStatus: previous, newStatus: status }),
      );
    }
  }
  return {};
}

function subscribersAnd(
  host: AppServerHost,
  threadId: string,
  caller: AppServerConnection,
): AppServerConnection[] {
  return [...host.connections].filter((c) => c === caller || host.threads.isSubscribed(threadId, c));
}

export const threadFamily = defineFamily({
  name: "threads",
  methods: appServerMethods,
  capabilities: () => ({ ...THREAD_FLAGS }),
  handlers: {
    "thread/start": async (params, { host }) => {
      if (params.historyMode === "client") {
        throw appServerErrors.invalidParams(
          "historyMode 'client' is not supported: nexo keeps each thread's history itself (use 'server')",
        );
      }
      const thread = await host.threads.create({
        identity: params.identity,
        ...(params.config ? { config: params.config } : {}),
        ...(params.displayName ? { displayName: params.displayName } : {}),
      });
      afterReply(() => host.broadcast("thread/started", { thread }));
      return { thread };
    },
    "thread/resume": async (params, { host, connection }) => {
      const record = await host.threads.read(params.threadId, false);
      if (record.status === "archived") throw appServerErrors.threadNotActive(params.threadId, "archived");
      await host.threads.open(params.threadId);
      if (record.status === "paused") await changeStatus(host, params.threadId, "active");
      const thread = await host.threads.read(params.threadId, true);
      const resumedBy = connection.clientInfo?.name ?? "unknown";
      afterReply(() => {
        for (const c of subscribersAnd(host, params.threadId, connection)) {
          c.notify("thread/resumed", { thread, resumedBy });
        }
      });
      return { thread };
    },
    "thread/list": async (params, { host }) => ({
      data: await host.threads.list({
        identity: params.identity,
        ...(params.includeArchived === undefined ? {} : { includeArchived: params.includeArchived }),
        ...(params.includeSubAgents === undefined ? {} : { includeSubAgents: params.includeSubAgents }),
        ...(params.crossChannelOrigins ? { crossChannelOrigins: params.crossChannelOrigins } : {}),
        ...(params.channelName === undefined ? {} : { channelName: params.channelName }),
      }),
    }),
    "thread/read": async (params, { host, connection }) => {
      const thread = await host.threads.read(params.threadId, params.includeTurns ?? false);
      if (thread.turns) {
        thread.turns = thread.turns.map((turn) => ({
          ...turn,
          items: connection.filter.items(turn.items ?? []),
        }));
      }
      return { thread };
    },
    "thread/rollback": async (params, { host }) => ({
      thread: await host.threads.rollback(params.threadId, params.numTurns),
    }),
    "thread/subscribe": async (params, { host, connection }) => {
      await host.threads.subscribe(params.threadId, connection);
      if (params.replayRecent) {
        const running = (await host.threads.read(params.threadId, true)).turns?.find(
          (t) => t.status === "running" || t.status === "waitingApproval",
        );
        if (running)
          afterReply(() =>
            connection.notify("turn/started", {
              turn: { ...running, items: connection.filter.items(running.items ?? []) },
            }),
          );
      }
      return {};
    },
    "thread/unsubscribe": async (params, { host, connection }) => {
      await host.threads.record(params.threadId);
      host.threads.unsubscribe(params.threadId, connection);
      return {};
    },
    "thread/pause": (params, { host }) => changeStatus(host, params.threadId, "paused"),
    "thread/archive": (params, { host }) =>
      changeStatus(host, params.threadId, "archived", { withChildren: true }),
    "thread/unarchive": (params, { host }) =>
      changeStatus(host, params.threadId, "active", { withChildren: true }),
    "thread/delete": async (params, { host, connection }) => {
      // A thread's sub-agent child threads go with it (deepest first).
      const children = await host.threads.descendants(params.threadId);
      const deleted = [...children.reverse(), params.threadId];
      for (const threadId of deleted) await host.threads.delete(threadId);
      afterReply(() => {
        for (const threadId of deleted)
          host.broadcast("thread/deleted", { threadId }, { except: connection });
      });
      return {};
    },
    "thread/rename": async (params, { host }) => {
      await host.threads.rename(params.threadId, params.displayName);
      afterReply(() =>
        host.broadcast("thread/renamed", { threadId: params.threadId, displayName: params.displayName }),
      );
      return {};
    },
    "thread/mode/set": async (params, { host }) => {
      await host.threads.configure(params.threadId, { mode: params.mode });
      return {};
    },
    "thread/config/update": async (params, { host }) => {
      await host.threads.configure(params.threadId, params.config);
      return {};
    },
  },
});
