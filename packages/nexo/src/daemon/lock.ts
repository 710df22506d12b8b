/**
 * One daemon per state dir: `<stateDir>/daemon.lock`.
 *
 * Taking the lock is an exclusive create. The record is written completely to a temp file first
 * and then hard-linked to `daemon.lock`: link(2) fails with EEXIST exactly like open(O_EXCL), but
 * nobody can ever read a half-written lock (with `open("wx")` a reader could see an empty file
 * and would have to guess whether its writer is still busy or crashed).
 *
 * A lock whose owner is dead (see lock-record.ts) is stale and is taken over. Taking over is the
 * delicate part: two daemons may find the same stale lock at once, and rename-over is not
 * conditional, so "rename, then re-read" alone lets both believe they won. Instead every state of
 * the lock file gets a takeover marker named after it (a digest of its inode, mtime and text),
 * created exclusively: exactly one contender creates the marker for a given stale state; it
 * re-reads the lock, and only if it still holds that same stale state does it rename its own
 * record over it, then re-reads to confirm. The others see the marker and wait for the winner,
 * after which they find a live lock and are refused. A taker that dies holding its marker leaves a
 * marker whose owner is dead; the next contender moves on to a marker named after that one, so a
 * crash never wedges the state dir. Markers are removed only once the lock no longer holds the
 * stale state; a late contender that then recreates one re-reads the lock, sees it changed, and
 * backs off.
 *
 * Nothing here ever sends a signal to a pid read from a file.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { currentProcessIdentity, type ProcessIdentity } from "../process/identity.js";
import { judgeOwner, type LockRecord, lockRecordFor, parseLockRecord } from "./lock-record.js";

export const LOCK_FILE = "daemon.lock";
/** How long to wait for another process that is taking over a stale lock right now. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;
const BUSY_POLL_MS = 20;
/** Abandoned takeovers are crashes inside a few milliseconds; this many in a row is not that. */
const MAX_ABANDONED_MARKERS = 16;

export type StateLockErrorCode =
  /** Another live daemon holds the lock. */
  | "locked"
  /** The owner ran on another host or in another pid namespace: nexo cannot tell if it lives. */
  | "unverifiable"
  /** The lock file is not a nexo lock record. */
  | "corrupt"
  /** Another process was taking the stale lock over and did not finish in time. */
  | "busy"
  /** The state dir or the lock file could not be created, read or written. */
  | "io";

/** The owner as named in the lock file, for the operator. */
export interface LockOwner {
  pid: number;
  hostname: string;
  /** When the owner took the lock. */
  startedAt: string;
}

export class StateLockError extends Error {
  override readonly name = "StateLockError";
  readonly code: StateLockErrorCode;
  /** The lock file. */
  readonly path: string;
  readonly owner: LockOwner | undefined;

  constructor(code: StateLockErrorCode, path: string, message: string, owner?: LockOwner, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.path = path;
    this.owner = owner;
  }
}

export interface StateLock {
  /** The lock file. */
  readonly path: string;
  /** What we wrote into it. */
  readonly record: LockRecord;
  /** Set when we took over a stale lock: whose it was and why it was stale. */
  readonly replaced: { owner: LockOwner; reason: string } | undefined;
  /** True while the lock file still holds our record. */
  held(): boolean;
  /**
   * Removes the lock file if it still holds our record (never a successor's). Synchronous, so it
   * can run in an `exit` listener. Returns whether it removed it. Idempotent.
   */
  release(): boolean;
}

export interface StateLockOptions {
  /** Default 5000 ms. */
  busyTimeoutMs?: number;
}

/** A lock file other than the state dir's (acquireLockFile). */
export interface LockFileOptions extends StateLockOptions {
  /** Extra fields written into the record beside the owner's identity (e.g. where it listens). */
  extra?: Record<string, unknown>;
  /** The lock file's permissions. Default 0o644; 0o600 when the extra fields hold a secret. */
  mode?: number;
  /** Who holds such a lock and what it guards, for the messages: "nexo hub", "the hub lock". */
  holder: string;
  subject: string;
  /** What the operator should do when a live owner holds it. */
  remedy: string;
}

/**
 * Takes the lock of `stateDir` (created if missing), or throws StateLockError: `locked` naming the
 * owner's pid and since when, `unverifiable`, `corrupt`, `busy` or `io`.
 */
