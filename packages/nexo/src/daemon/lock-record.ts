/**
 * What the state-dir lock file says, and the verdict on whether its owner still runs.
 *
 * The verdict is deliberately three-valued. "dead" lets a new daemon take the lock over; "alive"
 * refuses it; "unknown" (the owner ran on another host, or in another pid namespace, so its pid
 * means nothing here) also refuses, because two daemons on one state dir corrupt it silently while
 * a refused start is loud and the operator can clear it.
 */
import { formatIssues } from "@nexo/wire";
import { z } from "zod";
import { disposableSchema } from "../config/disposable-schema.js";
import { isoTime } from "../iso-time.js";
import { type IdentityVerdict, judgeIdentity, type ProcessIdentity } from "../process/identity.js";

/**
 * The JSON inside `daemon.lock` (and inside a takeover marker, which records the taker). Read when
 * a lock is taken, released or inspected, never while the daemon idles: built on use and let go
 * (config/disposable-schema.ts; its date-time check alone is ~30 KB of heap).
 */
export const LockRecordSchema = disposableSchema(() =>
  z.looseObject({
    pid: z.number().int().min(1),
    /** When the lock was taken, RFC 3339 in UTC. */
    started_at: z.iso.datetime({ offset: true }),
    hostname: z.string(),
    boot_id: z.string().nullable(),
    pid_namespace: z.string().nullable(),
    /** The owner's start time in clock ticks since boot (/proc/<pid>/stat field 22). */
    process_start: z.string().nullable(),
    /** Unique per acquisition, so `release` can tell its own lock from a successor's. */
    lock_id: z.string().min(1),
  }),
);
export type LockRecord = z.infer<typeof LockRecordSchema>;

export function lockRecordFor(identity: ProcessIdentity, lockId: string, now = new Date()): LockRecord {
  return {
    pid: identity.pid,
    started_at: isoTime(now),
    hostname: identity.hostname,
    boot_id: identity.bootId,
    pid_namespace: identity.pidNamespace,
    process_start: identity.startTicks,
    lock_id: lockId,
  };
}

export type OwnerVerdict = IdentityVerdict;

/** Judges the owner named by `record` from the point of view of the process `self`. */
export function judgeOwner(record: LockRecord, self: ProcessIdentity): OwnerVerdict {
  return judgeIdentity(
    {
      pid: record.pid,
      hostname: record.hostname,
      bootId: record.boot_id,
      pidNamespace: record.pid_namespace,
      startTicks: record.process_start,
    },
    self,
  );
}

/** Parses lock file text; the error message says what is wrong with it. */
export function parseLockRecord(text: string): { record: LockRecord } | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: text.trim() === "" ? "it is empty" : "it is not JSON" };
  }
  const parsed = LockRecordSchema.safeParse(json);
  if (parsed.success) return { record: parsed.data };
  return { problem: formatIssues(parsed.error.issues.slice(0, 1), "(record)") };
}
