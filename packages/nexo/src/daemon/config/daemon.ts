/**
 * `daemon.yaml` (optional): the daemon process itself — where its state lives, the health and
 * metrics HTTP listener, and how long shutdown waits for in-flight turns.
 *
 * The listener exposes /metrics and /readyz, which say a lot about a deployment, so it binds to
 * loopback by default and any other address is refused without a bearer token.
 */
import { BlockList, isIP } from "node:net";
import { resolve } from "node:path";
import { z } from "zod";
import { disposableSchema } from "../../config/disposable-schema.js";
import type { Env } from "../../config/index.js";
import { defaultStateDir } from "../../paths.js";

export const DEFAULT_HTTP_BIND = "127.0.0.1:7780";
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
const MAX_SHUTDOWN_GRACE_MS = 10 * 60_000;
/** Shorter tokens can be guessed; 16 random characters is the least worth calling a secret. */
export const MIN_HTTP_TOKEN_LENGTH = 16;

export interface HostPort {
  host: string;
  port: number;
}

/** `host:port` or `[v6]:port`, or the reason `text` is neither. */
export function parseBind(text: string): { ok: true; value: HostPort } | { ok: false; problem: string } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  if (match === null)
    return { ok: false, problem: `expected host:port (e.g. ${DEFAULT_HTTP_BIND} or [::1]:7780)` };
  const host = match[1] ?? match[2] ?? "";
  const port = Number(match[3]);
  if (match[1] !== undefined && isIP(host) !== 6)
    return { ok: false, problem: `"${host}" is not an IPv6 address` };
  if (match[2] !== undefined && isIP(host) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(host))
    return { ok: false, problem: `"${host}" is neither an IP address nor a host name` };
  if (port > 65_535)
    return { ok: false, problem: `port ${port} is out of range (0-65535; 0 picks a free port)` };
  return { ok: true, value: { host, port } };
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Whether only this machine can reach `host`. A name other than localhost may resolve anywhere. */
export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === "localhost") return true;
  const family = isIP(host);
  // BlockList also counts IPv4-mapped IPv6 (::ffff:127.0.0.1) and spelled-out ::1 forms.
  return family !== 0 && LOOPBACK.check(host, family === 4 ? "ipv4" : "ipv6");
}

export const DEFAULT_AGENT_EVENT_RETENTION_DAYS = 30;

/**
 * daemon.yaml's schemas, built on use and freed once no parse holds them (config/disposable-schema.ts):
 * the file is parsed at start, on reload and by the admin services' edits, never at idle.
 */
function buildSchemas() {
  const BindSchema = z.string().transform((text, ctx) => {
    const parsed = parseBind(text);
    if (parsed.ok) return { bind: text, ...parsed.value };
    ctx.addIssue({ code: "custom", message: parsed.problem });
    return z.NEVER;
  });

  const HttpSchema = z
    .strictObject({
      enabled: z.boolean().default(true),
      bind: BindSchema.prefault(DEFAULT_HTTP_BIND),
      /** When set, every request must carry `Authorization: Bearer <token>`. */
      token: z
        .string()
        .min(MIN_HTTP_TOKEN_LENGTH, { error: `must be at least ${MIN_HTTP_TOKEN_LENGTH} characters` })
        .optional(),
    })
    .superRefine((http, ctx) => {
      if (http.enabled && http.token === undefined && !isLoopbackHost(http.bind.host)) {
        ctx.addIssue({
          code: "custom",
          path: ["token"],
          message: `binding to ${http.bind.bind} (not loopback) requires a token, e.g. token: \${NEXO_HTTP_TOKEN}`,
        });
      }
    })
    .transform(({ bind, ...rest }) => ({ ...rest, bind: bind.bind, host: bind.host, port: bind.port }));

  /** How long agent events are kept by default: the 30 days agent_events/list looks back. */

  const DaemonFileSchema = z.strictObject({
    /** The store, plugin state and default workspaces; relative to the config dir. */
    state_dir: z.string().min(1).optional(),
    http: HttpSchema.prefault({}),
    /** How long shutdown lets in-flight turns finish before cancelling them. */
    shutdown_grace_ms: z.int().min(0).max(MAX_SHUTDOWN_GRACE_MS).default(DEFAULT_SHUTDOWN_GRACE_MS),
    /** The agent event log (what microapps read back with agent_events/*). */
    agent_events: z
      .strictObject({
        /** Events older than this many days are deleted, at start and hourly. */
        retention_days: z.int().min(1).max(36_500).default(DEFAULT_AGENT_EVENT_RETENTION_DAYS),
      })
      .prefault({}),
  });

  return { HttpSchema, DaemonFileSchema };
}
export const HttpSchema = disposableSchema(() => buildSchemas().HttpSchema);
export const DaemonFileSchema = disposableSchema(() => buildSchemas().DaemonFileSchema);

export type DaemonFile = z.output<typeof DaemonFileSchema>;

/** daemon.yaml after the loader resolved it: `state_dir` is absolute and always set. */
export type DaemonSettings = Omit<DaemonFile, "state_dir"> & { state_dir: string };

export function resolveDaemonSettings(file: DaemonFile, configDir: string, env: Env): DaemonSettings {
  const stateDir = file.state_dir === undefined ? defaultStateDir(env) : resolve(configDir, file.state_dir);
  return { ...file, state_dir: stateDir };
}
