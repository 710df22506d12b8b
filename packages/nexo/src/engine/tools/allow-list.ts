/**
 * An agent's tool allow-list (agents.yaml `allowed_tools`): exact tool names, or a prefix ending
 * in one `*`. Kept apart from the registry so config validation can use it without loading tools.
 */
export function toolPatternMatcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.endsWith("*")));
  const prefixes = patterns.filter((p) => p.endsWith("*")).map((p) => p.slice(0, -1));
  return (name) => exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
}
