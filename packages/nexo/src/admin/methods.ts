/**
 * The table the frame serves on a microapp's pipe: every `nexo/admin/*` method and the contract's
 * own `nexo/dispatch`, each with the one capability that gates it and the domain it belongs to.
 * Both come from the wire schemas; this only joins them.
 */
import type { MethodOf, ParamsOf, ResultIn } from "@nexo/wire";
import * as admin from "@nexo/wire/schemas/admin";
import * as microapp from "@nexo/wire/schemas/microapp";

/** `nexo/dispatch` is not an admin method, but it is gated and audited the same way. */
export const DISPATCH_DOMAIN = "dispatch";
export type OutboundDomain = admin.AdminDomain | typeof DISPATCH_DOMAIN;

export const outboundMethods = {
  ...admin.adminMethods,
  "nexo/dispatch": { ...microapp.microappOutboundMethods["nexo/dispatch"], domain: DISPATCH_DOMAIN },
} as const;

export type OutboundTable = typeof outboundMethods;
export type OutboundMethodName = MethodOf<OutboundTable>;
/** What a handler of `M` receives: the params after the schema (defaults applied). */
export type OutboundParams<M extends OutboundMethodName> = ParamsOf<OutboundTable, M>;
/** What a handler of `M` returns: anything the result schema accepts. */
export type OutboundResult<M extends OutboundMethodName> = ResultIn<OutboundTable, M>;

export const OUTBOUND_METHOD_NAMES = Object.keys(outboundMethods) as OutboundMethodName[];

/** The domain of a method of the table. */
export function domainOf(method: OutboundMethodName): OutboundDomain {
  return outboundMethods[method].domain;
}
