/**
 * Visitor identity. A visitor is a browser: the first time it opens the chat it is issued a token,
 * `<id>.<signature>`, which the widget keeps in localStorage and presents on every connection.
 * The id (128 random bits) names the visitor's conversation in nexo (the `contact`); the signature
 * is an HMAC-SHA256 of the id under a key generated once in the plugin's state directory (0600),
 * so a token cannot be forged or guessed, and survives a restart of the plugin. Only the holder of
 * the token can read or continue its conversation; the id alone (which appears in logs and
 * transcripts) is not enough.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "@nexo/channels-common";

/** A visitor token anywhere in a text: what the log redactor removes. */
export const VISITOR_TOKEN_ANYWHERE = /\b[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b/g;
const VISITOR_ID = /^[A-Za-z0-9_-]{22}$/;

export class VisitorKeys {
  private readonly key: Buffer;

  constructor(stateDir: string) {
    const file = join(stateDir, "visitor-signing.key");
    if (existsSync(file)) {
      this.key = Buffer.from(readFileSync(file, "utf8").trim(), "base64url");
      if (this.key.length < 32) throw new Error(`${file} holds no usable key (delete it to make a new one)`);
    } else {
      this.key = randomBytes(32);
      writeFileAtomic(file, `${this.key.toString("base64url")}\n`);
    }
  }

  /** A new visitor: `{id, token}`. */
  issue(): { id: string; token: string } {
    const id = randomBytes(16).toString("base64url");
    return { id, token: `${id}.${this.sign(id)}` };
  }

  /** The visitor id a token proves, or undefined for anything else (compared in constant time). */
  verify(token: unknown): string | undefined {
    if (typeof token !== "string") return undefined;
    const dot = token.indexOf(".");
    const id = token.slice(0, dot);
    if (dot < 0 || !VISITOR_ID.test(id)) return undefined;
    const given = Buffer.from(token.slice(dot + 1), "utf8");
    const expected = Buffer.from(this.sign(id), "utf8");
    return given.length === expected.length && timingSafeEqual(given, expected) ? id : undefined;
  }

  /** Whether `id` has the shape of a visitor id (for `channel.send_outbound`'s `to`). */
  static isId(id: string): boolean {
    return VISITOR_ID.test(id);
  }

  private sign(id: string): string {
    return createHmac("sha256", this.key).update(`nexo-webchat-visitor:${id}`).digest("base64url");
  }
}
