/**
 * Slash commands: `command/list` names what a client may offer in its command palette,
 * `command/execute` runs one against a thread (`/new` starts a fresh thread, `/help` explains, …).
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { SenderContextSchema } from "./common.js";
import { ThreadSchema } from "./threads.js";

export const CommandCategorySchema = lazySchema("appserver.commands", () => z.enum(["builtin", "custom"]));
export type CommandCategory = z.infer<typeof CommandCategorySchema>;

export const CommandInfoSchema = lazySchema("appserver.commands", () =>
  z.looseObject({
    /** With its leading slash, e.g. `/new`. */
    name: z.string().min(1),
    aliases: z.array(z.string()),
    description: z.string(),
    category: CommandCategorySchema,
    requiresAdmin: z.boolean(),
  }),
);
export type CommandInfo = z.infer<typeof CommandInfoSchema>;

export const CommandListParamsSchema = lazySchema("appserver.commands", () =>
  z.looseObject({
    /** `en` or `zh` in the reference; descriptions in other languages are best effort. */
    language: z.string().optional(),
    /** false hides the built-in commands. Default true. */
    includeBuiltins: z.boolean().optional(),
  }),
);
export type CommandListParams = z.infer<typeof CommandListParamsSchema>;

export const CommandListResultSchema = lazySchema("appserver.commands", () =>
  z.looseObject({ commands: z.array(CommandInfoSchema) }),
);
export type CommandListResult = z.infer<typeof CommandListResultSchema>;

export const CommandExecuteParamsSchema = lazySchema("appserver.commands", () =>
  z.looseObject({
    threadId: z.string().min(1),
    /** `/model` or `model`; arguments may also follow it after a space. */
    command: z.string().min(1),
    arguments: z.array(z.string()).optional(),
    sender: SenderContextSchema.optional(),
  }),
);
export type CommandExecuteParams = z.infer<typeof CommandExecuteParamsSchema>;

export const CommandExecuteResultSchema = lazySchema("appserver.commands", () =>
  z.looseObject({
    /** false: no such command; the text should go to the model as a normal message. */
    handled: z.boolean(),
    message: z.string().optional(),
    isMarkdown: z.boolean(),
    /** A custom command's prompt, for the client to send as the turn's input. */
    expandedPrompt: z.string().optional(),
    /** The command replaced the conversation (`/new`); `thread` is the new one. */
    sessionReset: z.boolean().optional(),
    thread: ThreadSchema.optional(),
    archivedThreadIds: z.array(z.string()).optional(),
    createdLazily: z.boolean().optional(),
  }),
);
export type CommandExecuteResult = z.infer<typeof CommandExecuteResultSchema>;
