/**
 * What an admin domain is: one file under ./domains that turns the daemon's services into handlers
 * for its methods of the table (./methods.ts). The frame does everything around a handler — the
 * `app:` id rule, the kill switch, the capability gate, the params check, the audit row — so a
 * handler is only the translation onto a real subsystem.
 *
 *   export const memoryDomain = defineAdminDomain({
 *     domain: "memory",
 *     handlers: ({ memory }) =>
 *       memory && {
 *         "nexo/admin/memory/query": (params, call) => ({ entries: … }),
 *       },
 *   });
 *
 * A handler throws the wire's typed errors (InvalidParamsError -32602, InternalError -32603, …)
 * and they reach the microapp as they are.
 */

import type { SupervisorLogger } from "../extensions/supervisor.js";
import type { OutboundDomain, OutboundMethodName, OutboundParams, OutboundResult } from "./methods.js";
import type { AdminServices } from "./services.js";

/** Who is calling, for a handler: the microapp, its tenant scope, its grants. */
export interface AdminCall {
  /** The calling microapp's id (its extensions.yaml key). */
  readonly microappId: string;
  /** `params.tenant_id` when the call carried one as a string. */
  readonly tenantId: string | undefined;
  /** What the operator granted this microapp. */
  readonly granted: ReadonlySet<string>;
  readonly method: OutboundMethodName;
  /** Aborted when the microapp's connection closes while the handler runs. */
  readonly signal: AbortSignal;
}

export type AdminHandler<M extends OutboundMethodName> = (
  params: OutboundParams<M>,
  call: AdminCall,
) => OutboundResult<M> | Promise<OutboundResult<M>>;

export type AdminHandlers = { readonly [M in OutboundMethodName]?: AdminHandler<M> };

/** What a domain gets beside the services when its handlers are built. */
export interface AdminDomainContext {
  /** The daemon's logger. */
  readonly logger: SupervisorLogger;
  /**
   * Registers what the domain holds beyond one call (timers, listeners on a plugin), released
   * when the frame closes — the daemon stops — so nothing outlives it.
   */
  onClose(release: () => void): void;
}

export interface AdminDomainModule {
  /** The table's domain of every method the handlers serve. */
  readonly domain: OutboundDomain;
  /**
   * The handlers, built once from the services; `undefined` (or a missing method) when a service
   * the domain needs is not there: those methods then answer -32601.
   */
  handlers(services: AdminServices, context: AdminDomainContext): AdminHandlers | undefined;
}

/** Types a domain module (an identity function: the checking is the point). */
export function defineAdminDomain(module: AdminDomainModule): AdminDomainModule {
  return module;
}
