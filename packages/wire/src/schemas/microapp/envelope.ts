/**
 * Frames on a microapp's stdio, as seen from each side. Both directions share one pipe, so the id
 * tells requests apart: the daemon's ids are integers, the microapp's start with
 * `app:` — a response is matched to the side whose id it echoes.
 */
import { z } from "zod";
import { AdminRequestIdSchema, DaemonRequestIdSchema } from "../admin/envelope.js";
import { RpcErrorObjectSchema } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";

/** Daemon → microapp request. */
export const MicroappDaemonRequestSchema = lazySchema("microapp.envelope", () =>
  z.looseObject({
    jsonrpc: z.literal("2.0").optional(),
    id: DaemonRequestIdSchema,
    method: z.string().min(1),
    params: z.unknown().optional(),
  }),
);
export type MicroappDaemonRequest = z.infer<typeof MicroappDaemonRequestSchema>;

/** Microapp → daemon answer to a daemon request: `result` or `error`, echoing the id. */
export const MicroappResponseSchema = lazySchema("microapp.envelope", () =>
  z.union([
    z.looseObject({ jsonrpc: z.literal("2.0").optional(), id: DaemonRequestIdSchema, result: z.unknown() }),
    z.looseObject({
      jsonrpc: z.literal("2.0").optional(),
      id: DaemonRequestIdSchema,
      error: RpcErrorObjectSchema,
    }),
  ]),
);
export type MicroappResponse = z.infer<typeof MicroappResponseSchema>;

/**
 * Daemon → microapp answer to a microapp request. The request itself is
 * MicroappOutboundRequestSchema (../admin/envelope.ts), shared with the admin RPC.
 */
export const MicroappRequestResponseSchema = lazySchema("microapp.envelope", () =>
  z.union([
    z.looseObject({ jsonrpc: z.literal("2.0").optional(), id: AdminRequestIdSchema, result: z.unknown() }),
    z.looseObject({
      jsonrpc: z.literal("2.0").optional(),
      id: AdminRequestIdSchema,
      error: RpcErrorObjectSchema,
    }),
  ]),
);
export type MicroappRequestResponse = z.infer<typeof MicroappRequestResponseSchema>;

/** A notification in either direction: no id, never answered. */
export const MicroappNotificationFrameSchema = lazySchema("microapp.envelope", () =>
  z
    .looseObject({
      jsonrpc: z.literal("2.0").optional(),
      method: z.string().min(1),
      params: z.unknown().optional(),
    })
    .refine((frame) => !Object.hasOwn(frame, "id"), { message: "a notification has no id", path: ["id"] }),
);
export type MicroappNotificationFrame = z.infer<typeof MicroappNotificationFrameSchema>;
