/**
 * Sub-agent child threads (`subAgentSessions`): a `Spawn` sub-agent's conversation is a thread of
 * its own — a session of the store linked to the thread whose turn spawned it (threads/service.ts
 * `createChild`, asked by the engine's Spawn tool through the session's `subAgents` hook). When it
 * starts, the turn's audience gets the child's `thread/started` and every connection
 * `subagent/graphChanged {parentThreadId, childThreadId}` (server.ts).
 *
 * - `subagent/children/list {parentThreadId, includeClosed?, includeThreads?}` → `{data: [{edge,
 *   thread?}]}`, newest first; closed edges only with `includeClosed`.
 * - `subagent/close|resume {parentThreadId, childThreadId}` → `{edge}`: closing marks the edge
 *   closed (a turn running in the child is interrupted) and hides it from the list; resuming opens
 *   it again. The child thread itself stays readable and can be resumed and talked to like any
 *   thread. A child of another thread is -32602; an unknown parent -32010.
 *
 * Served by every server: child threads need only the store, not a config directory.
 */

import { subAgentSessionMethods, type ThreadSpawnEdge } from "@nexo/wire/schemas/appserver";
import { SUBAGENT_SESSION_FLAGS } from "../capability-flags.js";
import { afterReply, defineFamily } from "../family.js";
import type { SubAgentLink } from "../threads/records.js";

function edgeOf(childThreadId: string, link: SubAgentLink): ThreadSpawnEdge {
  return {
    parentThreadId: link.parentThreadId,
    childThreadId,
    parentTurnId: link.parentTurnId,
    spawnCallId: link.spawnCallId,
    depth: link.depth,
    ...(link.agentNickname === undefined ? {} : { agentNickname: link.agentNickname }),
    status: link.closed ? "closed" : "open",
  };
}

export const subAgentSessionFamily = defineFamily({
  name: "subagent-sessions",
  methods: subAgentSessionMethods,
  capabilities: () => ({ ...SUBAGENT_SESSION_FLAGS }),
  handlers: {
    "subagent/children/list": async ({ parentThreadId, includeClosed, includeThreads }, { host }) => {
      const children = await host.threads.children(parentThreadId, includeClosed ?? false);
      return {
        data: children.map(({ thread, link }) => ({
          edge: edgeOf(thread.id, link),
          ...(includeThreads ? { thread } : {}),
        })),
      };
    },
    "subagent/close": async ({ parentThreadId, childThreadId }, { host }) => {
      const link = await host.threads.setChildClosed(parentThreadId, childThreadId, true);
      afterReply(() => host.broadcast("subagent/graphChanged", { parentThreadId, childThreadId }));
      return { edge: edgeOf(childThreadId, link) };
    },
    "subagent/resume": async ({ parentThreadId, childThreadId }, { host }) => {
      const link = await host.threads.setChildClosed(parentThreadId, childThreadId, false);
      afterReply(() => host.broadcast("subagent/graphChanged", { parentThreadId, childThreadId }));
      return { edge: edgeOf(childThreadId, link) };
    },
  },
});
