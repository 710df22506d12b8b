/**
 * How a config directory's verdict reads for humans, shared by `nexo config validate` and
 * `nexo doctor --config`: problems as `file:line:col: key: message`, warnings the same with a
 * `warning:` prefix, and a one-line summary of a valid config.
 */
import { formatIssue } from "../../config/index.js";
import type { DaemonConfig } from "./load.js";
import type { ConfigWarning } from "./sources.js";

export function formatWarning(warning: ConfigWarning): string {
  return `warning: ${formatIssue({ code: "schema", ...warning })}`;
}

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? "" : "s"}`;

/** `3 files read; 2 agents (1 active), 1 plugin, providers anthropic, scripted; broker local; http 127.0.0.1:7780` */
export function summarizeConfig(config: DaemonConfig): string {
  const active = config.agents.filter((agent) => agent.active).length;
  const plugins = config.plugins.plugins.filter((entry) => entry.enabled).length;
  const providers = [...new Set(["scripted", ...Object.keys(config.llm.providers)])].sort();
  const http = config.daemon.http.enabled ? `http ${config.daemon.http.bind}` : "http off";
  return [
    `${plural(config.files.length, "file")} read`,
    `${plural(config.agents.length, "agent")} (${active} active), ${plural(plugins, "plugin")}${
      config.microapps.length === 0 ? "" : `, ${plural(config.microapps.length, "microapp")}`
    }, providers ${providers.join(", ")}`,
    `broker ${config.broker.type}`,
    http,
  ].join("; ");
}
