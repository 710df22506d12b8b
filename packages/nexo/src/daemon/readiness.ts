/**
 * What /readyz reports: the daemon is ready when the broker can carry events, every enabled
 * plugin is running (handshake done) and every MCP server of mcp.yaml is connected. Each check is read live from the part that owns the state,
 * never cached, so a plugin in backoff or a NATS disconnect shows at the next probe.
 */
import type { BrokerReadiness } from "../broker/types.js";
import type { McpServerStatus } from "../extensions/mcp/index.js";
import type { PluginStatus } from "../extensions/plugins/manager.js";

export interface ReadinessCheck {
  /** `broker`, `plugin:<id>`, or a name the daemon chose for an extra check. */
  name: string;
  ready: boolean;
  /** For humans: why it is (not) ready. */
  detail: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: ReadinessCheck[];
}

export type ReadinessSource = () => ReadinessReport;

export interface ReadinessSources {
  broker: { readiness(): BrokerReadiness };
  /** The plugin manager; every plugin it was given counts as enabled. */
  plugins?: { status(): PluginStatus[] };
  /** The daemon's MCP servers (mcp.yaml), each one a check `mcp:<name>`. */
  mcp?: { statuses(): McpServerStatus[] };
  /** Further checks, e.g. "boot finished" while the daemon is still starting. */
  extra?: ReadonlyArray<() => ReadinessCheck>;
}

export function daemonReadiness(sources: ReadinessSources): ReadinessSource {
  return () => {
    const broker = sources.broker.readiness();
    const checks: ReadinessCheck[] = [
      { name: "broker", ready: broker.ready, detail: `${broker.state}: ${broker.detail}` },
    ];
    for (const plugin of sources.plugins?.status() ?? []) checks.push(pluginCheck(plugin));
    for (const server of sources.mcp?.statuses() ?? []) checks.push(mcpCheck(server));
    for (const check of sources.extra ?? []) checks.push(check());
    return { ready: checks.every((check) => check.ready), checks };
  };
}

function pluginCheck(plugin: PluginStatus): ReadinessCheck {
  const ready = plugin.state === "running";
  const why = ready || plugin.lastError === undefined ? "" : ` (${plugin.lastError.message})`;
  return { name: `plugin:${plugin.id}`, ready, detail: `${plugin.state}${why}` };
}

function mcpCheck(server: McpServerStatus): ReadinessCheck {
  const ready = server.state === "connected";
  const tools = ready ? ` (${server.tools.length} tools)` : "";
  const why = server.error === undefined || ready ? "" : ` (${server.error})`;
  return { name: `mcp:${server.name}`, ready, detail: `${server.state}${tools}${why}` };
}
