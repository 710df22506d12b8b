/**
 * `command/list` and `command/execute`: the slash commands a client's palette offers. nexo's are
 * built in (custom commands do not exist yet):
 *
 *   /new            archive this thread and start a fresh one for the same identity
 *   /help           list the commands
 *   /model [id]     show the thread's model, or switch it for the next request
 *   /mode [mode]    show the thread's mode, or switch it (agent | plan)
 *   /stop           interrupt the running turn
 *
 * An unknown command is not an error: `handled: false` tells the client to send the text to the
 * model as a normal message, as the reference does.
 */

import {
  appServerMethods,
  type CommandExecuteResult,
  type CommandInfo,
  ThreadModeSchema,
} from "@nexo/wire/schemas/appserver";
import { COMMAND_FLAGS } from "../capability-flags.js";
import { afterReply, type Call, defineFamily } from "../family.js";

export const BUILTIN_COMMANDS: readonly CommandInfo[] = [
  {
    name: "/new",
    aliases: [],
    description: "Archive this thread and start a new one",
    category: "builtin",
    requiresAdmin: false,
  },
  {
    name: "/help",
    aliases: ["/?"],
    description: "List the available commands",
    category: "builtin",
    requiresAdmin: false,
  },
  {
    name: "/model",
    aliases: [],
    description: "Show or switch the thread's model: /model [id]",
    category: "builtin",
    requiresAdmin: false,
  },
  {
    name: "/mode",
    aliases: [],
    description: "Show or switch the thread's mode: /mode [agent|plan]",
    category: "builtin",
    requiresAdmin: false,
  },
  {
    name: "/stop",
    aliases: [],
    description: "Interrupt the running turn",
    category: "builtin",
    requiresAdmin: false,
  },
];

/** `/model gpt-5`, `model`, `/model` + ["gpt-5"] → name and arguments. */
function parse(command: string, args: readonly string[] | undefined): { name: string; args: string[] } {
  const [head = "", ...rest] = command.trim().split(/\s+/);
  const name = `/${head.replace(/^\//, "").toLowerCase()}`;
  const found = BUILTIN_COMMANDS.find((c) => c.name === name || c.aliases.includes(name));
  return { name: found?.name ?? name, args: [...rest, ...(args ?? [])] };
}

const text = (message: string, isMarkdown = false): CommandExecuteResult => ({
  handled: true,
  message,
  isMarkdown,
});

async function execute(
  threadId: string,
  command: string,
  args: string[],
  { host }: Call,
): Promise<CommandExecuteResult> {
  const threads = host.threads;
  switch (command) {
    case "/help":
      return text(BUILTIN_COMMANDS.map((c) => `- \`${c.name}\` — ${c.description}`).join("\n"), true);
    case "/stop": {
      const live = await threads.open(threadId);
      const running = live.running;
      if (!running) return text("Nothing is running.");
      live.interrupt(running.projector.turn.id, "stopped with /stop");
      return text("Stopping the running turn.");
    }
    case "/model": {
      const live = await threads.open(threadId);
      if (args.length === 0) return text(`Model: ${live.session.config.model}`);
      await threads.configure(threadId, { model: args[0]! });
      return text(`Model switched to ${args[0]} from the next request.`);
    }
    case "/mode": {
      const thread = await threads.read(threadId, false);
      if (args.length === 0) return text(`Mode: ${thread.configuration?.mode ?? "agent"}`);
      const mode = ThreadModeSchema.safeParse(args[0]);
      if (!mode.success) return text(`Unknown mode "${args[0]}": use agent or plan.`);
      await threads.configure(threadId, { mode: mode.data });
      return text(`Mode switched to ${mode.data}.`);
    }
    case "/new": {
      const old = await threads.read(threadId, false);
      const previous = await threads.setStatus(threadId, "archived");
      const thread = await threads.create({
        identity: {
          channelName: old.originChannel,
          workspacePath: old.workspacePath,
          ...(old.userId === undefined ? {} : { userId: old.userId }),
          ...(old.channelContext === undefined ? {} : { channelContext: old.channelContext }),
        },
        ...(old.configuration ? { config: old.configuration } : {}),
      });
      afterReply(() => {
        if (previous !== "archived") {
          host.broadcast("thread/statusChanged", {
            threadId,
            previousStatus: previous,
            newStatus: "archived",
          });
        }
        host.broadcast("thread/started", { thread });
      });
      return {
        handled: true,
        message: "Started a new thread.",
        isMarkdown: false,
        sessionReset: true,
        thread,
        archivedThreadIds: [threadId],
      };
    }
    default:
      return { handled: false, isMarkdown: false };
  }
}

export const commandFamily = defineFamily({
  name: "commands",
  methods: appServerMethods,
  capabilities: () => ({ ...COMMAND_FLAGS }),
  handlers: {
    "command/list": (params) => ({ commands: params.includeBuiltins === false ? [] : [...BUILTIN_COMMANDS] }),
    "command/execute": async (params, call) => {
      await call.host.threads.record(params.threadId);
      const { name, args } = parse(params.command, params.arguments);
      return execute(params.threadId, name, args, call);
    },
  },
});
