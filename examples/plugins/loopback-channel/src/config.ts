/**
 * The loopback channel's settings. A plugin's configuration reaches it through its environment
 * (the manifest's `[plugin.entrypoint].env`, overridden by what the operator sets for the plugin),
 * so every knob is a variable:
 *
 *   LOOPBACK_HOST              address to listen on                     default 127.0.0.1
 *   LOOPBACK_PORT              port; 0 lets the system choose            default 0
 *   LOOPBACK_TOKEN             shared secret (Authorization: Bearer …); required, 16+ characters,
 *                              when LOOPBACK_HOST is not a loopback address
 *   LOOPBACK_OUTBOX_LIMIT      replies kept per recipient nobody fetches default 64
 *   LOOPBACK_RETRY_AFTER_SECS  retry hint sent with a full outbox        default 2
 *   LOOPBACK_MAX_WAIT_MS       longest long-poll a client may ask for    default 30000
 *   LOOPBACK_ENDPOINT_FILE     where to write the chosen URL as JSON     default
 *                              $NEXO_STATE_DIR/endpoint.json (none without a state dir)
 *   LOOPBACK_PAIRING_TTL_MS    how long a pairing QR code can be scanned default 60000
 *   LOOPBACK_BOTS              the bots offered, `jid=persona,…`; each jid ends in @bot
 *                                                                        default echo@bot=echo
 */
import { isIP } from "node:net";
import { join } from "node:path";

export interface LoopbackConfig {
  host: string;
  port: number;
  token: string | undefined;
  outboxLimit: number;
  retryAfterSecs: number;
  maxWaitMs: number;
  endpointFile: string | undefined;
  pairingTtlMs: number;
  /** The bots `channel.bots.list` offers: jid → persona id. */
  bots: ReadonlyMap<string, string>;
}

export const MIN_TOKEN_LENGTH = 16;

/** A variable with an unusable value; the message names it. */
export class LoopbackConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable} ${problem}`);
    this.name = "LoopbackConfigError";
  }
}

/** A non-loopback bind without a token: anyone on the network could talk as anyone. */
export class LoopbackTokenRequiredError extends Error {
  constructor(host: string) {
    super(
      `LOOPBACK_TOKEN (at least ${MIN_TOKEN_LENGTH} characters) is required to listen on ${host}, ` +
        "which is not a loopback address",
    );
    this.name = "LoopbackTokenRequiredError";
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new LoopbackConfigError(name, `must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** 127.0.0.0/8, ::1 and localhost: addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (bare === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return bare === "::1" || bare === "0:0:0:0:0:0:0:1";
  return false;
}

/** Reads and checks every variable; throws LoopbackConfigError or LoopbackTokenRequiredError. */
export function readLoopbackConfig(env: Env): LoopbackConfig {
  const host = (env.LOOPBACK_HOST ?? "").trim() || "127.0.0.1";
  if (host !== "localhost" && isIP(host.replace(/^\[(.*)\]$/, "$1")) === 0) {
    throw new LoopbackConfigError("LOOPBACK_HOST", `must be an IP address or localhost, got "${host}"`);
  }
  const token =
    env.LOOPBACK_TOKEN === undefined || env.LOOPBACK_TOKEN === "" ? undefined : env.LOOPBACK_TOKEN;
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH) {
    throw new LoopbackConfigError("LOOPBACK_TOKEN", `must be at least ${MIN_TOKEN_LENGTH} characters`);
  }
  if (token === undefined && !isLoopbackHost(host)) throw new LoopbackTokenRequiredError(host);
  const stateDir = env.NEXO_STATE_DIR;
  const endpointFile =
    env.LOOPBACK_ENDPOINT_FILE || (stateDir ? join(stateDir, "endpoint.json") : undefined) || undefined;
  return {
    host,
    port: integer(env, "LOOPBACK_PORT", 0, 0, 65535),
    token,
    outboxLimit: integer(env, "LOOPBACK_OUTBOX_LIMIT", 64, 1, 100_000),
    retryAfterSecs: integer(env, "LOOPBACK_RETRY_AFTER_SECS", 2, 1, 3600),
    maxWaitMs: integer(env, "LOOPBACK_MAX_WAIT_MS", 30_000, 0, 600_000),
    endpointFile,
    pairingTtlMs: integer(env, "LOOPBACK_PAIRING_TTL_MS", 60_000, 100, 3_600_000),
    bots: readBots(env.LOOPBACK_BOTS ?? "echo@bot=echo"),
  };
}

function readBots(raw: string): Map<string, string> {
  const bots = new Map<string, string>();
  for (const entry of raw.split(",").map((part) => part.trim())) {
    if (entry === "") continue;
    const [jid = "", persona = ""] = entry.split("=", 2);
    if (!/^[\w.:+-]{1,100}@bot$/.test(jid) || persona === "") {
      throw new LoopbackConfigError("LOOPBACK_BOTS", `entries are jid@bot=persona, got "${entry}"`);
    }
    bots.set(jid, persona);
  }
  return bots;
}
