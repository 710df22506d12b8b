/**
 * Who may use the console: the holder of its login token. The token is generated once, kept in
 * the console's state directory (0600) and compared in constant time; a login opens a session —
 * an HttpOnly, SameSite=Strict cookie — that carries its own CSRF token, which every mutating
 * request must echo in a header.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { admin, microapp } from "@nexo/wire/schemas";

export const SESSION_COOKIE = "nexo_console_session";
export const CSRF_HEADER = "x-nexo-csrf";
const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Failed logins allowed per minute before the console answers 429 (a guessing brake). */
const FAILED_LOGINS_PER_MINUTE = 20;

/** Reads the login token, creating it (256 random bits, mode 0600) on the first start. */
export function loadLoginToken(stateDir: string): string {
  const path = join(stateDir, microapp.CONSOLE_TOKEN_FILE);
  try {
    writeFileSync(path, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  // A copy restored with looser permissions is tightened rather than trusted as it is.
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const token = readFileSync(path, "utf8").trim();
  if (token.length < 32) throw new Error(`${path} holds no usable token (delete it to get a new one)`);
  return token;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

export interface Session {
  id: string;
  csrf: string;
  expiresAtMs: number;
}

export class LoginGate {
  private readonly sessions = new Map<string, Session>();
  private readonly tokenDigest: Buffer;
  private failures: number[] = [];
  /** The operator identity stamped on takeovers and resolutions (the token's public hash). */
  readonly operatorHash: string;

  constructor(token: string) {
    this.tokenDigest = digest(token);
    this.operatorHash = admin.tokenHash(token);
  }

  /**
   * A session for the right token; "refused" for a wrong one; "throttled" after too many wrong
   * ones in the last minute. Both sides are hashed first so the comparison's time says nothing
   * about the token, whatever the candidate's length.
   */
  login(candidate: unknown, now = Date.now()): Session | "refused" | "throttled" {
    this.failures = this.failures.filter((at) => now - at < 60_000);
    if (this.failures.length >= FAILED_LOGINS_PER_MINUTE) return "throttled";
    if (typeof candidate !== "string" || !timingSafeEqual(digest(candidate), this.tokenDigest)) {
      this.failures.push(now);
      return "refused";
    }
    const session: Session = {
      id: randomBytes(32).toString("base64url"),
      csrf: randomBytes(32).toString("base64url"),
      expiresAtMs: now + SESSION_TTL_MS,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The session a cookie header names, if it is live. */
  session(cookieHeader: string | undefined, now = Date.now()): Session | undefined {
    const id = readCookie(cookieHeader, SESSION_COOKIE);
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (session === undefined) return undefined;
    if (session.expiresAtMs <= now) {
      this.sessions.delete(id);
      return undefined;
    }
    return session;
  }

  /** Whether a request's CSRF header matches its session's token (constant time). */
  csrfMatches(session: Session, header: string | string[] | undefined): boolean {
    return typeof header === "string" && timingSafeEqual(digest(header), digest(session.csrf));
  }

  logout(session: Session): void {
    this.sessions.delete(session.id);
  }
}

export function sessionCookie(session: Session): string {
  const maxAge = Math.max(0, Math.floor((session.expiresAtMs - Date.now()) / 1000));
  return `${SESSION_COOKIE}=${session.id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
}

export const CLEARED_SESSION_COOKIE = `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;

function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
