/**
 * Keeps credentials out of the logs. A plugin's stderr is the daemon's log, and a token can reach
 * it through many doors: an error message with a request URL, a library's debug line, a stack
 * trace printed by the SDK. So redaction sits at the one place every line passes —
 * `process.stderr.write` — and replaces every registered secret, and anything matching the
 * channel's secret patterns, before a byte is written.
 */
export const REDACTED = "[REDACTED]";

export class Redactor {
  private readonly secrets = new Set<string>();

  constructor(private readonly patterns: readonly RegExp[] = []) {
    for (const pattern of patterns) {
      if (!pattern.global) throw new Error(`redaction pattern ${pattern} needs the g flag`);
    }
  }

  /** Registers a secret (ignored when shorter than 6 characters: it would redact ordinary words). */
  add(secret: string | undefined): void {
    if (secret !== undefined && secret.length >= 6) this.secrets.add(secret);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    for (const pattern of this.patterns) out = out.replace(pattern, REDACTED);
    return out;
  }
}

let installed: Redactor | undefined;

/**
 * Routes every write to process.stderr through `redactor`. Idempotent per process: a second call
 * replaces the redactor, it does not wrap the stream twice.
 */
export function redactStderr(redactor: Redactor): void {
  const first = installed === undefined;
  installed = redactor;
  if (!first) return;
  const write = process.stderr.write.bind(process.stderr) as (...args: unknown[]) => boolean;
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
    return write(installed!.redact(text), ...rest);
  }) as typeof process.stderr.write;
}
