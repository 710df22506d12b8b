/**
 * Reading a channel's settings from its plugin environment: every channel takes integers in a
 * range and one-of-a-list words the same way, and refuses a bad value with ChannelConfigError
 * naming the variable.
 */
import { ChannelConfigError } from "./allowlist.js";

export type ChannelEnv = Readonly<Record<string, string | undefined>>;

/** `env[name]` as an integer from `min` to `max`; `fallback` when unset or blank. */
export function envInteger(
  env: ChannelEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ChannelConfigError(name, `must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** `env[name]` (any case) as one of `values`; `fallback` when unset or blank. */
export function envOneOf<T extends string>(
  env: ChannelEnv,
  name: string,
  values: readonly T[],
  fallback: T,
): T {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ChannelConfigError(name, `must be one of ${values.join(", ")}, got "${raw}"`);
  }
  return raw as T;
}
