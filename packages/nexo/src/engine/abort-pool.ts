/**
 * The AbortControllers turns stop with, reused while they never aborted. Every turn needs one, and
 * on Node 20 each new AbortSignal is expensive twice over: building it costs ~3 µs (an EventTarget
 * whose prototype is swapped after construction, leaving every signal with a hidden class of its
 * own), and because no two signals share a hidden class, every `signal.aborted` a provider or tool
 * reads on a fresh signal misses V8's property caches (measured: a scripted model call with 24
 * events costs 7.8 µs more on a fresh signal than on one it has seen before).
 *
 * A controller goes back only when its turn has ended, it never aborted, and its signal is as it
 * was made: no `abort` listener left (a tool or provider still listening keeps it out, so a later
 * turn's stop can never reach it), no named property added, and no dependants recorded by
 * `AbortSignal.any` (which keeps them on the source signal: they must not pile up on a signal that
 * lives on). What it cannot see is code that kept the signal past its turn without listening and
 * reads `aborted` later (that code would see a later turn's stop), or that stored a symbol-keyed
 * property of its own on it. The engine hands a turn's signal only to that turn's model calls and
 * tool calls, which end before the turn does.
 *
 * Symbol-keyed properties are not listed for the check: a signal keeps its state in half a dozen
 * symbol slots in dictionary mode, and `Reflect.ownKeys` on it costs ~1.5 µs, more than the rest of
 * a turn's bookkeeping here; the one symbol Node itself adds (AbortSignal.any's dependants) is
 * looked up directly.
 */
import { getEventListeners } from "node:events";

/** Enough for the turns a process runs at once; beyond it controllers are simply dropped. */
const MAX_POOLED = 64;

const pool: AbortController[] = [];

/** Own string-keyed properties of a signal nobody has touched (none on Node 20). */
const pristineNames = Object.getOwnPropertyNames(new AbortController().signal).length;

/**
 * The symbol under which `AbortSignal.any` records a source signal's dependants, found by watching
 * what it adds to a probe; undefined if this Node records them some other way (then every signal
 * is checked by listing its symbol keys).
 */
const dependantsKey: symbol | undefined = (() => {
  const probe = new AbortController().signal;
  const before = new Set(Object.getOwnPropertySymbols(probe));
  AbortSignal.any([probe]);
  const added = Object.getOwnPropertySymbols(probe).filter((key) => !before.has(key));
  return added.length === 1 ? added[0] : undefined;
})();

/** Own symbol-keyed properties of a signal nobody has touched, for the fallback check. */
const pristineSymbols = Object.getOwnPropertySymbols(new AbortController().signal).length;

/** A controller whose signal has not aborted and that no running turn uses. */
export function takeController(): AbortController {
  return pool.pop() ?? new AbortController();
}

/**
 * Hands back the controller of a turn that has ended and is no longer reachable by anything that
 * could stop it (the session has forgotten the turn). Kept only when it is as good as new.
 */
export function releaseController(controller: AbortController): void {
  const { signal } = controller;
  if (pool.length >= MAX_POOLED || signal.aborted) return;
  if (Object.getOwnPropertyNames(signal).length !== pristineNames) return;
  if (dependantsKey !== undefined) {
    if ((signal as unknown as Record<symbol, unknown>)[dependantsKey] !== undefined) return;
  } else if (Object.getOwnPropertySymbols(signal).length !== pristineSymbols) return;
  if (getEventListeners(signal, "abort").length > 0) return;
  pool.push(controller);
}
