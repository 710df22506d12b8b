/**
 * AppServer error shapes. Errors are plain JSON-RPC errors; `data.detail` holds the human-readable
 * specifics clients show to users. Codes in -32001..-32099 are this protocol's own and mean
 * something else on other nexo protocols, so they are kept here rather than in a shared table.
 */
import { z } from "zod";
import { JsonRpcIdSchema } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";

/**
 * Standard JSON-RPC codes plus the AppServer's own: the core's (handshake, overload, threads,
 * turns, approvals) and the management families' (-32031 onwards).
 */
export const AppServerErrorCode = {
  parseError: -32700,
  /** Also: a request after the `initialize` response but before `initialized`. */
  invalidRequest: -32600,
  /** Also: a method whose capability family is off. */
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** "Server overloaded; retry later." — back off exponentially with jitter. */
  serverOverloaded: -32001,
  notInitialized: -32002,
  alreadyInitialized: -32003,
  threadNotFound: -32010,
  threadNotActive: -32011,
  turnInProgress: -32012,
  turnNotFound: -32013,
  turnNotRunning: -32014,
  /** The approval got no answer in time; the turn fails with this code. */
  approvalTimeout: -32020,
  /** A channel adapter connection whose channel the server does not accept. */
  channelRejected: -32030,
  cronJobNotFound: -32031,
  skillNotFound: -32040,
  automationTaskNotFound: -32051,
  automationTaskInvalidStatus: -32052,
  automationTaskAlreadyExists: -32054,
  commandNotFound: -32060,
  commandPermissionDenied: -32061,
  commandServiceUnavailable: -32062,
  mcpServerNotFound: -32070,
  mcpServerValidationFailed: -32072,
  mcpServerTestFailed: -32073,
  mcpServerNameConflict: -32074,
  mcpServerReadOnly: -32075,
  externalChannelNotFound: -32080,
  externalChannelValidationFailed: -32081,
  externalChannelNameConflict: -32082,
  subAgentProfileNotFound: -32083,
  subAgentProfileValidationFailed: -32084,
  subAgentProfileProtected: -32085,
} as const;
export type AppServerErrorCodeName = keyof typeof AppServerErrorCode;
export type AppServerErrorCodeValue = (typeof AppServerErrorCode)[AppServerErrorCodeName];

export const AppServerErrorDataSchema = lazySchema("appserver.errors", () =>
  z.looseObject({ detail: z.string().optional() }),
);
export type AppServerErrorData = z.infer<typeof AppServerErrorDataSchema>;

export const AppServerErrorSchema = lazySchema("appserver.errors", () =>
  z.looseObject({
    code: z.number().int(),
    message: z.string(),
    data: AppServerErrorDataSchema.optional(),
  }),
);
export type AppServerError = z.infer<typeof AppServerErrorSchema>;

/** `id` is null only when the request could not be parsed far enough to read it (-32700). */
export const AppServerErrorResponseSchema = lazySchema("appserver.errors", () =>
  z.looseObject({
    jsonrpc: z.literal("2.0").optional(),
    id: JsonRpcIdSchema.nullable(),
    error: AppServerErrorSchema,
  }),
);
export type AppServerErrorResponse = z.infer<typeof AppServerErrorResponseSchema>;
