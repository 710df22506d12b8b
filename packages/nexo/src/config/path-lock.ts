/**
 * A per-path async mutex: read-modify-write cycles on one config file run one after another inside
 * this process, so two concurrent edits cannot both start from the same old text and lose one.
 * (Other processes are not covered; the daemon is the only writer of its config dir.)
 */
import { resolve } from "node:path";

const tails = new Map<string, Promise<void>>();

/** Runs `task` once every earlier task holding the same path has settled. */
export function withPathLock<T>(path: string, task: () => Promise<T>): Promise<T> {
  const key = resolve(path);
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(task);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  tails.set(key, tail);
  // Drop the entry once the queue drains, so the map does not grow with every file ever edited.
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return run;
}
