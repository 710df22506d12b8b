/**
 * The admin RPC frame: what answers a microapp's own requests on its pipe. `serve(identity, peer)`
 * puts a Dispatcher over the table (./methods.ts: every `nexo/admin/*` method and `nexo/dispatch`)
 * on the microapp's peer, with
 *
 * - the gate (./gate.ts) as the Dispatcher's guard: the `app:` id rule, the kill switches and the
 *   capability check run before the params are even read;
 * - the audit around every request (the Dispatcher's `around`): one row whatever the outcome —
 *   ok, error (including -32602 invalid params and -32601 for a domain that is off or absent),
 *   denied (-32004) — and unknown methods too, through the peer's fallback;
 * - a bound on the admin calls one microapp may have running (beyond it: -32012 overloaded);
 * - the handlers of the domains (./domains), each a thin translation onto a real subsystem; a
 *   method of the table no domain serves answers -32601.
 *
 * A notification from a microapp is never executed: the contract defines none, so it is dropped
 * and counted as a protocol problem.
 */
import {
  AdminCode,
  CapabilityNotGrantedError,
  Dispatcher,
  isThenable,
  type JsonRpcPeer,
  MethodNotFoundError,
  monotonicMs,
  type RequestContext,
  RpcError,
} from "@nexo/wire";
import * as admin from "@nexo/wire/schemas/admin";
import type { MicroappIdentity } from "../extensions/microapps/manager.js";
import type { SupervisorLogger } from "../extensions/supervisor.js";
import { type AuditOutcome, argsHash, tenantOf, UNKNOWN_METHOD_CAPABILITY } from "./audit.js";
import type { AdminCall, AdminDomainModule } from "./domain.js";
import { ADMIN_DOMAIN_MODULES } from "./domains/index.js";
import { CapabilityGate, disabledDomains, notAnAppId } from "./gate.js";
import { domainOf, OUTBOUND_METHOD_NAMES, type OutboundMethodName, outboundMethods } from "./methods.js";
import type { AdminServices } from "./services.js";

type Env = Readonly<Record<string, string | undefined>>;
type AnyHandler = (params: unknown, call: AdminCall) => unknown;

/** Admin calls one microapp may have running at once; beyond: -32012, retry later. */
export const DEFAULT_MAX_CONCURRENT_ADMIN_CALLS = 16;

/** A method name longer than this is cut in the audit row (an unknown method is the caller's text). */
const MAX_AUDITED_METHOD_LENGTH = 200;

export interface AdminFrameOptions {
  services: AdminServices;
  /** Default: every domain nexo has (./domains/index.ts). */
  domains?: readonly AdminDomainModule[];
  /** Where the kill switches are read. Default `process.env`. */
  env?: Env;
  maxConcurrentCalls?: number;
  logger?: SupervisorLogger;
}

const noopLogger: SupervisorLogger = { debug() {}, info() {}, warn() {}, error() {} };

export class AdminFrame {
  private readonly services: AdminServices;
  private readonly gate: CapabilityGate;
  private readonly handlers = new Map<OutboundMethodName, AnyHandler>();
  private readonly maxConcurrent: number;
  private readonly logger: SupervisorLogger;
  /** What the domains hold beyond one call, released by `close`. */
  private readonly releases: Array<() => void> = [];

  /** Throws AdminEnvError for a kill switch that is neither 0 nor 1. */
  constructor(options: AdminFrameOptions) {
    this.services = options.services;
    this.gate = new CapabilityGate(disabledDomains(options.env ?? process.env));
    this.maxConcurrent = options.maxConcurrentCalls ?? DEFAULT_MAX_CONCURRENT_ADMIN_CALLS;
    this.logger = options.logger ?? noopLogger;
    const context = { logger: this.logger, onClose: (release: () => void) => this.releases.push(release) };
    for (const module of options.domains ?? ADMIN_DOMAIN_MODULES) {
      for (const [method, handler] of Object.entries(module.handlers(this.services, context) ?? {})) {
        const name = method as OutboundMethodName;
        if (handler === undefined) continue;
        if (domainOf(name) !== module.domain)
          throw new TypeError(
            `the ${module.domain} domain cannot serve ${name} (a ${domainOf(name)} method)`,
          );
        if (this.handlers.has(name)) throw new TypeError(`${name} is served by two domains`);
        this.handlers.set(name, handler as AnyHandler);
      }
    }
  }

  /**
   * Releases what the domains hold (pairing challenges and their timers, …); the daemon calls it
   * when it stops, after its microapps. A release that throws is logged; the others still run.
   */
  close(): void {
    for (const release of this.releases.splice(0).reverse()) {
      try {
        release();
      } catch (error) {
        this.logger.error({ err: (error as Error).message }, "an admin domain did not close cleanly");
      }
    }
  }

