/**
 * Runs the hook handlers registered for a point in the turn. Handlers run in registration order;
 * `transform` replaces the payload for the next handler, `block` stops the chain. Any failure or
 * timeout counts as "continue" with a warning (the plugin contract's continue-on-error rule), so a
 * broken extension can never wedge a turn.
 */
import type { HookHandler, HookPoint } from "./types.js";

export interface HookOutcome {
  decision: "continue" | "block";
  payload: Record<string, unknown>;
  reason?: string;
  /** Which handler blocked or last transformed, for logs. */
  by?: string;
}

export type HookWarn = (obj: object, msg: string) => void;

export const DEFAULT_HOOK_TIMEOUT_MS = 5000;

export class HookRunner {
  private readonly handlers: HookHandler[] = [];

  constructor(
    private readonly warn: HookWarn = () => {},
    private readonly timeoutMs = DEFAULT_HOOK_TIMEOUT_MS,
  ) {}

  register(handler: HookHandler): () => void {
    this.handlers.push(handler);
    return () => {
      const i = this.handlers.indexOf(handler);
      if (i >= 0) this.handlers.splice(i, 1);
    };
  }

  has(point: HookPoint): boolean {
    return this.handlers.some((h) => h.points.includes(point));
  }

  async run(
    point: HookPoint,
    payload: Record<string, unknown>,
    ctx: { agentId: string; sessionId: string },
  ): Promise<HookOutcome> {
    let current = payload;
    let by: string | undefined;
    for (const handler of this.handlers) {
      if (!handler.points.includes(point)) continue;
      try {
        const vote = await withTimeout(handler.onHook(point, current, ctx), this.timeoutMs, handler.name);
        if (vote.decision === "block")
          return { decision: "block", payload: current, reason: vote.reason, by: handler.name };
        if (vote.decision === "transform") {
          if (vote.payload === null || typeof vote.payload !== "object") {
            this.warn(
              { hook: handler.name, point },
              "hook returned transform without an object payload; ignored",
            );
            continue;
          }
          current = vote.payload;
          by = handler.name;
        }
      } catch (error) {
        this.warn({ hook: handler.name, point, err: (error as Error).message }, "hook failed; continuing");
      }
    }
    return by === undefined
      ? { decision: "continue", payload: current }
      : { decision: "continue", payload: current, by };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, name: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hook ${name} timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
