/**
 * Shapes the AppServer protocol reuses across threads, turns, items and notifications. Names are
 * camelCase exactly as on the wire; fields the reference omits when null are optional here.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

/** ISO-8601 timestamps; the reference writes .NET `DateTimeOffset` values (`+00:00`, 7 decimals). */
export const IsoTimestampSchema = lazySchema("appserver.common", () => z.iso.datetime({ offset: true }));

/** The result (or params) of methods that carry nothing: `{}`, extra members tolerated. */
export const EmptyObjectSchema = lazySchema("appserver.common", () => z.looseObject({}));
export type EmptyObject = z.infer<typeof EmptyObjectSchema>;

export const ThreadIdParamsSchema = lazySchema("appserver.common", () =>
  z.looseObject({ threadId: z.string().min(1) }),
);
export type ThreadIdParams = z.infer<typeof ThreadIdParamsSchema>;

/**
 * Who a thread belongs to: the client/channel, the user and the workspace. An empty
 * `workspacePath` means "the host's workspace".
 */
export const SessionIdentitySchema = lazySchema("appserver.common", () =>
  z.looseObject({
    channelName: z.string().min(1),
    userId: z.string().optional(),
    channelContext: z.string().optional(),
    /** Absent or empty: the server's workspace (DotCraft's SDK leaves it out when it has none). */
    workspacePath: z.string().optional(),
  }),
);
export type SessionIdentity = z.infer<typeof SessionIdentitySchema>;

/** The human behind a turn in group channels. */
export const SenderContextSchema = lazySchema("appserver.common", () =>
  z.looseObject({
    senderId: z.string().min(1),
    senderName: z.string().optional(),
    senderRole: z.string().optional(),
    groupId: z.string().optional(),
  }),
);
export type SenderContext = z.infer<typeof SenderContextSchema>;

const tokenCount = lazySchema("appserver.common", () => z.number().int().nonnegative());

export const TokenUsageSchema = lazySchema("appserver.common", () =>
  z.looseObject({
    inputTokens: tokenCount,
    outputTokens: tokenCount,
    totalTokens: tokenCount,
  }),
);
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

/** Context-window occupancy (not billing), for the client's token ring. `percentLeft` is 0..1. */
export const ContextUsageSchema = lazySchema("appserver.common", () =>
  z.looseObject({
    tokens: tokenCount,
    contextWindow: tokenCount,
    autoCompactThreshold: tokenCount,
    warningThreshold: tokenCount,
    errorThreshold: tokenCount,
    percentLeft: z.number().min(0).max(1),
  }),
);
export type ContextUsage = z.infer<typeof ContextUsageSchema>;

// --- user input -----------------------------------------------------------------------------------

export const TextInputPartSchema = lazySchema("appserver.common", () =>
  z.looseObject({ type: z.literal("text"), text: z.string() }),
);

/** A structured slash command; built-in commands (`/new`, `/stop`…) are rejected with -32602. */
export const CommandRefInputPartSchema = lazySchema("appserver.common", () =>
  z.looseObject({
    type: z.literal("commandRef"),
    name: z.string().min(1),
    argsText: z.string().optional(),
    rawText: z.string().optional(),
  }),
);

export const SkillRefInputPartSchema = lazySchema("appserver.common", () =>
  z.looseObject({
    type: z.literal("skillRef"),
    name: z.string().min(1),
  }),
);

/** `path` is workspace-relative or absolute; `displayPath` is what the UI showed. */
export const FileRefInputPartSchema = lazySchema("appserver.common", () =>
  z.looseObject({
    type: z.literal("fileRef"),
    path: z.string().min(1),
    displayPath: z.string().optional(),
  }),
);

export const ImageInputPartSchema = lazySchema("appserver.common", () =>
  z.looseObject({ type: z.literal("image"), url: z.string().min(1) }),
);

export const LocalImageInputPartSchema = lazySchema("appserver.common", () =>
  z.looseObject({
    type: z.literal("localImage"),
    path: z.string().min(1),
    mimeType: z.string().optional(),
    fileName: z.string().optional(),
  }),
);

export const InputPartSchema = lazySchema("appserver.common", () =>
  z.discriminatedUnion("type", [
    TextInputPartSchema,
    CommandRefInputPartSchema,
    SkillRefInputPartSchema,
    FileRefInputPartSchema,
    ImageInputPartSchema,
    LocalImageInputPartSchema,
  ]),
);
export type InputPart = z.infer<typeof InputPartSchema>;
export type InputPartType = InputPart["type"];

/**
 * One message of client-owned history (`historyMode: "client"`). The reference deserialises these as
 * Microsoft.Extensions.AI `ChatMessage` and never specifies them further, so only `role` is fixed
 * and the content list stays open.
 */
export const ChatMessageSchema = lazySchema("appserver.common", () =>
  z.looseObject({
    role: z.string().min(1),
    contents: z.array(z.looseObject({})).optional(),
  }),
);
export type ChatMessage = z.infer<typeof ChatMessageSchema>;
