/**
 * `turn/*`: a turn runs on the thread's live agent (threads/live-thread.ts). `turn/start` answers
 * with the running turn at once; its events follow the response. A turn can be interrupted; inputs
 * sent while one runs are queued, steered in as guidance, or removed from the queue.
 */

import type { InputPart } from "@nexo/wire/schemas/appserver";
import { appServerMethods } from "@nexo/wire/schemas/appserver";
import { TURN_FLAGS } from "../capability-flags.js";
import { appServerErrors } from "../errors.js";
import { afterReply, defineFamily } from "../family.js";
import type { AppServerHost } from "../host.js";
import { BUILTIN_COMMANDS } from "./commands.js";

/** The thread must exist and be active to take input. */
async function activeThread(host: AppServerHost, threadId: string) {
  const thread = await host.threads.read(threadId, false);
  if (thread.status !== "active") throw appServerErrors.threadNotActive(threadId, thread.status);
  return host.threads.open(threadId);
}

/** Built-in commands are run with command/execute, never sent to the model as input. */
function refuseBuiltinCommands(input: readonly InputPart[]): void {
  for (const part of input) {
    if (part.type !== "commandRef") continue;
    const name = `/${part.name.replace(/^\//, "")}`;
    if (BUILTIN_COMMANDS.some((command) => command.name === name)) {
      throw appServerErrors.invalidParams(`${name} is a built-in command: run it with command/execute`);
    }
  }
}

export const turnFamily = defineFamily({
  name: "turns",
  methods: appServerMethods,
  capabilities: () => ({ ...TURN_FLAGS }),
  handlers: {
    "turn/start": async (params, { host, connection }) => {
      if (params.messages !== undefined) {
        throw appServerErrors.invalidParams(
          "messages is only for threads with historyMode 'client'; this thread's history is kept by the server",
        );
      }
      refuseBuiltinCommands(params.input);
      const live = await activeThread(host, params.threadId);
      const { turn, release } = await live.start(params.input, {
        starter: connection,
        ...(params.sender ? { sender: params.sender } : {}),
      });
      afterReply(release);
      return { turn };
    },
    "turn/interrupt": async (params, { host }) => {
      await host.threads.record(params.threadId);
      const live = await host.threads.open(params.threadId);
      live.interrupt(params.turnId);
      return {};
    },
    "turn/enqueue": async (params, { host }) => {
      refuseBuiltinCommands(params.input);
      const live = await activeThread(host, params.threadId);
      const queuedInput = live.enqueue(params.input, params.sender);
      return { queuedInput, queuedInputs: live.queuedInputs };
    },
    "turn/queue/remove": async (params, { host }) => {
      const live = await host.threads.open(params.threadId);
      if (!live.removeQueued(params.queuedInputId)) {
        throw appServerErrors.invalidParams(
          `thread '${params.threadId}' has no queued input '${params.queuedInputId}'`,
        );
      }
      return { queuedInputs: live.queuedInputs };
    },
    "turn/steer": async (params, { host }) => {
      const live = await host.threads.open(params.threadId);
      if (!live.steer(params.expectedTurnId, params.queuedInputId)) {
        throw appServerErrors.invalidParams(
          `thread '${params.threadId}' has no queued input '${params.queuedInputId}'`,
        );
      }
      return { turnId: params.expectedTurnId, queuedInputs: live.queuedInputs };
    },
  },
});
