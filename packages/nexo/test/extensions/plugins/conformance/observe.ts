/**
 * The host's observable state at one moment, in the scenario vocabulary that `expect` and
 * `wait_for` match against (docs/plugins.md lists every field).
 */

import { readChildReport, runsStarted } from "./child-report.js";
import type { ScenarioEnvironment } from "./environment.js";

export interface Observation {
  state: string;
  restarts: number;
  /** The incarnation of the running, handshaken child (1 = the first spawn), if any. */
  incarnation: number | undefined;
  server_version: string | undefined;
  /** Tools the running plugin advertised; `registered_tools`: those in the engine's ToolRegistry. */
  tools: string[];
  registered_tools: string[];
  channels: string[];
  providers: string[];
  vector_backends: string[];
  warnings: string[];
  error_code: string | undefined;
  error_message: string | undefined;
  exit: { code: number | null; signal: string | null; requested: boolean } | undefined;
  protocol_problems: Record<string, number>;
  bridge: Record<string, number> | undefined;
  published: Array<Record<string, unknown>>;
  /** Events the broker itself had to drop (its subscriber queues), which would hide the bridge's. */
  broker_dropped: number;
  service_calls: ScenarioEnvironment["serviceCalls"];
  child_runs: number;
  /** The newest spawn of the scripted child has played its whole script. */
  child_complete: boolean;
  stderr_tail: string[];
}

export function observe(env: ScenarioEnvironment): Observation {
  const id = env.scenario.manifest.plugin.id;
  const status = env.manager.status().find((entry) => entry.id === id);
  const host = env.manager.host(id);
  const hostStatus = host?.status();
  const report = readChildReport(env.reportPath);
  return {
    state: status?.state ?? "unknown",
    restarts: status?.restarts ?? 0,
    incarnation: host?.session?.incarnation,
    server_version: hostStatus?.serverVersion,
    tools: status?.tools ?? [],
    registered_tools: env.registries.tools.list().map((tool) => tool.name),
    channels: env.registries.channels.kinds(),
    providers: env.registries.providers.ids().filter((name) => name !== "scripted"),
    vector_backends: env.registries.vectors.names(),
    warnings: status?.warnings ?? [],
    error_code: status?.lastError?.code,
    error_message: status?.lastError?.message,
    exit: hostStatus?.lastExit,
    protocol_problems: hostStatus?.protocolProblems ?? {},
    bridge: status?.bridge ? { ...status.bridge } : undefined,
    published: env.published.map((event) => ({ ...event })),
    broker_dropped: env.broker.stats().dropped,
    service_calls: env.serviceCalls,
    child_runs: runsStarted(report),
    child_complete: report.some(
      (entry) => entry.run === runsStarted(report) - 1 && entry.event === "complete",
    ),
    stderr_tail: status?.stderrTail ?? [],
  };
}
