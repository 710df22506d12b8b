/**
 * Credentials registered through nexo's credential persister (`credentials/register`), one file per
 * instance: $NEXO_STATE_DIR/credentials/<instance or _default>.json, 0600, replaced whole. What a
 * file holds is the channel's own (a token, a pair of tokens, a mailbox login); this class keeps the
 * file naming, the atomic write and the rule that a missing, unreadable or ill-formed file is "no
 * registered credential" (the channel then falls back to its environment).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "./files.js";

/** How one channel's credential is kept: read from a saved object (undefined if unusable), and written. */
export interface CredentialCodec<T> {
  read(saved: Record<string, unknown>): T | undefined;
  write(value: T): Record<string, unknown>;
}

/** An instance name a file may be named after: letters, digits, `_` and `-`. */
const INSTANCE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export class CredentialFiles<T> {
  constructor(
    private readonly stateDir: string,
    private readonly codec: CredentialCodec<T>,
  ) {}

  /** The registered credential of `instance` (null/undefined: the default instance), if any. */
  get(instance: string | null | undefined): T | undefined {
    let saved: unknown;
    try {
      saved = JSON.parse(readFileSync(this.file(instance), "utf8"));
    } catch {
      return undefined;
    }
    if (typeof saved !== "object" || saved === null || Array.isArray(saved)) return undefined;
    return this.codec.read(saved as Record<string, unknown>);
  }

  save(instance: string | null | undefined, value: T): void {
    writeFileAtomic(
      this.file(instance),
      `${JSON.stringify({ ...this.codec.write(value), saved_at: new Date().toISOString() })}\n`,
    );
  }

  private file(instance: string | null | undefined): string {
    const name = instance ?? "_default";
    if (!INSTANCE_NAME.test(name)) throw new Error(`invalid instance name "${name}"`);
    return join(this.stateDir, "credentials", `${name}.json`);
  }
}
