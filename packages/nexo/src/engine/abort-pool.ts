/**
 * The AbortControllers turns stop with, reused while they never aborted. Every turn needs one, and
 * on Node 20 each new AbortSignal is expensive twice over: building it costs ~3 µs (an EventTarget
 * whose prototype is swapped after construction, leaving every signal with a hidden class of its
 * own), and because no two signals share a hidden class, every `signal.aborted` a provider or tool
 * reads on a fresh signal misses V8's property caches (measured: a scripted model call with 24
 * events costs 7.8 µs more on a fresh signal than on one it has seen before).
 *
 * A controller goes back only when its turn has ended, it never aborted, and its signal is exactly
 * as it was made: no `abort` listener left (a tool or provider still listening keeps it out, so a
 * later turn's stop can never reach it) and no property added (`AbortSignal.any` leaves its
 * dependants on the source signal, which must not pile up on a signal that lives on). What it
 * cannot see is code that kept the signal past its turn without listening and reads `aborted`
 * later: that code would see a later turn's stop. The engine hands a turn's signal only to that
 * turn's model calls and tool calls, which end before the turn does.
 */
import { getEventListeners } from "node:events";

/** Enough for the turns a process runs at once; beyond it controllers are simply dropped. */
const MAX_POOLED = 64;

const pool: AbortController[] = [];

/** Own property keys of a signal nobody has touched (Node's internal slots). */
const pristineKeys = Reflect.ownKeys(new AbortController().signal).length;

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
  if (Reflect.ownKeys(signal).length !== pristineKeys) return;
  if (getEventListeners(signal, "abort").length > 0) return;
  pool.push(controller);
}
