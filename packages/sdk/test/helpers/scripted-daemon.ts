/**
 * Plays the daemon's side of the microapp contract for SDK tests, over a real child process
 * (ScriptedHost): integer ids on its own requests, the admin RPC served from the wire's method
 * table behind a capability gate that answers -32004 with `{capability, microapp_id, method}`,
 * and every admin call the microapp makes recorded with its id. The admin handlers are the
 * test's: only the methods a test serves answer (after the gate), the others get -32601.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CapabilityNotGrantedError,
  Dispatcher,
  type JsonRpcId,
  MethodNotFoundError,
  type MethodOf,
  type ParamsOf,
  type ResultIn,
} from "@nexo/wire";
import { admin, microapp } from "@nexo/wire/schemas";
import { ScriptedHost, type StartOptions } from "./scripted-host.js";

/** What the scripted daemon's tools/call carries, as an agent's call over WhatsApp would. */
export const BINDING = {
  agent_id: "ana",
  channel: "whatsapp",
  account_id: "acme",
  binding_id: "whatsapp:acme",
  binding_index: 0,
};
export const INBOUND = {
  kind: "whatsapp_message",
  from: "+573000000000",
  ts_ms: 1_735_689_600_000,
  session_id: "s-1",
};

const outbound = { ...admin.adminMethods, ...microapp.microappOutboundMethods };
type Outbound = typeof outbound;

export interface OutboundCall {
  id: JsonRpcId | null;
  method: string;
  params: unknown;
  /** "denied" when the gate refused it. */
  outcome: "served" | "denied";
}

export interface ScriptedDaemonOptions extends StartOptions {
  /** The child's fixture file (default: the probe microapp). */
  fixture?: string;
  /** The extension id sent in initialize (default "probe"). */
  extensionId?: string;
  /** The capabilities granted (default none). */
  grants?: readonly string[];
}

export class ScriptedDaemon {
  readonly host: ScriptedHost;
  readonly extensionId: string;
  readonly stateDir: string;
  /** Every request the microapp sent, in arrival order. */
  readonly calls: OutboundCall[] = [];
  private readonly grants: Set<string>;
  private readonly handlers = new Map<string, (params: never) => unknown>();

  constructor(options: ScriptedDaemonOptions = {}) {
    this.host = new ScriptedHost(options.fixture ?? "probe-microapp.ts", {
      errorProtocol: "microapp",
      ...options,
    });
    this.extensionId = options.extensionId ?? "probe";
    this.stateDir = join(
      tmpdir(),
      `nexo-microapp-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    );
    this.grants = new Set(options.grants ?? []);
    // Every method of the table passes the gate; past it, one the test did not serve is unknown.
    const dispatcher = new Dispatcher(
      this.host.peer,
      { requests: outbound },
      {
        guard: (method, entry, ctx) => {
          const call: OutboundCall = { id: ctx.id, method, params: undefined, outcome: "served" };
          this.calls.push(call);
          if (!this.grants.has(entry.capability)) {
            call.outcome = "denied";
            throw new CapabilityNotGrantedError(entry.capability, method, this.extensionId);
          }
        },
      },
    );
    for (const method of Object.keys(outbound) as Array<MethodOf<Outbound>>) {
      dispatcher.handle(method, (params, ctx) => {
        const call = this.calls.findLast((c) => c.id === ctx.id);
        if (call) call.params = params;
        const handler = this.handlers.get(method);
        if (handler === undefined) throw MethodNotFoundError.forMethod(method);
        return handler(params as never) as never;
      });
    }
  }

  /** Serves `method` with `handler` (its params recorded on the call). */
  serve<M extends MethodOf<Outbound>>(
    method: M,
    handler: (params: ParamsOf<Outbound, M>) => ResultIn<Outbound, M> | Promise<ResultIn<Outbound, M>>,
  ): this {
    this.handlers.set(method, handler as (params: never) => unknown);
    return this;
  }

  grant(capability: string): void {
    this.grants.add(capability);
  }

  initialize(params: Record<string, unknown> = {}): Promise<unknown> {
    return this.host.peer.request("initialize", {
      extension_id: this.extensionId,
      state_dir: this.stateDir,
      config: { greeting: "hola" },
      ...params,
    });
  }

  /** A tools/call as the daemon sends it for an agent's tool call. */
  callTool(
    tool: string,
    args: Record<string, unknown> = {},
    extra: Record<string, unknown> = {},
  ): Promise<unknown> {
    return this.host.peer.request("tools/call", {
      tool,
      args,
      binding_context: BINDING,
      inbound: INBOUND,
      ...extra,
    });
  }

  hook(name: string, params: unknown): Promise<unknown> {
    return this.host.peer.request(`hooks/${name}`, params);
  }

  notify(method: string, params: unknown): Promise<void> {
    return this.host.peer.notify(method, params);
  }

  shutdown(): Promise<unknown> {
    return this.host.peer.request("shutdown", {});
  }

  dispose(): Promise<void> {
    return this.host.dispose();
  }
}
