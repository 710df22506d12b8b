/**
 * Worker threads that run Grep's regular expressions, so that no pattern can stall the daemon.
 *
 * A pattern the model wrote runs over files it did not choose. One that backtracks
 * catastrophically (`(a+)+$` on a long run of "a") spins inside V8's regex engine, which yields to
 * nothing on its own thread; on the main thread that froze every session, the health endpoint
 * and the channels for the whole time limit. In a worker it spins alone, and the search's owner
 * ends it with `terminate()`, which V8 honours even inside a running regex.
 *
 * Pool policy: at most `MAX_BUSY` searches run at once, each on a worker of its own; further
 * searches wait in a FIFO of at most `MAX_WAITING` (past that they are refused with
 * `SearchesBusyError`). Up to `MAX_IDLE` finished workers are kept warm (a worker takes tens of
 * milliseconds to start) and end after `IDLE_MS` unused; idle workers never keep the process alive.
 * A terminated worker (time limit, cancellation) is never reused.
 *
 * The worker's code is a self-contained string evaluated by `new Worker(…, {eval: true})`, so it
 * runs the same from the TypeScript sources, the tsc output and the esbuild bundle.
 */
import { createRequire } from "node:module";
import type { Worker } from "node:worker_threads";

/**
 * `node:worker_threads`, required when the first worker is made rather than imported: this module
 * loads with the session code, and a daemon that never greps need not hold the built-in (an ES
 * module import would also build its namespace; docs/performance.md, "Eighth pass (a)").
 */
const requireBuiltin = createRequire(import.meta.url);

const MAX_BUSY = 4;
const MAX_WAITING = 64;
const MAX_IDLE = 2;
const IDLE_MS = 60_000;
/** A worker that has not started running within this is given up on. */
const START_TIMEOUT_MS = 10_000;

/** One batch of files to match; `lines` asks for the matching lines, otherwise only "matched or not". */
export interface MatchBatch {
  readonly files: readonly Uint8Array[];
  readonly lines: boolean;
  /** Matching lines are cut to this many characters (with " …"). */
  readonly maxLineChars: number;
  /** Stop collecting lines of one file after this many. */
  readonly maxLinesPerFile: number;
}

/** Per file: `true`/`false` (lines not asked for), or [line number, text, line number, text, …]. */
export type MatchResult = boolean | (number | string)[];

