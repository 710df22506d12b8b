/**
 * Per-contact rate limits: a token bucket per key (a contact id), `burst` messages at once and
 * `perMinute` on average. Inbound, a contact over its limit is refused before the agent runs
 * (a flood costs no model calls); outbound, the queue waits for the contact's next token, which
 * keeps a channel under its network's per-chat limits. Buckets of idle contacts are forgotten
 * beyond `maxKeys` so an attacker with many ids cannot grow the map without bound.
 */
export interface RateLimitOptions {
  perMinute: number;
  burst: number;
  maxKeys?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private readonly now: () => number;

  constructor(private readonly options: RateLimitOptions) {
    if (!(options.perMinute > 0) || !(options.burst >= 1))
      throw new RangeError("a rate limit needs perMinute > 0 and burst >= 1");
    this.perMs = options.perMinute / 60_000;
    this.now = options.now ?? Date.now;
  }

  /** What channels use for a per-minute setting: that rate, bursts of up to 10 (fewer when the rate is lower). */
  static perMinute(perMinute: number): RateLimiter {
    return new RateLimiter({ perMinute, burst: Math.min(10, perMinute) });
  }

  private bucket(key: string): Bucket {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size >= (this.options.maxKeys ?? 10_000)) {
        const oldest = this.buckets.keys().next().value;
        if (oldest !== undefined) this.buckets.delete(oldest);
      }
      bucket = { tokens: this.options.burst, at: now };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.options.burst, bucket.tokens + (now - bucket.at) * this.perMs);
      bucket.at = now;
      // Most recently used last, so the oldest key is the first one evicted.
      this.buckets.delete(key);
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /** Takes a token: 0 when allowed now, else how many ms until one is there (nothing taken). */
  take(key: string): number {
    const bucket = this.bucket(key);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) / this.perMs);
  }

  /** How long until `key` has a token, without taking it. */
  waitMs(key: string): number {
    const bucket = this.bucket(key);
    return bucket.tokens >= 1 ? 0 : Math.ceil((1 - bucket.tokens) / this.perMs);
  }
}
