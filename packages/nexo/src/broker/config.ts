/**
 * The broker's config (the body of broker.yaml) and how it becomes a Broker. Config is closed:
 * an unknown key is a typo, and a typo in broker config must fail at boot, not be ignored.
 */
import { isAbsolute, resolve } from "node:path";
import { formatIssues } from "@nexo/wire";
import { z } from "zod";
import { disposableSchema } from "../config/disposable-schema.js";
import type { Logger } from "../log.js";
import { MAX_QUEUE_DEPTH } from "./core.js";
import { BrokerError } from "./errors.js";
import { LocalBroker } from "./local.js";
import type { Broker } from "./types.js";

const NATS_SCHEMES = new Set(["nats:", "tls:"]);

/** Why `text` is not a NATS server address, or undefined when it is one. */
function natsUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text.includes("://") ? text : `nats://${text}`);
  } catch {
    return "is not a URL";
  }
  if (!NATS_SCHEMES.has(url.protocol))
    return `has scheme "${url.protocol.slice(0, -1)}" (expected nats or tls)`;
  if (url.hostname === "") return "has no host";
  if (url.pathname !== "" && url.pathname !== "/") return "must not have a path";
  return undefined;
}

/**
 * broker.yaml's schemas, built fresh on each call (broker.yaml's file schema composes these plain
 * ones inside its own builder, daemon/config/broker.ts). The exported ones below are stand-ins that
 * build on use and let go (disposableSchema): the broker's config is parsed at start (createBroker,
 * the config loader) and when the admin services edit it, never per message, and an idle daemon
 * need not keep ~50 KB of zod objects for that.
 */
export function buildBrokerConfigSchemas() {
  const natsUrl = z.string().superRefine((text, context) => {
    const problem = natsUrlProblem(text);
    if (problem !== undefined) {
      context.addIssue({
        code: "custom",
        message: `${problem}: expected a NATS server like nats://127.0.0.1:4222`,
      });
    }
  });

  const queueDepth = z.number().int().min(1).max(MAX_QUEUE_DEPTH);

  const local = z.strictObject({
    type: z.literal("local"),
    /** Default per-subscriber queue depth. */
    queue_depth: queueDepth.optional(),
  });

  const nats = z
    .strictObject({
      type: z.literal("nats"),
      /** One server; use `servers` for a cluster. Exactly one of the two. */
      url: natsUrl.optional(),
      servers: z.array(natsUrl).min(1).optional(),
      user: z.string().min(1).optional(),
      pass: z.string().min(1).optional(),
      token: z.string().min(1).optional(),
      /** A NATS `.creds` file; relative paths are resolved against the config dir. */
      creds_file: z.string().min(1).optional(),
      /** The connection name shown by the server's monitoring. */
      name: z.string().min(1).optional(),
      queue_depth: queueDepth.optional(),
    })
    .superRefine((config, context) => {
      if ((config.url === undefined) === (config.servers === undefined)) {
        context.addIssue({
          code: "custom",
          path: config.url === undefined ? ["url"] : ["servers"],
          message: "give exactly one of url and servers",
        });
      }
      if ((config.user === undefined) !== (config.pass === undefined)) {
        context.addIssue({
          code: "custom",
          path: config.user === undefined ? ["user"] : ["pass"],
          message: "user and pass go together",
        });
      }
      const methods = [
        config.user !== undefined ? "user/pass" : undefined,
        config.token !== undefined ? "token" : undefined,
        config.creds_file !== undefined ? "creds_file" : undefined,
      ].filter((method) => method !== undefined);
      if (methods.length > 1) {
        context.addIssue({
          code: "custom",
          message: `choose one way to authenticate, not ${methods.join(" and ")}`,
        });
      }
    });

  return { local, nats, broker: z.discriminatedUnion("type", [local, nats]) };
}

export const LocalBrokerConfigSchema = disposableSchema(() => buildBrokerConfigSchemas().local);

export const NatsBrokerConfigSchema = disposableSchema(() => buildBrokerConfigSchemas().nats);

export const BrokerConfigSchema = disposableSchema(() => buildBrokerConfigSchemas().broker);
export type BrokerConfig = z.infer<typeof BrokerConfigSchema>;
export type BrokerConfigInput = z.input<typeof BrokerConfigSchema>;

export interface CreateBrokerOptions {
  logger?: Logger;
  /** Where broker.yaml lives, to resolve a relative `creds_file` (default: the working directory). */
  configDir?: string;
  /** Reconnect timing, for tests and benchmarks that restart a server. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
}

/**
 * Builds the broker the config asks for; for NATS, connects first. Throws BrokerError
 * `invalid_config` (the config breaks the schema) or `connect_failed`.
 */
export async function createBroker(
  config: BrokerConfigInput,
  options: CreateBrokerOptions = {},
): Promise<Broker> {
  const parsed = BrokerConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw new BrokerError(
      "invalid_config",
      `invalid broker config: ${formatIssues(parsed.error.issues, "broker")}`,
    );
  }
  const valid = parsed.data;
  if (valid.type === "local")
    return new LocalBroker({ queueDepth: valid.queue_depth, logger: options.logger });
  // The NATS client (and nats.ts) loads only for a NATS broker: a daemon on the local broker never
  // needs it, and it is a few MB of an idle daemon's memory. import() caches the module, so two
  // brokers created at once share one load.
  const { NatsBroker } = await import("./nats.js");
  const credsFile =
    valid.creds_file === undefined || isAbsolute(valid.creds_file)
      ? valid.creds_file
      : resolve(options.configDir ?? process.cwd(), valid.creds_file);
  return NatsBroker.connect({
    servers: valid.servers ?? [valid.url as string],
    user: valid.user,
    pass: valid.pass,
    token: valid.token,
    credsFile,
    name: valid.name,
    queueDepth: valid.queue_depth,
    logger: options.logger,
    reconnect: options.reconnect,
  });
}
