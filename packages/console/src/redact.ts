/**
 * The one choke point between the daemon's answers and the browser: every admin result and every
 * live event passes through `redactForBrowser` before it is sent. The daemon already redacts
 * transcripts and never returns stored keys; this catches what an operator wrote by hand into a
 * config file (a literal token in an MCP server's env or headers, a key in a provider entry).
 * A `${NAME}` reference names a secret without holding it and is kept.
 */
export const REDACTED = "[redacted]";

/** Keys whose string values are secrets: `token`, `api_key`, `GITHUB_TOKEN`, `authorization`, … */
const SECRET_KEY =
  /(^|[_-])(token|secret|password|passwd|api[_-]?key|authorization|bearer|cookie|private[_-]?key)$/i;
/** Maps whose every value may be a secret (environment variables, HTTP headers). */
const SECRET_MAPS = new Set(["env", "headers"]);
const REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$/;

function hide(value: unknown): unknown {
  return typeof value === "string" && !REFERENCE.test(value) ? REDACTED : value;
}

export function redactForBrowser(value: unknown, key?: string): unknown {
  if (Array.isArray(value)) return value.map((item) => redactForBrowser(item));
  if (value === null || typeof value !== "object") {
    return key !== undefined && SECRET_KEY.test(key) ? hide(value) : value;
  }
  const out: Record<string, unknown> = {};
  const secretMap = key !== undefined && SECRET_MAPS.has(key);
  for (const [k, v] of Object.entries(value)) {
    out[k] = secretMap && typeof v === "string" ? hide(v) : redactForBrowser(v, k);
  }
  return out;
}
