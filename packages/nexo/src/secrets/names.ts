/**
 * Which environment variables hold secrets.
 *
 * One rule for the whole daemon: the names kept out of its environment after start-up
 * (capture.ts), out of the commands the model runs (the Bash tool) and registered for scrubbing.
 *
 * - `PASSWORD` or `PASSWD` anywhere in the name (`PGPASSWORD`, `DB_PASSWORD`);
 * - `API_KEY`/`APIKEY`, `TOKEN`, `SECRET`, `CREDENTIAL(S)`, `PRIVATE_KEY`, `ACCESS_KEY` as a
 *   whole word of the name, words being separated by `_` (`ANTHROPIC_API_KEY`, `NEXO_HTTP_TOKEN`,
 *   `AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`) — so `TOKENIZERS_PARALLELISM` is not one;
 * - the providers' keys nexo knows by name, whatever their shape.
 *
 * A secret hidden in a name this rule does not know (`DATABASE_URL=postgres://u:pw@…`) is not
 * caught; docs/configuration.md says so and how to pass such values.
 */

/** Provider keys nexo reads by name (the json-stream door) or that common tools use. */
export const PROVIDER_KEY_NAMES: readonly string[] = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "OPENAI_API_KEY",
  "DEEPSEEK_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "MISTRAL_API_KEY",
  "OPENROUTER_API_KEY",
  "GROQ_API_KEY",
  "MINIMAX_API_KEY",
];

const PASSWORD = /PASSW(?:OR)?D/i;
const SECRET_WORD = /(?:^|_)(?:API_?KEY|TOKEN|SECRET|CREDENTIALS?|PRIVATE_KEY|ACCESS_KEY)(?:_|$)/i;
const KNOWN = new Set(PROVIDER_KEY_NAMES);

/** Whether the variable `name` holds a secret by nexo's rule. */
export function isSecretName(name: string): boolean {
  return KNOWN.has(name) || PASSWORD.test(name) || SECRET_WORD.test(name);
}

/** A copy of `env` without the variables whose names mark them as secrets. */
export function withoutSecrets(env: Readonly<Record<string, string | undefined>>): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !isSecretName(name)));
}
