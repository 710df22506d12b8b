/**
 * The secret values this process knows: the ones captured from its environment at start-up
 * (capture.ts) and the API keys of the providers it configured. The redactor (store/redact.ts)
 * replaces each of them wherever it appears — in provider errors, logs' messages, transcripts —
 * whatever its shape, so a key that looks like nothing in particular is still caught.
 *
 * Values shorter than `MIN_SECRET_LENGTH` are not remembered: replacing every "1234" in every
 * text would mangle far more than it protects (the shape rules of the redactor still apply).
 * At most `MAX_SECRETS` values are kept; further ones are refused (`rememberSecret` returns
 * false) and only the shape rules cover them.
 */

export const MIN_SECRET_LENGTH = 8;
export const MAX_SECRETS = 1000;

const values = new Set<string>();
let matcher: RegExp | undefined;

/** Remembers `value` as a secret to scrub. Returns whether it is (now) remembered. */
export function rememberSecret(value: string | undefined): boolean {
  if (value === undefined || value.length < MIN_SECRET_LENGTH) return false;
  if (values.has(value)) return true;
  if (values.size >= MAX_SECRETS) return false;
  values.add(value);
  matcher = undefined;
  return true;
}

/** How many secret values are remembered. */
export function knownSecretCount(): number {
  return values.size;
}

/**
 * A global regex matching any remembered value (longest first, so a key that contains another is
 * replaced whole), or undefined when none is remembered. Rebuilt only when the set changes.
 */
export function knownSecretsPattern(): RegExp | undefined {
  if (values.size === 0) return undefined;
  matcher ??= new RegExp(
    [...values]
      .sort((a, b) => b.length - a.length)
      .map((value) => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("|"),
    "g",
  );
  return matcher;
}

/** Forgets every value; for tests that need a clean slate. */
export function forgetSecretsForTesting(): void {
  values.clear();
  matcher = undefined;
}
