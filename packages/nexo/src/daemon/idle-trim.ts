/**
 * Gives memory back once the daemon goes idle. A busy period (start-up, a burst of turns, an admin
 * call that built a lot) leaves V8's heap larger than what lives in it: a young generation whose
 * pages were all touched, old-space pages half empty after the objects on them died, baseline code
 * that will not run again. V8 gives that back by itself only through its memory reducer, which
 * looks at the heap 8 s after the last full collection and, when little is being allocated by
 * then, runs a memory-reducing collection (compacting, shrinking the young generation, flushing
 * old code). The idle quickstart daemon went from 68.4 to 65.0 MB that way, 8-10 s after ready
 * (docs/performance.md, "The daemon"). This runs the same kind of collection as soon as the daemon
 * has been quiet for about a second, once per idle period.
 *
 * Quiet means: no turn running or waiting in the router, and the process's CPU time less than a
 * small share of the last window. CPU time covers every other kind of work (admin RPC, plugin and
 * MCP calls, HTTP, reloads, and what they hand to libuv's and V8's threads) without each part
 * reporting to this one. (The event loop's utilization, which this read before, is only offered by
 * node:perf_hooks, which the daemon otherwise no longer loads: docs/performance.md, "Ninth pass
 * (b)".) A trim runs only
 * when V8's heap has grown by a megabyte or more since the last one gave memory back: that makes it
 * once per idle period that follows real work, and never a loop with V8's own memory reducer, whose
 * collections (event-loop time, but no growth) follow each trim 8 s later. The check is a timer
 * that does not keep the process alive.
 *
 * Node 20 offers no supported call for a memory-reducing collection: `gc()` (through
 * `--expose-gc`) is an ordinary full collection, which leaves the young generation's pages
 * resident and gave nothing back here; `v8.queryObjects` runs one but walks the whole heap after
 * it (~300 ms of CPU) and prints an experimental warning. An in-process inspector session's
 * `HeapProfiler.collectGarbage` runs the collection V8 uses under memory pressure (~50-65 ms of
 * CPU for the quickstart daemon's 14 MB heap); it opens no port, and the session is closed again
 * right after. The session is the inspector's native connection itself, not `node:inspector`'s
 * Session around it: Node 20's `lib/inspector.js` requires `worker_threads` at load, and the two
 * with four internals of the workers (six built-ins the daemon does not otherwise load) stayed in
 * every idle daemon after its first trim for this one call (docs/performance.md, "Ninth pass (b)").
 */
import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8";
import type { Logger } from "../log.js";

/** How long the daemon must be quiet before a trim, and how often it looks. */
const QUIET_MS = 1000;
/**
 * A window in which the process used more CPU than this share of it was busy. The check itself and
 * an idle daemon's timers take well under 1 %; one message through a plugin channel takes more.
 */
const BUSY_SHARE = 0.02;
/** Heap growth (resident bytes) since the last trim that makes another one worth its ~50 ms. */
const GROWTH_BYTES = 1_000_000;

/** `NEXO_IDLE_TRIM=off` (or 0, false, no) turns the trim off; anything else leaves it on. */
export function idleTrimEnabled(env: NodeJS.ProcessEnv): boolean {
  const value = env.NEXO_IDLE_TRIM?.trim().toLowerCase();
  return !(value === "off" || value === "0" || value === "false" || value === "no");
}

export interface IdleTrimOptions {
  /** Turns running or waiting (the router's sessions with work); no trim while there are any. */
  turnsInFlight: () => number;
  logger: Logger;
  /** Default 1,000 ms. */
  quietMs?: number;
  /** The memory-reducing collection; default {@link reduceMemory}. */
  collect?: () => Promise<void>;
}

/** What one trim gave back, as the debug line reports it. */
export interface TrimReport {
  /** V8's heap, resident (committed and touched), MB, before and after. */
  heapBeforeMB: number;
  heapAfterMB: number;
  /** What lives in it after the collection, MB. */
  liveMB: number;
  /** The young generation, resident, MB, after. */
  newSpaceMB: number;
  /** The trim's own CPU time, ms. */
  cpuMs: number;
}

export class IdleTrim {
  /** V8's resident heap after the last trim; 0 before the first (start-up grew it). */
  private floor = 0;
  private trimming = false;
  private stopped = false;
  /** The process's CPU time (user + system, µs) at the start of the current window. */
  private windowCpu: number;
  private readonly timer: NodeJS.Timeout;
  private readonly quietMs: number;
  private readonly collect: () => Promise<void>;
  /** Trims done so far, for the tests and the debug line. */
  trims = 0;
  lastReport: TrimReport | undefined;

