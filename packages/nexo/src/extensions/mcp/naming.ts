/**
 * How an MCP server's tools are named for the model: `mcp__<server>__<tool>`.
 *
 * The name has to satisfy both Anthropic and OpenAI (`^[a-zA-Z0-9_-]{1,64}$`) and must never be
 * the same for two different (server, tool) pairs.
 *
 * - The server part cannot be confused with the tool part: a server name contains no `__` and does
 *   not end in `_` (config.ts enforces both), so the first `__` after the `mcp__` prefix is always
 *   the separator, whatever the tool name holds.
 * - Tool names are the server's business and may hold characters providers refuse (`files.read`)
 *   or be too long for what is left of the 64 characters. Such names are cleaned (every other
 *   character becomes `_`) and, when that makes them collide with another tool of the same server
 *   or they had to be cut, given a suffix from a hash of the original name. A name that needed no
 *   change always keeps its plain form, so renaming never depends on the order tools are listed in.
 *
 * The mapping is not meant to be reversed from the string: the manager keeps, per server, the
 * original name behind each namespaced one.
 */
import { createHash } from "node:crypto";

export const MCP_TOOL_PREFIX = "mcp__";
export const MCP_NAME_SEPARATOR = "__";
/** The longest tool name Anthropic and OpenAI both accept. */
export const MAX_TOOL_NAME_LENGTH = 64;

const ALLOWED = /[A-Za-z0-9_-]/;
const HASH_LENGTH = 8;

/** Replaces every character a provider would refuse with `_`. */
export function cleanToolName(name: string): string {
  let out = "";
  for (const char of name) out += ALLOWED.test(char) ? char : "_";
  return out;
}

function hashSuffix(original: string): string {
  return createHash("sha256").update(original, "utf8").digest("hex").slice(0, HASH_LENGTH);
}

/**
 * Namespaced names for one server's tools, keyed by the namespaced name, valued by the tool's
 * original name. `skipped` lists original names that could not be given a unique name (only a hash
 * collision can cause that); the caller reports them.
 */
export function namespaceTools(
  server: string,
  toolNames: readonly string[],
): { names: Map<string, string>; skipped: string[] } {
  const prefix = `${MCP_TOOL_PREFIX}${server}${MCP_NAME_SEPARATOR}`;
  const room = MAX_TOOL_NAME_LENGTH - prefix.length;
  if (room < HASH_LENGTH + 2) throw new RangeError(`server name "${server}" leaves no room for tool names`);

  const unique = [...new Set(toolNames)];
  const byCleaned = new Map<string, string[]>();
  for (const original of unique) {
    const cleaned = cleanToolName(original);
    const group = byCleaned.get(cleaned);
    if (group === undefined) byCleaned.set(cleaned, [original]);
    else group.push(original);
  }

  const names = new Map<string, string>();
  const skipped: string[] = [];
  const hashed: string[] = [];
  for (const [cleaned, originals] of byCleaned) {
    const fits = cleaned.length > 0 && cleaned.length <= room;
    // Plain form goes to the one name that needed no cleaning, or to a name alone in its group.
    const plain =
      originals.find((original) => original === cleaned) ??
      (originals.length === 1 ? originals[0] : undefined);
    for (const original of originals) {
      if (fits && original === plain) names.set(`${prefix}${cleaned}`, original);
      else hashed.push(original);
    }
  }
  for (const original of hashed) {
    const head = cleanToolName(original).slice(0, room - HASH_LENGTH - 1);
    const name = `${prefix}${head}${head === "" ? "" : "_"}${hashSuffix(original)}`;
    if (names.has(name)) skipped.push(original);
    else names.set(name, original);
  }
  return { names, skipped };
}

/** The server a namespaced MCP tool name belongs to, or undefined for other names. */
export function serverOfToolName(name: string): string | undefined {
  if (!name.startsWith(MCP_TOOL_PREFIX)) return undefined;
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  const end = rest.indexOf(MCP_NAME_SEPARATOR);
  return end > 0 ? rest.slice(0, end) : undefined;
}
