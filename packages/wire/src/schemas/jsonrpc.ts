/**
 * The JSON-RPC 2.0 envelope shared by every nexo protocol. Unknown members pass through, as every
 * spec's compatibility rules demand; `jsonrpc` is not required on input because the reference
 * SDKs never check it (notes/plugin-wire-details.md §5.1).
 */
import { z } from "zod";

export const JsonRpcIdSchema = z.union([z.number(), z.string()]);
export type JsonRpcIdValue = z.infer<typeof JsonRpcIdSchema>;

export const RpcErrorObjectSchema = z.looseObject({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
export type RpcErrorObjectShape = z.infer<typeof RpcErrorObjectSchema>;

export const JsonRpcRequestSchema = z.looseObject({
  jsonrpc: z.literal("2.0").optional(),
  id: z.union([JsonRpcIdSchema, z.null()]),
  method: z.string(),
  params: z.unknown().optional(),
});
export type JsonRpcRequest = z.infer<typeof JsonRpcRequestSchema>;

export const JsonRpcNotificationSchema = z.looseObject({
  jsonrpc: z.literal("2.0").optional(),
  method: z.string(),
  params: z.unknown().optional(),
});
export type JsonRpcNotification = z.infer<typeof JsonRpcNotificationSchema>;

export const JsonRpcSuccessSchema = z.looseObject({
  jsonrpc: z.literal("2.0").optional(),
  id: z.union([JsonRpcIdSchema, z.null()]),
  result: z.unknown(),
});
export type JsonRpcSuccess = z.infer<typeof JsonRpcSuccessSchema>;

export const JsonRpcErrorResponseSchema = z.looseObject({
  jsonrpc: z.literal("2.0").optional(),
  id: z.union([JsonRpcIdSchema, z.null()]),
  error: RpcErrorObjectSchema,
});
export type JsonRpcErrorResponse = z.infer<typeof JsonRpcErrorResponseSchema>;

/**
 * A method's wire contract: the schema of its params and of its result (or, for notifications,
 * only the params). Each protocol module exports a table of these keyed by method name, so hosts,
 * SDKs and tests validate against the same declaration.
 */
export interface MethodSchema<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  params: P;
  result: R;
  /**
   * A hand-written check for the common shape of the params, for methods on a hot path: true only
   * when the params schema accepts the value and its parsing would give an equal value, so the
   * dispatcher may pass the value on unparsed. False means "let the schema decide" (and word the
   * error), never that the value is refused. It judges values decoded from JSON, as the peer hands
   * them over (no symbol keys, no accessors). A property test pins each one against its schema.
   */
  quickParams?: (value: unknown) => boolean;
  /**
   * The same for the result, for a caller that checks each reply on a hot path: true only when
   * the result schema accepts the value and parses it to an equal value. A property test pins it.
   */
  quickResult?: (value: unknown) => boolean;
}
export interface NotificationSchema<P extends z.ZodType = z.ZodType> {
  params: P;
}

/** Declares a request method's schemas (keeps the literal types for inference). */
export function method<P extends z.ZodType, R extends z.ZodType>(
  params: P,
  result: R,
  quickParams?: (value: unknown) => boolean,
  quickResult?: (value: unknown) => boolean,
): MethodSchema<P, R> {
  const entry: MethodSchema<P, R> = { params, result };
  if (quickParams !== undefined) entry.quickParams = quickParams;
  if (quickResult !== undefined) entry.quickResult = quickResult;
  return entry;
}

/** Declares a notification's schema. */
export function notification<P extends z.ZodType>(params: P): NotificationSchema<P> {
  return { params };
}
