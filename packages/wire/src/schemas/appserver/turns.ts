/**
 * Turns: one user input and the agent work it triggers. `turn/start` answers at once with the
 * running turn; everything after that arrives as `turn/*` and `item/*` notifications. Inputs sent
 * while a turn runs are queued (`turn/enqueue`) or steered into the running turn (`turn/steer`).
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import {
  ChatMessageSchema,
  EmptyObjectSchema,
  InputPartSchema,
  IsoTimestampSchema,
  SenderContextSchema,
  TokenUsageSchema,
} from "./common.js";
import { ItemSchema } from "./items.js";

export const TurnStatusSchema = lazySchema("appserver.turns", () =>
  z.enum(["running", "completed", "waitingApproval", "failed", "cancelled"]),
);
export type TurnStatus = z.infer<typeof TurnStatusSchema>;

/** Who started the turn, for channels where several people share a thread. */
export const TurnInitiatorSchema = lazySchema("appserver.turns", () =>
  z.looseObject({
    channelName: z.string().min(1),
    userId: z.string().optional(),
    userName: z.string().optional(),
    userRole: z.string().optional(),
    channelContext: z.string().optional(),
    groupId: z.string().optional(),
  }),
);
export type TurnInitiator = z.infer<typeof TurnInitiatorSchema>;

/**
 * Turn ids are `turn_NNN` within the thread (and are reused after `thread/rollback`). `startedAt` is
 * optional only because the spec's own `turn/start` example omits it; we always send it.
 */
export const TurnSchema = lazySchema("appserver.turns", () =>
  z.looseObject({
    id: z.string().min(1),
    threadId: z.string().min(1),
    status: TurnStatusSchema,
    startedAt: IsoTimestampSchema.optional(),
    completedAt: IsoTimestampSchema.optional(),
    tokenUsage: TokenUsageSchema.optional(),
    /** Human-readable failure text of a failed turn. */
    error: z.string().optional(),
    originChannel: z.string().optional(),
    initiator: TurnInitiatorSchema.optional(),
    /** Present in `turn/started` (the user message) and `turn/completed` (everything). */
    items: z.array(ItemSchema).optional(),
  }),
);
export type Turn = z.infer<typeof TurnSchema>;

/** `guidancePending` entries wait for the next model/tool boundary of the running turn. */
export const QueuedInputStatusSchema = lazySchema("appserver.turns", () =>
  z.enum(["queued", "guidancePending"]),
);
export type QueuedInputStatus = z.infer<typeof QueuedInputStatusSchema>;

export const QueuedTurnInputSchema = lazySchema("appserver.turns", () =>
  z.looseObject({
    id: z.string().min(1),
    threadId: z.string().min(1),
    nativeInputParts: z.array(InputPartSchema),
    materializedInputParts: z.array(InputPartSchema),
    displayText: z.string(),
    sender: SenderContextSchema.optional(),
    status: QueuedInputStatusSchema,
    createdAt: IsoTimestampSchema,
    readyAfterTurnId: z.string().optional(),
  }),
);
export type QueuedTurnInput = z.infer<typeof QueuedTurnInputSchema>;

const inputParts = lazySchema("appserver.turns", () =>
  z.array(InputPartSchema).min(1, "input needs at least one part"),
);

/**
 * `messages` carries the whole history when the thread's `historyMode` is `client` and must be
 * absent when it is `server`; which one applies is the thread's state, checked by the server.
 */
export const TurnStartParamsSchema = lazySchema("appserver.turns", () =>
  z.looseObject({
    threadId: z.string().min(1),
    input: inputParts,
    sender: SenderContextSchema.optional(),
    messages: z.array(ChatMessageSchema).optional(),
  }),
);
export type TurnStartParams = z.infer<typeof TurnStartParamsSchema>;

/** The response precedes `turn/started`; the turn is `running` with no items yet. */
export const TurnStartResultSchema = lazySchema("appserver.turns", () => z.looseObject({ turn: TurnSchema }));
export type TurnStartResult = z.infer<typeof TurnStartResultSchema>;

/** Cancellation is asynchronous: the result only acknowledges, `turn/cancelled` confirms. */
export const TurnInterruptParamsSchema = lazySchema("appserver.turns", () =>
  z.looseObject({
    threadId: z.string().min(1),
    turnId: z.string().min(1),
  }),
);
export type TurnInterruptParams = z.infer<typeof TurnInterruptParamsSchema>;
export const TurnInterruptResultSchema = EmptyObjectSchema;
export type TurnInterruptResult = z.infer<typeof TurnInterruptResultSchema>;

export const TurnEnqueueParamsSchema = lazySchema("appserver.turns", () =>
  z.looseObject({
    threadId: z.string().min(1),
    input: inputParts,
    sender: SenderContextSchema.optional(),
  }),
);
export type TurnEnqueueParams = z.infer<typeof TurnEnqueueParamsSchema>;

export const TurnEnqueueResultSchema = lazySchema("appserver.turns", () =>
  z.looseObject({
    queuedInput: QueuedTurnInputSchema,
    queuedInputs: z.array(QueuedTurnInputSchema),
  }),
);
export type TurnEnqueueResult = z.infer<typeof TurnEnqueueResultSchema>;

export const TurnQueueRemoveParamsSchema = lazySchema("appserver.turns", () =>
  z.looseObject({
    threadId: z.string().min(1),
    queuedInputId: z.string().min(1),
  }),
);
export type TurnQueueRemoveParams = z.infer<typeof TurnQueueRemoveParamsSchema>;

export const TurnQueueRemoveResultSchema = lazySchema("appserver.turns", () =>
  z.looseObject({ queuedInputs: z.array(QueuedTurnInputSchema) }),
);
export type TurnQueueRemoveResult = z.infer<typeof TurnQueueRemoveResultSchema>;

/** `expectedTurnId` guards against steering into a turn that already ended. */
export const TurnSteerParamsSchema = lazySchema("appserver.turns", () =>
  z.looseObject({
    threadId: z.string().min(1),
    expectedTurnId: z.string().min(1),
    queuedInputId: z.string().min(1),
    sender: SenderContextSchema.optional(),
  }),
);
export type TurnSteerParams = z.infer<typeof TurnSteerParamsSchema>;

export const TurnSteerResultSchema = lazySchema("appserver.turns", () =>
  z.looseObject({
    turnId: z.string().min(1),
    queuedInputs: z.array(QueuedTurnInputSchema),
  }),
);
export type TurnSteerResult = z.infer<typeof TurnSteerResultSchema>;
