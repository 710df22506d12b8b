/**
 * The state one turn carries while it runs, shared by the loop (turn.ts), the model call
 * (turn-model.ts) and the tool calls (turn-tools.ts).
 */
import { releaseController, takeController } from "./abort-pool.js";
import { toolSpecChars } from "./compaction.js";
import type { TurnEvent } from "./events.js";
import type { SessionState } from "./session-types.js";
import type { MidTurnEvent } from "./thread-hub.js";
import { emptyUsage, type ToolSpec, type Usage } from "./types.js";

/** Where a turn's events go: the session's hub (see ThreadHub for both methods). */
export interface EventSink {
  publish(event: TurnEvent): void;
  publishWithin(event: MidTurnEvent, turnId: string): void;
}

/**
 * A class, not an object of closures: a turn is built for every message, and its methods live
 * once on the prototype instead of as fresh functions per turn.
 */
export class TurnRun {
  /** The tool definitions offered during this turn, and their size, computed once per turn. */
  tools?: { specs: readonly ToolSpec[]; chars: number };
  /** The first call id given out in this turn (see `uniqueCallId`). */
  firstCallId?: string;
  /** Call ids given out in this turn once there is more than one: each call has an id of its own. */
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

  /**
   * Publishes an event of the running turn; never waits (the session's hub fans it out). The
   * turn's first and last events go through `start` and `end`, so that neither this nor the hub
   * reads an event's type or turn: events come in a dozen shapes, and each such read is a
   * megamorphic property load, for every event a turn publishes.
   */
  emit(event: MidTurnEvent): void {
    this.sink.publishWithin(event, this.turnId);
  }

  /** Publishes the turn's first event. */
  start(event: TurnEvent & { type: "turn_start" }): void {
    this.sink.publish(event);
  }

  /** Publishes the turn's last event. */
  end(event: TurnEvent & { type: "turn_end" }): void {
    this.ended = true;
    this.sink.publish(event);
  }
}

export function turnTools(run: TurnRun): { specs: readonly ToolSpec[]; chars: number } {
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
  const base = id === "" ? "call" : id;
  let used = run.callIds;
  if (used === undefined) {
    // Most turns make one call or none: the first id needs no set to be checked against.
    if (run.firstCallId === undefined) {
      run.firstCallId = base;
      return base;
    }
    used = new Set([run.firstCallId]);
    run.callIds = used;
  }
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