export async function acquireStateLock(stateDir: string, options: StateLockOptions = {}): Promise<StateLock> {
  const path = join(stateDir, LOCK_FILE);
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw ioError(path, `cannot create the state dir ${stateDir}`, error);
  }
  return acquireLockFile(path, {
    ...options,
    holder: "nexo daemon",
    subject: `state dir ${stateDir}`,
    remedy: "stop that daemon or use another state dir",
  });
}

/**
 * Takes the lock file at `path` (its directory must exist) with the same rules as the state dir's:
 * exclusive create, stale owners taken over safely, never a half-written record.
 */
export async function acquireLockFile(path: string, options: LockFileOptions): Promise<StateLock> {
  const { holder, subject, remedy } = options;
  const mode = options.mode ?? 0o644;
  const self = currentProcessIdentity();
  const record: LockRecord = { ...options.extra, ...lockRecordFor(self, randomUUID()) };
  const text = `${JSON.stringify(record, null, 2)}\n`;
  const deadline = Date.now() + (options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS);
  let replaced: StateLock["replaced"];

  for (;;) {
    if (io(path, "create", () => createExclusive(path, text, mode))) {
      if (ownsLock(path, record)) return heldLock(path, record, replaced);
      continue;
    }
    const seen = io(path, "read", () => readLockFile(path));
    if (seen === undefined) continue; // released between our create and our read
    if ("problem" in seen) {
      throw new StateLockError(
        "corrupt",
        path,
        `lock file ${path} is not a nexo lock (${seen.problem}); if no ${holder} uses ${subject}, delete it`,
      );
    }
    const owner = ownerOf(seen.record);
    const verdict = judgeOwner(seen.record, self);
    if (verdict.state === "alive") {
      throw new StateLockError(
        "locked",
        path,
        `${subject} is in use by another ${holder}: pid ${owner.pid} on ${owner.hostname}, ` +
          `running since ${owner.startedAt} (lock file ${path}); ${remedy}`,
        owner,
      );
    }
    if (verdict.state === "unknown") {
      throw new StateLockError(
        "unverifiable",
        path,
        `${subject} is locked by pid ${owner.pid} on ${owner.hostname} since ${owner.startedAt}, ` +
          `but ${verdict.reason}, so nexo cannot tell whether it still runs; ` +
          `if no ${holder} uses ${subject}, delete ${path}`,
        owner,
      );
    }
    const outcome = io(path, "take over", () => takeOver(path, seen, text, self, mode));
    if (outcome.result === "won") {
      replaced = { owner, reason: verdict.reason };
      if (ownsLock(path, record)) return heldLock(path, record, replaced);
      continue;
    }
    if (outcome.result === "busy") {
      if (Date.now() >= deadline) {
        throw new StateLockError(
          "busy",
          path,
          `another process (pid ${outcome.taker.pid} on ${outcome.taker.hostname}) is taking over the stale ` +
            `lock ${path} and has not finished; try again`,
          owner,
        );
      }
      await sleep(BUSY_POLL_MS);
      continue;
    }
    // "changed": somebody replaced or removed the stale lock meanwhile; look again. Each round is
    // someone else's progress, so this ends; the deadline only guards against a file that flaps.
    if (Date.now() >= deadline) {
      throw new StateLockError("busy", path, `the lock file ${path} keeps changing; try again`, owner);
    }
  }
}

interface LockFileState {
  text: string;
  ino: number;
  mtimeMs: number;
}

type ReadLock = (LockFileState & { record: LockRecord }) | (LockFileState & { problem: string }) | undefined;

type TakeoverOutcome = { result: "won" } | { result: "changed" } | { result: "busy"; taker: LockOwner };

/**
 * Replaces the stale lock `seen` with `text`, if nobody else does it first (see the file comment).
 */