const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
// Like Buffer#toString("utf8"): invalid bytes become U+FFFD and a BOM is kept.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
let regex;
function matchFile(bytes, batch) {
  const lines = decoder.decode(bytes).split("\\n");
  const hits = [];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    if (line.endsWith("\\r")) line = line.slice(0, -1);
    if (!regex.test(line)) continue;
    if (!batch.lines) return true;
    hits.push(i + 1, line.length > batch.maxLineChars ? line.slice(0, batch.maxLineChars) + " …" : line);
    if (hits.length / 2 >= batch.maxLinesPerFile) break;
  }
  return batch.lines ? hits : false;
}
parentPort.on("message", (message) => {
  if (message.type === "pattern") {
    regex = new RegExp(message.source, message.flags);
    return;
  }
  parentPort.postMessage({ id: message.id, results: message.batch.files.map((bytes) => matchFile(bytes, message.batch)) });
});
`;

/** More searches are waiting for a worker than the bound allows. */
export class SearchesBusyError extends Error {
  override readonly name = "SearchesBusyError";
  constructor() {
    super(`Too many searches are running (${MAX_BUSY}, with ${MAX_WAITING} waiting); try again shortly`);
  }
}

/** A worker that stopped on its own (it crashed or ran out of memory) while matching. */
export class MatchWorkerError extends Error {
  override readonly name = "MatchWorkerError";
}

interface Pending {
  resolve(results: MatchResult[]): void;
  reject(error: Error): void;
}

/** A new thread running WORKER_SOURCE. */
function newWorker(): Worker {
  const { Worker } = requireBuiltin("node:worker_threads") as typeof import("node:worker_threads");
  return new Worker(WORKER_SOURCE, { eval: true });
}

/** One worker, lent to one search at a time. */
export class MatchWorker {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Why the worker can no longer be used (stopped, crashed); undefined while it can. */
  failure: Error | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  /** Resolves once the thread runs (its start-up does not count against a search's time limit). */
  readonly started: Promise<void>;

  constructor(private readonly worker: Worker = newWorker()) {
    worker.on("message", (message: { id: number; results: MatchResult[] }) => {
      const entry = this.pending.get(message.id);
      this.pending.delete(message.id);
      entry?.resolve(message.results);
    });
    worker.on("error", (error) =>
      this.fail(new MatchWorkerError(`the search worker failed: ${error.message}`)),
    );
    worker.on("exit", (code) => this.fail(new MatchWorkerError(`the search worker exited (code ${code})`)));
    this.started = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.stop(new MatchWorkerError(`the search worker did not start within ${START_TIMEOUT_MS} ms`));
      }, START_TIMEOUT_MS);
      worker.once("online", () => {
        clearTimeout(timer);
        resolve();
      });
      worker.once("exit", () => {
        clearTimeout(timer);
        reject(this.failure);
      });
    });
    this.started.catch(() => undefined);
  }

  get usable(): boolean {
    return this.failure === undefined;
  }

  setPattern(regex: RegExp): void {
    this.worker.postMessage({ type: "pattern", source: regex.source, flags: regex.flags });
  }

  /** Matches a batch; batches sent one after another are answered in the same order. */
  match(batch: MatchBatch): Promise<MatchResult[]> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ type: "match", id, batch });
    });
  }

  /** Stops the worker at once, even in the middle of a regex; pending batches fail with `reason`. */
  stop(reason: Error): void {
    this.fail(reason);
    void this.worker.terminate();
  }

  ref(): void {
    this.worker.ref();
  }

  unref(): void {
    this.worker.unref();
  }

  private fail(reason: Error): void {
    this.failure ??= reason;
    for (const entry of this.pending.values()) entry.reject(this.failure);
    this.pending.clear();
  }
}

const idle: MatchWorker[] = [];
interface Waiter {
  resolve(worker: MatchWorker): void;
  reject(error: Error): void;
  signal: AbortSignal;
}

const waiting: Waiter[] = [];
/**
 * The waiters of each signal, behind one abort listener: a turn's searches share its signal, and a
 * listener per waiter would pass Node's 10-listener leak warning with more than ten in line.
 */
const waitersOf = new WeakMap<AbortSignal, { members: Set<Waiter>; onAbort: () => void }>();
let busy = 0;

/**
 * A worker for one search: a warm one, a new one, or — when `MAX_BUSY` searches run — the next
 * one freed. Give it back with `releaseMatchWorker`. Rejects with the signal's reason if aborted
 * while waiting, and with `SearchesBusyError` when the waiting line is full.
 */
export async function acquireMatchWorker(signal: AbortSignal): Promise<MatchWorker> {
  const worker = await waitForWorker(signal);
  try {
    await worker.started;
  } catch (error) {
    releaseMatchWorker(worker);
    throw error;
  }
  return worker;
}

function waitForWorker(signal: AbortSignal): Promise<MatchWorker> {
  if (signal.aborted) return Promise.reject(signal.reason);
  if (busy < MAX_BUSY) {
    busy++;
    return Promise.resolve(takeIdle() ?? new MatchWorker());
  }
  if (waiting.length >= MAX_WAITING) return Promise.reject(new SearchesBusyError());
  return new Promise((resolve, reject) => {
    const entry: Waiter = { resolve, reject, signal };
    let group = waitersOf.get(signal);
    if (group === undefined) {
      const members = new Set<Waiter>();
      const onAbort = () => {
        waitersOf.delete(signal);
        for (const member of members) {
          const index = waiting.indexOf(member);
          if (index !== -1) waiting.splice(index, 1);
          member.reject(signal.reason);
        }
      };
      group = { members, onAbort };
      waitersOf.set(signal, group);
      signal.addEventListener("abort", onAbort, { once: true });
    }
    const { members, onAbort } = group;
    members.add(entry);
    entry.resolve = (worker) => {
      members.delete(entry);
      if (members.size === 0) {
        waitersOf.delete(signal);
        signal.removeEventListener("abort", onAbort);
      }
      resolve(worker);
    };
    waiting.push(entry);
  });
}

/** Returns a worker after its search: kept warm when still usable, otherwise replaced for the next waiter. */
export function releaseMatchWorker(worker: MatchWorker): void {
  const next = waiting.shift();
  if (next !== undefined) {
    next.resolve(worker.usable ? worker : new MatchWorker());
    return;
  }
  busy--;
  if (!worker.usable) return;
  if (idle.length >= MAX_IDLE) {
    worker.stop(new MatchWorkerError("retired"));
    return;
  }
  worker.unref();
  worker.idleTimer = setTimeout(() => {
    const index = idle.indexOf(worker);
    if (index !== -1) idle.splice(index, 1);
    worker.stop(new MatchWorkerError("retired"));
  }, IDLE_MS);
  worker.idleTimer.unref();
  idle.push(worker);
}

function takeIdle(): MatchWorker | undefined {
  const worker = idle.pop();
  if (worker === undefined) return undefined;
  clearTimeout(worker.idleTimer);
  worker.ref();
  return worker;
}
