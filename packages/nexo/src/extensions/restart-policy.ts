/**
 * When a crashed child is started again, and when the supervisor gives up.
 *
 * Crashes are counted in a sliding window. The n-th crash inside the window waits
 * `initialDelayMs * factor^(n-1)` (capped at `maxDelayMs`, then spread by ±`jitter` so many
 * children that crashed together do not restart in lock-step). When more than `maxRestarts` crashes
 * fall inside the window the child is crash-looping and the supervisor marks it failed. A child
 * that stays up longer than the window starts again from the initial delay.
 */
import * as plugin from "@nexo/wire/schemas/plugin";

export interface RestartPolicy {
  /** Restart after a crash at all. When false, the first crash is final. */
  respawn: boolean;
  /** Restarts allowed within `windowMs`; one more crash in the window means failed. */
  maxRestarts: number;
  windowMs: number;
  initialDelayMs: number;
  maxDelayMs: number;
  factor: number;
  /** 0 … 1: each delay is multiplied by a random factor in [1 - jitter, 1 + jitter]. */
  jitter: number;
}

export const DEFAULT_RESTART_POLICY: Readonly<RestartPolicy> = {
  respawn: true,
  maxRestarts: 5,
  windowMs: 60_000,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  factor: 2,
  jitter: 0.2,
};

/** How long a plugin must stay up before its earlier crashes stop counting. */
const MANIFEST_WINDOW_MS = 10 * 60_000;

/**
 * The policy a plugin's `[plugin.supervisor]` asks for. The manifest has no knobs for the curve, so
 * `backoff_ms` is the first delay, doubling up to 32× (bounded by the schema's maximum), and
 * `max_attempts` is the number of restarts before the plugin is marked failed.
 */
export function restartPolicyFromManifest(supervisor: plugin.ManifestSupervisor | undefined): RestartPolicy {
  const defaults = plugin.SUPERVISOR_DEFAULTS;
  const backoff = supervisor?.backoff_ms ?? defaults.backoff_ms;
  return {
    respawn: supervisor?.respawn ?? defaults.respawn,
    maxRestarts: supervisor?.max_attempts ?? defaults.max_attempts,
    windowMs: MANIFEST_WINDOW_MS,
    initialDelayMs: backoff,
    maxDelayMs: Math.max(backoff, Math.min(backoff * 32, plugin.SUPERVISOR_BACKOFF_MS_MAX)),
    factor: 2,
    jitter: 0.2,
  };
}

/** Fills in defaults and rejects a policy that cannot work, naming the field. */
export function normalizeRestartPolicy(partial: Partial<RestartPolicy> = {}): RestartPolicy {
  const policy = { ...DEFAULT_RESTART_POLICY, ...definedOnly(partial) };
  const check = (field: keyof RestartPolicy, ok: boolean, rule: string) => {
    if (!ok) throw new RangeError(`restart policy ${field} ${rule}, got ${String(policy[field])}`);
  };
  check(
    "maxRestarts",
    Number.isInteger(policy.maxRestarts) && policy.maxRestarts >= 0,
    "must be an integer ≥ 0",
  );
  check("windowMs", Number.isFinite(policy.windowMs) && policy.windowMs > 0, "must be a positive number");
  check(
    "initialDelayMs",
    Number.isFinite(policy.initialDelayMs) && policy.initialDelayMs >= 0,
    "must be ≥ 0",
  );
  check(
    "maxDelayMs",
    Number.isFinite(policy.maxDelayMs) && policy.maxDelayMs >= policy.initialDelayMs,
    "must be ≥ initialDelayMs",
  );
  check("factor", Number.isFinite(policy.factor) && policy.factor >= 1, "must be ≥ 1");
  check("jitter", policy.jitter >= 0 && policy.jitter <= 1, "must be between 0 and 1");
  return policy;
}

/** The wait before restart number `attempt` (1-based) inside the window. */
export function restartDelayMs(
  policy: RestartPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** Math.max(0, attempt - 1));
  const spread = 1 + policy.jitter * (2 * random() - 1);
  return Math.max(0, Math.round(base * spread));
}

export type CrashVerdict =
  | { action: "restart"; attempt: number; delayMs: number }
  | { action: "give_up"; reason: string };

/** Remembers recent crashes and decides what the next one means. */
export class CrashTracker {
  private readonly policy: RestartPolicy;
  private readonly random: () => number;
  private crashes: number[] = [];

  constructor(policy: RestartPolicy, random: () => number = Math.random) {
    this.policy = policy;
    this.random = random;
  }

  /** Records a crash at `now` (ms) and says whether to restart, and after how long. */
  record(now: number): CrashVerdict {
    if (!this.policy.respawn) return { action: "give_up", reason: "respawn is disabled" };
    this.crashes = this.crashes.filter((at) => now - at < this.policy.windowMs);
    this.crashes.push(now);
    const attempt = this.crashes.length;
    if (attempt > this.policy.maxRestarts) {
      return {
        action: "give_up",
        reason: `crash loop: ${attempt} crashes within ${formatMs(this.policy.windowMs)} (limit ${this.policy.maxRestarts} restarts)`,
      };
    }
    return { action: "restart", attempt, delayMs: restartDelayMs(this.policy, attempt, this.random) };
  }

  /** Crashes still inside the window as of the last `record`. */
  get recentCrashes(): number {
    return this.crashes.length;
  }

  reset(): void {
    this.crashes = [];
  }
}

function definedOnly<T extends object>(partial: Partial<T>): Partial<T> {
  return Object.fromEntries(Object.entries(partial).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
