/**
 * A method family: a group of AppServer methods served together behind the capability flags they
 * make true (threads → `threadManagement`, …). Adding one is one file exporting
 * `defineFamily({...})` plus one line in families/index.ts. A family serves methods of any wire
 * table — the core's `appServerMethods` or its own — so params and results stay typed from the one
 * declaration of each shape in `@nexo/wire/schemas`.
 *
 * A family whose capability is off is simply not served: its methods then answer -32601, exactly
 * as the protocol says a disabled family must. A family that depends on what this server runs on
 * (the management families need the daemon's services) says so with `available`; when it is not
 * available its methods are not registered and its flags are not advertised.
 */
import {
  Dispatcher,
  type MethodOf,
  type ParamsOf,
  type RequestContext,
  type RequestTable,
  type ResultIn,
} from "@nexo/wire";
import type { ServerCapabilities } from "@nexo/wire/schemas/appserver";
import type { AppServerConnection } from "./connection.js";
import type { AppServerHost } from "./host.js";

/** What a handler gets besides its params. */
export interface Call {
  /** The connection the request came in on. */
  readonly connection: AppServerConnection;
  readonly host: AppServerHost;
  readonly request: RequestContext;
}

export type FamilyHandler<T extends RequestTable, M extends MethodOf<T>> = (
  params: ParamsOf<T, M>,
  call: Call,
) => ResultIn<T, M> | Promise<ResultIn<T, M>>;

export type FamilyHandlers<T extends RequestTable> = { [M in MethodOf<T>]?: FamilyHandler<T, M> };

export interface MethodFamily<T extends RequestTable = RequestTable> {
  /** For logs. */
  readonly name: string;
  /** The wire table the handlers' methods come from. */
  readonly methods: T;
  /** Whether this server can serve the family at all. Default: always. */
  available?(host: AppServerHost): boolean;
  /** The server capability flags this family makes true. Only flags for what works. */
  capabilities(host: AppServerHost): Partial<ServerCapabilities>;
  handlers: FamilyHandlers<T>;
}

/** Declares a family with its types inferred from its table. */
export function defineFamily<T extends RequestTable>(family: MethodFamily<T>): MethodFamily<T> {
  return family;
}

/** Registers `family`'s handlers on one connection, under the connection's dispatch rules. */
export function serveFamily(
  family: MethodFamily,
  connection: AppServerConnection,
  host: AppServerHost,
): void {
  if (!isAvailable(family, host)) return;
  const dispatcher = new Dispatcher(
    connection.peer,
    { requests: family.methods },
    connection.dispatchOptions(),
  );
  for (const [method, handler] of Object.entries(family.handlers)) {
    if (handler === undefined) continue;
    const serve = handler as (params: unknown, call: Call) => unknown;
    dispatcher.handle(method, (params, request) => serve(params, { connection, host, request }) as never);
  }
}

/** The flags of every family, merged. */
export function familyCapabilities(
  families: readonly MethodFamily[],
  host: AppServerHost,
): ServerCapabilities {
  const merged: ServerCapabilities = {};
  for (const family of families) {
    if (isAvailable(family, host)) Object.assign(merged, family.capabilities(host));
  }
  return merged;
}

function isAvailable(family: MethodFamily, host: AppServerHost): boolean {
  return family.available?.(host) ?? true;
}

/**
 * Runs `fn` once the current request's reply is on the wire. The peer writes a handler's reply when
 * its promise settles (a microtask); an immediate runs after every microtask, so what `fn` sends
 * follows the reply — the order the protocol promises (`turn/start` before `turn/started`, a
 * thread's response before `thread/started`).
 */
export function afterReply(fn: () => void): void {
  setImmediate(fn);
}
