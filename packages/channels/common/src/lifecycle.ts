/**
 * The life of a channel inside its plugin process, the parts every channel shares: one connection
 * at a time (an instance is a label that picks registered credentials, so a second one while the
 * first runs is refused), start/stop/rotate applied one after another, and the settings read from
 * the plugin's environment — a bad one is reported by `channel.start` as a connection error naming
 * the variable, while until then the defaults serve (the outbox and the state directory must exist
 * before any start).
 */
import { ChannelConnectionError, ChannelUnsupportedError } from "nexo-plugin-sdk";
import { ChannelConfigError } from "./allowlist.js";
import type { ChannelEnv } from "./env.js";

/** Runs steps one after another; a failed step does not stop the ones queued behind it. */
export class SerialSteps {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(step: () => Promise<T>): Promise<T> {
    const result = this.tail.then(step, step);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** "the default instance" or "instance NAME", as every channel's messages say it. */
export function instanceLabel(instance: string | null): string {
  return instance === null ? "the default instance" : `instance ${instance}`;
}

/**
 * Whether `instance` is the one already running (start is then a no-op answered with its info).
 * Another instance while one runs is refused: `serves` says what one plugin process serves, e.g.
 * "the Telegram channel serves one bot".
 */
export function isRunningInstance<R extends { readonly instance: string | null }>(
  running: R | undefined,
  instance: string | null,
  serves: string,
): running is R {
  if (running === undefined) return false;
  if (running.instance === instance) return true;
  throw new ChannelUnsupportedError(
    `${instanceLabel(running.instance)} is running; ${serves} per plugin process (stop it first)`,
    { feature: "multiple instances" },
  );
}

/** The settings for a start: a bad one becomes the contract's connection error naming the variable. */
export function settingsForStart<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ChannelConfigError) {
      throw new ChannelConnectionError(`invalid configuration: ${error.message}`, {
        variable: error.variable,
      });
    }
    throw error;
  }
}

/** The settings, or the defaults (with the same state directory) while a bad one waits for `start`. */
export function settingsOrDefaults<T>(read: (env: ChannelEnv) => T, env: ChannelEnv): T {
  try {
    return read(env);
  } catch {
    return read({ NEXO_STATE_DIR: env.NEXO_STATE_DIR });
  }
}
