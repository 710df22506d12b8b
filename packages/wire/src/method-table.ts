/**
 * The types that turn a protocol's method table (`pluginMethods`, `appServerMethods`,
 * `adminMethods`, … in ./schemas) into handler and call signatures, plus the schema checks the
 * dispatcher and the caller share. A method's params and result types are never written by hand:
 * they are read from the same zod schemas that check the wire.
 */
import type { z } from "zod";
import type { IssueLike } from "./issues.js";
import type { MethodSchema, NotificationSchema } from "./schemas/jsonrpc.js";

/** Request method name → `{params, result}` schemas (extra members such as `capability` allowed). */
export type RequestTable = { readonly [method: string]: MethodSchema };
/** Notification method name → `{params}` schema. */
export type NotificationTable = { readonly [method: string]: NotificationSchema };
export type NoNotifications = Record<never, NotificationSchema>;

export type MethodOf<T> = Extract<keyof T, string>;

/** What a handler receives: the params after parsing (defaults applied, unknown fields kept). */
export type ParamsOf<T extends RequestTable | NotificationTable, M extends keyof T> = z.output<
  T[M]["params"]
>;
/** What a caller passes: anything the params schema accepts. */
export type ParamsIn<T extends RequestTable | NotificationTable, M extends keyof T> = z.input<T[M]["params"]>;
/** What a handler returns: anything the result schema accepts; it is sent as returned. */
export type ResultIn<T extends RequestTable, M extends keyof T> = z.input<T[M]["result"]>;
/** What a caller receives: the result after parsing. */
export type ResultOf<T extends RequestTable, M extends keyof T> = z.output<T[M]["result"]>;

/** A value that broke its schema, for logs and counters. */
export interface SchemaFailure {
  method: string;
  /** Which part broke: a request's params, a handler's result, a reply, a notification's params. */
  part: "params" | "result" | "reply" | "notification";
  issues: readonly IssueLike[];
}

/** Removes what a registration added. Calling it twice is harmless. */
export type Disposer = () => void;

/**
 * Whether checking against `schema` can ever fail. `z.unknown()` results (a tool's result is any
 * JSON) are skipped on the hot path instead of being walked for nothing.
 */
export function acceptsAnything(schema: z.ZodType): boolean {
  const type = schema._zod.def.type;
  return type === "unknown" || type === "any";
}
