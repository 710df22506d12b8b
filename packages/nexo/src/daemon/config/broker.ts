/**
 * `broker.yaml`: which broker the daemon uses, under a `broker:` key as in the reference daemon
 * (its operators' files keep their shape, and the file has room for siblings later). The body is
 * the broker module's own `BrokerConfigSchema`; without the file, or without the key, the broker
 * is the in-process one.
 */
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { type BrokerConfig, buildBrokerConfigSchemas } from "../../broker/config.js";
import { disposableSchema } from "../../config/disposable-schema.js";

export const DEFAULT_BROKER_CONFIG: BrokerConfig = { type: "local" };

/** Keys of the broker section itself: written at the top level they mean the wrapper was left out. */
const BROKER_KEYS = new Set([
  "type",
  "url",
  "servers",
  "user",
  "pass",
  "token",
  "creds_file",
  "name",
  "queue_depth",
]);

/**
 * Closed like every file, but a missing `broker:` wrapper gets its own explanation. Built on use
 * and let go, like the other config files' schemas (config/disposable-schema.ts).
 */
export const BrokerFileSchema = disposableSchema(() =>
  z
    .looseObject({ broker: buildBrokerConfigSchemas().broker.default(DEFAULT_BROKER_CONFIG) })
    .superRefine((file, ctx) => {
      for (const key of Object.keys(file)) {
        if (key === "broker") continue;
        const hint = BROKER_KEYS.has(key)
          ? ` (broker settings go under a "broker:" key: broker: { ${key}: ... })`
          : "";
        ctx.addIssue({ code: "custom", path: [key], message: `unknown key "${key}"${hint}` });
      }
    })
    .transform((file) => ({ broker: file.broker })),
);
export type BrokerFile = z.output<typeof BrokerFileSchema>;

/** Makes a NATS `creds_file` absolute against the config dir, so the broker never guesses the cwd. */
export function resolveBrokerPaths(config: BrokerConfig, configDir: string): BrokerConfig {
  if (config.type !== "nats" || config.creds_file === undefined || isAbsolute(config.creds_file))
    return config;
  return { ...config, creds_file: resolve(configDir, config.creds_file) };
}