  constructor(private readonly options: IdleTrimOptions) {
    this.quietMs = options.quietMs ?? QUIET_MS;
    this.collect = options.collect ?? reduceMemory;
    this.windowCpu = cpuMicros();
    this.timer = setInterval(() => this.check(), this.quietMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private check(): void {
    if (this.trimming) return;
    const now = cpuMicros();
    const busyMs = (now - this.windowCpu) / 1000;
    this.windowCpu = now;
    if (this.options.turnsInFlight() > 0 || busyMs > this.quietMs * BUSY_SHARE) return;
    if (getHeapStatistics().total_physical_size - this.floor < GROWTH_BYTES) return;
    void this.trim();
  }

  private async trim(): Promise<void> {
    this.trimming = true;
    const heapBefore = getHeapStatistics().total_physical_size;
    const cpu = process.cpuUsage();
    try {
      await this.collect();
    } catch (error) {
      // Nothing depends on a trim: say why once and stop trying (a node built without the inspector).
      this.options.logger.debug({ err: (error as Error).message }, "idle trim unavailable; not trying again");
      this.stop();
      return;
    } finally {
      this.trimming = false;
      // The collection's own CPU time is not a busy period.
      this.windowCpu = cpuMicros();
    }
    if (this.stopped) return;
    const used = process.cpuUsage(cpu);
    const heap = getHeapStatistics();
    this.floor = heap.total_physical_size;
    const newSpace = getHeapSpaceStatistics().find((space) => space.space_name === "new_space");
    this.trims += 1;
    this.lastReport = {
      heapBeforeMB: mb(heapBefore),
      heapAfterMB: mb(heap.total_physical_size),
      liveMB: mb(heap.used_heap_size),
      newSpaceMB: mb(newSpace?.physical_space_size ?? 0),
      cpuMs: Math.round((used.user + used.system) / 100) / 10,
    };
    this.options.logger.debug({ trim: this.lastReport }, "idle: gave memory back");
  }
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function mb(bytes: number): number {
  return Math.round(bytes / 10_000) / 100;
}

/**
 * One memory-reducing full collection, through an in-process inspector session (see the top of
 * this file for why this way). Resolves once it is done and the session is closed.
 */
export function reduceMemory(): Promise<void> {
  const Connection = nativeConnection();
  return Connection === undefined ? reduceMemoryThroughSession() : collectThrough(nativeSession(Connection));
}

/** The same collection through `node:inspector`, where the native connection is not available. */
export async function reduceMemoryThroughSession(): Promise<void> {
  const { Session } = await import("node:inspector");
  const session = new Session();
  session.connect();
  return collectThrough({
    collectGarbage: () =>
      new Promise<void>((resolve, reject) =>
        session.post("HeapProfiler.collectGarbage", (error) => (error ? reject(error) : resolve())),
      ),
    disconnect: () => session.disconnect(),
  });
}

/** An open inspector session, either kind: the one request the trim makes, and its close. */
interface CollectingSession {
  collectGarbage(): Promise<void>;
  disconnect(): void;
}

async function collectThrough(session: CollectingSession): Promise<void> {
  try {
    await session.collectGarbage();
  } finally {
    // Disconnecting from within the reply's dispatch left the process hung (it ignored SIGTERM):
    // close the session from the next turn of the event loop instead.
    await new Promise<void>((resolve) => setImmediate(resolve));
    session.disconnect();
  }
}

/** A session on the inspector's native connection (see {@link nativeConnection}). */
function nativeSession(Connection: InspectorConnectionClass): CollectingSession {
  let reply: (answer: ProtocolReply) => void = () => {};
  const replied = new Promise<ProtocolReply>((resolve) => {
    reply = resolve;
  });
  // The reply to our one request carries its id; the inspector may also send notifications (no id).
  const connection = new Connection((message) => {
    const parsed = JSON.parse(message) as ProtocolReply;
    if (parsed.id === 1) reply(parsed);
  });
  return {
    async collectGarbage() {
      connection.dispatch(JSON.stringify({ id: 1, method: "HeapProfiler.collectGarbage" }));
      const { error } = await replied;
      if (error !== undefined)
        throw new Error(
          `HeapProfiler.collectGarbage failed: ${error.message ?? error.code ?? "unknown error"}`,
        );
    },
    disconnect: () => connection.disconnect(),
  };
}

/** An inspector protocol message: a reply (with the request's id) or a notification. */
interface ProtocolReply {
  id?: number;
  error?: { code?: number; message?: string };
}

/** The inspector's native session, as `node:inspector`'s Session holds it. */
interface InspectorConnection {
  /** Sends one protocol message (JSON); replies and notifications come to the constructor's callback. */
  dispatch(message: string): void;
  disconnect(): void;
}
type InspectorConnectionClass = new (onMessage: (message: string) => void) => InspectorConnection;

/**
 * The class `node:inspector`'s Session wraps, from the inspector's binding, or undefined where
 * this node does not hand it out (built without the inspector, or a Node that took the binding out
 * of `process.binding`'s list). `process.binding` is deprecated in the documentation only (DEP0111;
 * a warning under `--pending-deprecation`); Node 20 keeps `inspector` on its list of bindings it
 * still serves, without a runtime warning.
 */
function nativeConnection(): InspectorConnectionClass | undefined {
  try {
    const binding = (process as unknown as { binding(name: string): { Connection?: unknown } }).binding(
      "inspector",
    );
    return typeof binding.Connection === "function"
      ? (binding.Connection as InspectorConnectionClass)
      : undefined;
  } catch {
    return undefined;
  }
}
