/**
 * What the plugin and microapp author commands share: the check report printed one aligned line
 * per step, a failed call described (typed RPC errors with their code and data), and their quiet
 * logger.
 */
import { RpcError } from "@nexo/wire";
import type { CheckReport, CheckStatus } from "../extensions/check-report.js";
import { errorCodeOf } from "../extensions/plugins/errors.js";
import { createLogger } from "../log.js";

const MARK: Record<CheckStatus, string> = { ok: "ok", warn: "WARN", fail: "FAIL" };

/** `what` names the child in the verdict and the stderr heading: "plugin", "microapp". */
export function formatCheckReport(report: CheckReport, what: string): string {
  const rows = report.steps.map((step) => [MARK[step.status], step.step, step.detail]);
  const widths = [0, 1].map((col) => Math.max(...rows.map((row) => row[col]!.length)));
  const lines = rows.map(([mark, step, detail]) => {
    const [first, ...rest] = detail!.split("\n");
    const indent = " ".repeat(widths[0]! + widths[1]! + 4);
    return [
      `${mark!.padEnd(widths[0]!)}  ${step!.padEnd(widths[1]!)}  ${first}`,
      ...rest.map((line) => indent + line),
    ].join("\n");
  });
  if (report.stderrTail.length > 0) {
    lines.push("", `last stderr lines of the ${what}:`, ...report.stderrTail.map((line) => `  ${line}`));
  }
  const warnings = report.steps.filter((step) => step.status === "warn").length;
  const verdict = report.ok ? "passed" : "FAILED";
  lines.push(
    "",
    `${what} check: ${verdict}${warnings > 0 ? ` (${warnings} warning${warnings === 1 ? "" : "s"})` : ""}`,
  );
  return lines.join("\n");
}

/** A failed call for stderr: the RPC error with its code and data, or the typed error's code. */
export function describeFailure(error: unknown, json: boolean): string {
  if (error instanceof RpcError) {
    if (json) return JSON.stringify({ error: error.toJSON() }, null, 2);
    const data = error.data === undefined ? "" : `\ndata: ${JSON.stringify(error.data)}`;
    return `error ${error.code} (${error.name}): ${error.message}${data}`;
  }
  const code = errorCodeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  return json ? JSON.stringify({ error: { code, message } }, null, 2) : `error ${code}: ${message}`;
}

/** The CLI's own log lines stay quiet unless NEXO_LOG asks for more; stdout is for the report. */
export function cliLogger(component: string) {
  return createLogger({ level: process.env.NEXO_LOG || "warn", base: { component } });
}
