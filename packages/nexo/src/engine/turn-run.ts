/**
 * The state one turn carries while it runs, shared by the loop (turn.ts), the model call
 * (turn-model.ts) and the tool calls (turn-tools.ts).
 */
import { releaseController, takeController } from "./abort-pool.js";
import { toolSpecChars } from "./compaction.js";
import type { TurnEvent } from "./events.js";
import type { SessionState } from "./session-types.js";
import { emptyUsage, type ToolSpec, type Usage } from "./types.js";

/** Where a turn's events go: the session's hub. */
export interface EventSink {
  publish(event: TurnEvent): void;
}

/**
 * A class, not an object of closures: a turn is built for every message, and its methods live
 * once on the prototype instead of as fresh functions per turn.
 */
export class TurnRun {
  /** The tool definitions offered during this turn, and their size, computed once per turn. */
  tools?: { specs: ToolSpec[]; chars: number };
  /** Call ids given out in this turn: each call the user sees has an id of its own. */
  callIds?: Set<string>;
  /** Items (text, reasoning) numbered so far in this turn. */
  items = 0;
  /** The turn's usage so far. */
  usage: Usage = emptyUsage();
  /** Whether `turn_end` was published. */
  ended = false;
  /**
   * Whether the turn was stopped: `signal.aborted` as a plain field, for checks made per event
   * (Node 20's AbortSignal getter goes through a brand check on a dictionary-mode object).
   */
  isStopped = false;
  /** Aborts when the turn is stopped; tools and the provider get it. */
  readonly signal: AbortSignal;
  private readonly controller = takeController();
  /** The controller went back to the pool: this run can no longer stop anything. */
  private released = false;
  /** Resolves when the turn is stopped: made on first use (most turns are never stopped). */
  private stopPromise: Promise<void> | undefined;
  private resolveStop: (() => void) | undefined;

  constructor(
    readonly turnId: string,
    readonly session: SessionState,
    private readonly sink: EventSink,
  ) {
    this.signal = this.controller.signal;
  }

  /** Stops the turn: its signal aborts with `reason` (the only way it aborts). */
  stop(reason: unknown): void {
    if (this.isStopped || this.released) return;
    this.isStopped = true;
    this.controller.abort(reason);
    this.resolveStop?.();
  }

  /**
   * The turn has ended and nothing can stop it any more (its session forgot it): its controller
   * may serve another turn (see abort-pool.ts).
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    if (!this.isStopped) releaseController(this.controller);
  }

  /**
   * Resolves once the turn is stopped. A promise of the turn's own rather than a listener on the
   * signal for each waiter: EventTarget listeners cost ~0.5 µs to add and remove (Node 20).
   */
  stopped(): Promise<void> {
    if (this.stopPromise === undefined) {
      this.stopPromise = this.isStopped
        ? Promise.resolve()
        : new Promise((resolve) => {
            this.resolveStop = resolve;
          });
    }
    return this.stopPromise;
  }

  /** Publishes an event; never waits (the session's hub fans it out). */
  emit(event: TurnEvent): void {
    if (event.type === "turn_end") this.ended = true;
    this.sink.publish(event);
  }
}

export function turnTools(run: TurnRun): { specs: ToolSpec[]; chars: number } {
  if (!run.tools) {
    const specs = run.session.toolSpecs();
    run.tools = { specs, chars: toolSpecChars(specs) };
  }
  return run.tools;
}

/** A fresh item id within the turn: `msg-1`, `reasoning-2`, … */
export function nextItemId(run: TurnRun, kind: "msg" | "reasoning"): string {
  run.items++;
  return `${kind}-${run.items}`;
}

/**
 * The model's id for a call, or a fresh one when the model already used it in this turn: two calls
 * sharing an id would let an approval (or a result) meant for one apply to the other. The new id
 * keeps the providers' id alphabet (letters, digits, `_`, `-`).
 */
export function uniqueCallId(run: TurnRun, id: string): string {
  run.callIds ??= new Set();
  const used = run.callIds;
  const base = id === "" ? "call" : id;
  let unique = base;
  for (let n = 2; used.has(unique); n++) unique = `${base}_${n}`;
  used.add(unique);
  return unique;
}

/** The request's estimated size in tokens: system prompt, history and tool definitions. */
export function estimateRequestTokens(run: TurnRun): number {
  const { session } = run;
  const chars = (session.config.system?.length ?? 0) + session.historyChars + turnTools(run).chars;
  return Math.ceil(chars / 4);
}
