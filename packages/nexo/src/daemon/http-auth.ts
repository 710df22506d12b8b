/**
 * The bearer token of the health listener: how a presented token is compared, and which tokens
 * are accepted in the first place.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { MIN_HTTP_TOKEN_LENGTH } from "./config/daemon.js";

/**
 * Compares two secrets in time that depends on neither's content nor length. Both are hashed
 * first, so `timingSafeEqual` always sees two 32-byte buffers: comparing the raw strings would
 * need equal lengths, and returning early on a length mismatch would tell an attacker the length.
 */
export function constantTimeEqual(presented: string, expected: string): boolean {
  const a = createHash("sha256").update(presented, "utf8").digest();
  const b = createHash("sha256").update(expected, "utf8").digest();
  return timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), if any. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}

/** Why `token` cannot be used, or undefined when it can. */
export function tokenProblem(token: string): string | undefined {
  // Shorter tokens can be guessed over the network.
  if (token.length < MIN_HTTP_TOKEN_LENGTH) {
    return `it must be at least ${MIN_HTTP_TOKEN_LENGTH} characters long`;
  }
  // It travels in an HTTP header: whitespace would split it, control characters are illegal and
  // anything beyond ASCII arrives re-encoded (Node reads header bytes as Latin-1).
  if (!/^[\x21-\x7e]+$/.test(token)) return "it must be printable ASCII without spaces";
  return undefined;
}
