/**
 * The lifetime of one HTTP attempt: its own AbortController, tied to the caller's signal, and an
 * idle timer that gives up on a stream that stopped sending.
 *
 * Both SDKs end iteration *silently* when their request is aborted, so after a stream ends the
 * provider asks the guard whether it ended because of an abort (the caller's: rethrow the
 * caller's reason; ours: the connection went idle) rather than because the response was complete.
 */
import { LlmConnectionError } from "@nexo/wire";
import { abortReason } from "./errors.js";

/** How long a request may wait for response headers by default (the SDKs' own default). */
export const DEFAULT_TIMEOUT_MS = 600_000;
/**
 * How long a stream may stay silent by default. Generous, because reasoning models can think for
 * minutes before their first chunk.
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

export class AttemptGuard {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private idle = false;
  private readonly onParentAbort = (): void => this.controller.abort(this.parent?.reason);

  constructor(
    private readonly parent: AbortSignal | undefined,
    /** Longest silence tolerated between two stream events; 0 disables the check. */
    private readonly idleTimeoutMs: number,
    private readonly describe: { provider: string; baseUrl: string },
  ) {
    if (parent?.aborted) this.controller.abort(parent.reason);
    else parent?.addEventListener("abort", this.onParentAbort, { once: true });
    this.touch();
  }

  /** The signal to hand to the SDK for this attempt. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Call on every stream event: the connection is alive. */
  touch(): void {
    if (this.idleTimeoutMs <= 0 || this.controller.signal.aborted) return;
    // One timer per attempt, pushed back on each event: refresh() is much cheaper than a new
    // timer per stream event, which showed up in the long-answer profile.
    if (this.timer) {
      this.timer.refresh();
      return;
    }
    this.timer = setTimeout(() => {
      this.idle = true;
      this.controller.abort(new Error("idle timeout"));
    }, this.idleTimeoutMs);
    this.timer.unref();
  }

  /** Throws what an abort of this attempt means, if it was aborted; otherwise does nothing. */
  throwIfAborted(): void {
    if (this.parent?.aborted) throw abortReason(this.parent);
    if (this.idle) {
      throw new LlmConnectionError(
        `${this.describe.provider}: no data from ${this.describe.baseUrl} for ${this.idleTimeoutMs} ms; gave up on the stream`,
        { provider: this.describe.provider, reason: "idle_timeout" },
      );
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.parent?.removeEventListener("abort", this.onParentAbort);
    // Closes the HTTP connection if the stream was left early (consumer stopped, error).
    if (!this.controller.signal.aborted) this.controller.abort();
  }
}
