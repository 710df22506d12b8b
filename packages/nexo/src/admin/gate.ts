/**
 * The one choke point every microapp request passes before anything runs, in this order:
 *
 * 1. the id rule: a request a microapp makes carries an `app:` id (the contract's framing); any
 *    other id is answered -32600 and nothing is executed — such a frame could be a reply gone
 *    astray or a spoof of the daemon's own numbering;
 * 2. the kill switches: `NEXO_MICROAPP_ADMIN_<DOMAIN>_ENABLED=0` switches a whole domain off for
 *    every microapp, answered -32601 as if the method did not exist, even when granted;
 * 3. the capability: the method's one capability must be in the microapp's grant, else -32004
 *    `capability_not_granted` with `data {capability, microapp_id, method}`.
 */
import {
  CapabilityNotGrantedError,
  InvalidRequestError,
  type JsonRpcId,
  MethodNotFoundError,
} from "@nexo/wire";
import * as admin from "@nexo/wire/schemas/admin";
import type { MicroappIdentity } from "../extensions/microapps/manager.js";
import { domainOf, type OutboundDomain, type OutboundMethodName, outboundMethods } from "./methods.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The operator's global switches, by domain (default on). */
export const KILL_SWITCHES: Readonly<Partial<Record<OutboundDomain, string>>> = {
  agents: "NEXO_MICROAPP_ADMIN_AGENTS_ENABLED",
  credentials: "NEXO_MICROAPP_ADMIN_CREDENTIALS_ENABLED",
  pairing: "NEXO_MICROAPP_ADMIN_PAIRING_ENABLED",
  llm_providers: "NEXO_MICROAPP_ADMIN_LLM_KEYS_ENABLED",
  channels: "NEXO_MICROAPP_ADMIN_CHANNELS_ENABLED",
};

/** A kill switch holds something other than 0 or 1. */
export class AdminEnvError extends Error {
  readonly code = "admin_env_invalid" as const;
  readonly variable: string;
  constructor(variable: string, value: string) {
    super(`${variable}=${JSON.stringify(value)} must be 0 (domain off) or 1 (on, the default)`);
    this.name = "AdminEnvError";
    this.variable = variable;
  }
}

/** The domains switched off in `env`. Throws AdminEnvError for a value that is neither 0 nor 1. */
export function disabledDomains(env: Env): ReadonlySet<OutboundDomain> {
  const off = new Set<OutboundDomain>();
  for (const [domain, variable] of Object.entries(KILL_SWITCHES) as Array<[OutboundDomain, string]>) {
    const value = env[variable];
    if (value === undefined || value === "" || value === "1") continue;
    if (value !== "0") throw new AdminEnvError(variable, value);
    off.add(domain);
  }
  return off;
}

export class CapabilityGate {
  constructor(private readonly disabled: ReadonlySet<OutboundDomain>) {}

  /** Throws the refusal (an RpcError) for this request, or returns when it may run. */
  check(identity: MicroappIdentity, method: OutboundMethodName, id: JsonRpcId | null): void {
    if (!admin.isAdminRequestId(id)) throw notAnAppId(id);
    const domain = domainOf(method);
    if (this.disabled.has(domain)) {
      throw new MethodNotFoundError(
        `method not found: ${method} (the ${domain} domain is switched off on this daemon: ${KILL_SWITCHES[domain]}=0)`,
      );
    }
    const capability = outboundMethods[method].capability;
    if (!identity.granted.has(capability))
      throw new CapabilityNotGrantedError(capability, method, identity.id);
  }
}

/** The answer to a request whose id is not `app:<…>`. */
export function notAnAppId(id: JsonRpcId | null): InvalidRequestError {
  return new InvalidRequestError(
    `requests from a microapp must carry an id starting with "${admin.ADMIN_ID_PREFIX}" (got ${JSON.stringify(id)}); not executed`,
  );
}
