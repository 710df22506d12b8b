/**
 * A sliding one-minute window of calls. The demo weather "service" uses it to show how a tool
 * reports a transient refusal: -33404 with `retry_after_ms`, which tells the agent loop when a
 * retry can succeed instead of letting it hammer the tool.
 */
export class CallWindow {
  private readonly calls: number[] = [];

  constructor(
    private readonly maxCalls: number,
    private readonly windowMs = 60_000,
  ) {
    if (!Number.isSafeInteger(maxCalls) || maxCalls < 1) {
      throw new RangeError(`maxCalls must be a positive integer, got ${maxCalls}`);
    }
  }

  get limit(): number {
    return this.maxCalls;
  }

  /**
   * Counts a call at `now` and returns 0, or refuses it and returns how many milliseconds until
   * the oldest call in the window leaves it.
   */
  tryCall(now: number): number {
    while (this.calls.length > 0 && this.calls[0]! <= now - this.windowMs) this.calls.shift();
    if (this.calls.length < this.maxCalls) {
      this.calls.push(now);
      return 0;
    }
    return Math.max(1, this.calls[0]! + this.windowMs - now);
  }
}
