/**
 * The admin RPC rides the microapp's stdio next to daemon-initiated calls, so request ids tell the
 * two directions apart: a microapp-initiated id starts with `app:`, a daemon-initiated id never
 * does (nexo numbers its requests 1, 2, 3, …, as the microapp contract's framing table says; the
 * admin spec's mention of "random UUIDs" contradicts it, and the contract wins).
 */
import { z } from "zod";
import { AdminCode } from "../../errors.js";
import { JsonRpcIdSchema } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";
import { NonEmptyStringSchema } from "./common.js";

export const ADMIN_ID_PREFIX = "app:";

/** Every admin method name starts with this. */
export const ADMIN_METHOD_PREFIX = "nexo/admin/";

/** True when `id` was minted by a microapp (`app:<anything non-empty>`). */
export function isAdminRequestId(id: unknown): id is `app:${string}` {
  return typeof id === "string" && id.length > ADMIN_ID_PREFIX.length && id.startsWith(ADMIN_ID_PREFIX);
}

/** An id a microapp puts on its outbound requests (`nexo/admin/*`, `nexo/dispatch`). */
export const AdminRequestIdSchema = lazySchema("admin.envelope", () =>
  z
    .string()
    .refine(isAdminRequestId, { message: `microapp-initiated ids must start with "${ADMIN_ID_PREFIX}"` }),
);
export type AdminRequestId = z.infer<typeof AdminRequestIdSchema>;

/** An id the daemon puts on its requests to a microapp: never `app:`-prefixed. */
export const DaemonRequestIdSchema = lazySchema("admin.envelope", () =>
  JsonRpcIdSchema.refine((id) => !(typeof id === "string" && id.startsWith(ADMIN_ID_PREFIX)), {
    message: `daemon-initiated ids must not start with "${ADMIN_ID_PREFIX}"`,
  }),
);
export type DaemonRequestId = z.infer<typeof DaemonRequestIdSchema>;

/** A microapp → daemon request (any outbound method). */
export const MicroappOutboundRequestSchema = lazySchema("admin.envelope", () =>
  z.looseObject({
    jsonrpc: z.literal("2.0").optional(),
    id: AdminRequestIdSchema,
    method: NonEmptyStringSchema,
    params: z.unknown().optional(),
  }),
);
export type MicroappOutboundRequest = z.infer<typeof MicroappOutboundRequestSchema>;

/** A microapp → daemon `nexo/admin/*` request. */
export const AdminRequestSchema = lazySchema("admin.envelope", () =>
  MicroappOutboundRequestSchema.extend({
    method: z
      .string()
      .refine((m) => m.startsWith(ADMIN_METHOD_PREFIX) && m.length > ADMIN_METHOD_PREFIX.length, {
        message: `admin methods start with "${ADMIN_METHOD_PREFIX}"`,
      }),
  }),
);
export type AdminRequest = z.infer<typeof AdminRequestSchema>;

/** The daemon's successful answer to an outbound request; the id echoes the microapp's. */
export const AdminSuccessResponseSchema = lazySchema("admin.envelope", () =>
  z.looseObject({
    jsonrpc: z.literal("2.0").optional(),
    id: AdminRequestIdSchema,
    result: z.unknown(),
  }),
);
export type AdminSuccessResponse = z.infer<typeof AdminSuccessResponseSchema>;

export const AdminErrorObjectSchema = lazySchema("admin.envelope", () =>
  z.looseObject({
    code: z.number().int(),
    message: z.string(),
    data: z.unknown().optional(),
  }),
);
export type AdminErrorObject = z.infer<typeof AdminErrorObjectSchema>;

export const AdminErrorResponseSchema = lazySchema("admin.envelope", () =>
  z.looseObject({
    jsonrpc: z.literal("2.0").optional(),
    id: AdminRequestIdSchema,
    error: AdminErrorObjectSchema,
  }),
);
export type AdminErrorResponse = z.infer<typeof AdminErrorResponseSchema>;

/** `error.data` of a capability denial: which grant was missing, for whom, on which call. */
export const CapabilityDeniedDataSchema = lazySchema("admin.envelope", () =>
  z.looseObject({
    capability: NonEmptyStringSchema,
    microapp_id: NonEmptyStringSchema,
    method: NonEmptyStringSchema,
  }),
);
export type CapabilityDeniedData = z.infer<typeof CapabilityDeniedDataSchema>;

/** The error object the capability gate answers with. */
export const CapabilityDeniedErrorSchema = lazySchema("admin.envelope", () =>
  z.looseObject({
    code: z.literal(AdminCode.capabilityNotGranted),
    message: z.literal("capability_not_granted"),
    data: CapabilityDeniedDataSchema,
  }),
);
export type CapabilityDeniedError = z.infer<typeof CapabilityDeniedErrorSchema>;