function takeOver(
  path: string,
  seen: LockFileState,
  text: string,
  self: ProcessIdentity,
  mode: number,
): TakeoverOutcome {
  const markerText = `${JSON.stringify(lockRecordFor(self, randomUUID()))}\n`;
  /** Markers whose takers died mid-takeover. */
  const abandoned: string[] = [];
  let key = stateKey(seen);
  while (abandoned.length <= MAX_ABANDONED_MARKERS) {
    const marker = markerPath(path, key);
    if (createExclusive(marker, markerText, mode)) {
      let outcome: TakeoverOutcome;
      try {
        const now = readLockFile(path);
        if (now === undefined || now.ino !== seen.ino || now.text !== seen.text) {
          outcome = { result: "changed" };
        } else {
          replaceAtomically(path, text, mode);
          outcome = { result: "won" };
        }
      } catch (error) {
        removeIfPresent(marker);
        throw error;
      }
      // The lock no longer holds `seen`, and never will again (every record is unique), so every
      // claim on it is void. Only now may the chain go: while the lock still holds `seen`, removing
      // a dead taker's marker would let a newcomer start a second takeover beside a live one.
      for (const stale of [...abandoned, marker]) removeIfPresent(stale);
      return outcome;
    }
    const held = readLockFile(marker);
    if (held === undefined) return { result: "changed" }; // that takeover has just ended
    if ("record" in held && judgeOwner(held.record, self).state !== "dead") {
      return { result: "busy", taker: ownerOf(held.record) };
    }
    // Its taker died mid-takeover (or the marker is unreadable): its claim is void, the next one
    // in the chain is named after it.
    abandoned.push(marker);
    key = digest(`${key}\n${held.text}`);
  }
  throw new StateLockError(
    "busy",
    path,
    `more than ${MAX_ABANDONED_MARKERS} abandoned takeover markers (${path}.takeover-*); ` +
      `if no nexo daemon uses this state dir, delete them and the lock file`,
  );
}

/**
 * The marker a takeover of the lock file as it is now would claim first; undefined when there is
 * no lock file. For diagnostics and tests.
 */
export function takeoverMarkerPath(lockPath: string): string | undefined {
  const state = readLockFile(lockPath);
  return state === undefined ? undefined : markerPath(lockPath, stateKey(state));
}

function stateKey(state: LockFileState): string {
  return digest(`${state.ino}\n${state.mtimeMs}\n${state.text}`);
}

function markerPath(lockPath: string, key: string): string {
  return `${lockPath}.takeover-${key.slice(0, 24)}`;
}

function heldLock(path: string, record: LockRecord, replaced: StateLock["replaced"]): StateLock {
  let released = false;
  return {
    path,
    record,
    replaced,
    held: () => !released && ownsLock(path, record),
    release: () => {
      if (released) return false;
      released = true;
      if (!ownsLock(path, record)) return false;
      removeIfPresent(path);
      return true;
    },
  };
}

function ownsLock(path: string, record: LockRecord): boolean {
  try {
    const now = readLockFile(path);
    return now !== undefined && "record" in now && now.record.lock_id === record.lock_id;
  } catch {
    return false;
  }
}

function ownerOf(record: LockRecord): LockOwner {
  return { pid: record.pid, hostname: record.hostname, startedAt: record.started_at };
}

/** The lock file's text, identity and parsed record; undefined when it does not exist. */
function readLockFile(path: string): ReadLock {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    // Identity and text from one open file, so they always describe the same version of it.
    const { ino, mtimeMs } = fstatSync(fd);
    const text = readFileSync(fd, "utf8");
    return { text, ino, mtimeMs, ...parseLockRecord(text) };
  } finally {
    closeSync(fd);
  }
}

/** Creates `target` holding `text` unless it exists; never visible half-written. */
function createExclusive(target: string, text: string, mode: number): boolean {
  const temp = writeTemp(target, text, mode);
  try {
    linkSync(temp, target);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    removeIfPresent(temp);
  }
}

function replaceAtomically(target: string, text: string, mode: number): void {
  const temp = writeTemp(target, text, mode);
  try {
    renameSync(temp, target);
  } catch (error) {
    removeIfPresent(temp);
    throw error;
  }
}

/** Writes and fsyncs a fresh temp file beside `target`, so a power cut cannot leave it empty. */
function writeTemp(target: string, text: string, mode: number): string {
  const temp = `${target}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(temp, "wx", mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temp;
}

function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function io<T>(path: string, what: string, action: () => T): T {
  try {
    return action();
  } catch (error) {
    if (error instanceof StateLockError) throw error;
    throw ioError(path, `cannot ${what} the lock file ${path}`, error);
  }
}

function ioError(path: string, what: string, cause: unknown): StateLockError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new StateLockError("io", path, `${what}: ${detail}`, undefined, cause);
}

/**
 * What the lock file at `path` says and whether its owner still runs (for a process that looks
 * for a lock's owner rather than taking the lock); undefined when there is none or it is not a
 * nexo lock record.
 */
export function inspectLockFile(
  path: string,
): { record: LockRecord; state: "alive" | "dead" | "unknown" } | undefined {
  let seen: ReadLock;
  try {
    seen = readLockFile(path);
  } catch {
    return undefined;
  }
  if (seen === undefined || "problem" in seen) return undefined;
  return { record: seen.record, state: judgeOwner(seen.record, currentProcessIdentity()).state };
}