  /** The methods some domain serves on this daemon. */
  served(): OutboundMethodName[] {
    return [...this.handlers.keys()];
  }

  /** Serves `identity`'s requests on `peer` (one of its incarnations). */
  serve(identity: MicroappIdentity, peer: JsonRpcPeer): void {
    let running = 0;
    const audited = (method: string, capability: string, params: unknown, serve: () => unknown): unknown => {
      if (running >= this.maxConcurrent) {
        const error = new RpcError(
          AdminCode.overloaded,
          `overloaded: microapp ${identity.id} already has ${running} admin calls running; retry later`,
          { limit: this.maxConcurrent },
        );
        this.record(identity, method, capability, params, Date.now(), monotonicMs(), failureOf(error));
        throw error;
      }
      running += 1;
      const done = () => {
        running -= 1;
      };
      return this.audit(identity, method, capability, params, serve, done);
    };
    const dispatcher = new Dispatcher(
      peer,
      { requests: outboundMethods },
      {
        guard: (method, _entry, ctx) => this.gate.check(identity, method, ctx.id),
        around: (call, serve) => audited(call.method, call.entry.capability, call.params, serve),
      },
    );
    for (const method of OUTBOUND_METHOD_NAMES) {
      const handler = this.handlers.get(method) ?? notServed(method);
      const serveMethod = (params: unknown, ctx: RequestContext) =>
        handler(params, callOf(identity, method, params, ctx));
      dispatcher.handle(method, serveMethod as never);
    }
    peer.setFallbackRequestHandler((method, params, ctx) =>
      audited(method, UNKNOWN_METHOD_CAPABILITY, params, () => {
        if (!admin.isAdminRequestId(ctx.id)) throw notAnAppId(ctx.id);
        throw MethodNotFoundError.forMethod(method);
      }),
    );
    peer.setFallbackNotificationHandler((_params, method) =>
      peer.reportProblem(
        {
          kind: "invalid_request",
          detail: `notification ${method.slice(0, 100)}: a microapp sends no notifications`,
        },
        "notification from a microapp ignored",
      ),
    );
  }

  /** Runs `serve`, then writes the row for its outcome (sync or async); passes the outcome on. */
  private audit(
    identity: MicroappIdentity,
    method: string,
    capability: string,
    params: unknown,
    serve: () => unknown,
    done: () => void,
  ): unknown {
    const startedAt = this.now();
    const started = monotonicMs();
    const finish = (outcome: AuditOutcome) => {
      done();
      this.record(identity, method, capability, params, startedAt, started, outcome);
    };
    let out: unknown;
    try {
      out = serve();
    } catch (error) {
      finish(failureOf(error));
      throw error;
    }
    if (!isThenable(out)) {
      finish(OK);
      return out;
    }
    return out.then(
      (value) => {
        finish(OK);
        return value;
      },
      (error: unknown) => {
        finish(failureOf(error));
        throw error;
      },
    );
  }

  private record(
    identity: MicroappIdentity,
    method: string,
    capability: string,
    params: unknown,
    startedAt: number,
    started: number,
    outcome: AuditOutcome,
  ): void {
    try {
      const tenant = tenantOf(params);
      this.services.audit.append({
        microapp_id: identity.id,
        method: method.slice(0, MAX_AUDITED_METHOD_LENGTH),
        capability,
        args_hash: argsHash(method, params),
        started_at_ms: startedAt,
        ...outcome,
        duration_ms: Math.max(0, Math.round(monotonicMs() - started)),
        tenant_id: tenant ?? null,
      });
    } catch (error) {
      // The call's answer stands; a log that cannot be written is the operator's alarm.
      this.logger.error(
        {
          microapp: identity.id,
          method: method.slice(0, MAX_AUDITED_METHOD_LENGTH),
          err: (error as Error).message,
        },
        "admin audit row could not be written",
      );
    }
  }

  private now(): number {
    return (this.services.now ?? Date.now)();
  }
}

const OK: AuditOutcome = { result: "ok", error_code: null };

/** A refusal by the gate is `denied`; every other failure is `error`, with its code. */
function failureOf(error: unknown): AuditOutcome {
  const code = error instanceof RpcError ? error.code : -32603;
  return { result: error instanceof CapabilityNotGrantedError ? "denied" : "error", error_code: code };
}

function callOf(
  identity: MicroappIdentity,
  method: OutboundMethodName,
  params: unknown,
  ctx: RequestContext,
): AdminCall {
  return {
    microappId: identity.id,
    tenantId: tenantOf(params),
    granted: identity.granted,
    method,
    get signal() {
      return ctx.signal;
    },
  };
}

/** The handler of a method of the table that no domain serves on this daemon. */
function notServed(method: OutboundMethodName): AnyHandler {
  return () => {
    throw new MethodNotFoundError(
      `method not found: ${method} (the ${domainOf(method)} domain is not available on this daemon)`,
    );
  };
}
