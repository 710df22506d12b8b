/** Bounded polling for tests that watch another process or the file system. */
import { setTimeout as sleep } from "node:timers/promises";

/** Polls `probe` every 50 ms until it returns a value; fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
