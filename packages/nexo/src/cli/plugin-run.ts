/**
 * `nexo plugin check` and `nexo plugin call`: the plugin author's loop. `check` runs a plugin
 * through everything the daemon would do with it and says what is wrong; `call` runs one tool
 * through the same validation the daemon applies and prints the result or the typed error.
 * Both exit non-zero on any failure, so they fit in a plugin's CI.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcError } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import { ConfigError } from "../config/errors.js";
import { type CheckStep, checkPlugin, type PluginCheckReport } from "../extensions/plugins/check.js";
import { errorCodeOf } from "../extensions/plugins/errors.js";
import { PluginHost } from "../extensions/plugins/host.js";
import { loadPluginManifest } from "../extensions/plugins/manifest.js";
import { invokePluginTool } from "../extensions/plugins/tool.js";
import { createLogger } from "../log.js";

const MARK: Record<CheckStep["status"], string> = { ok: "ok", warn: "WARN", fail: "FAIL" };

/** The CLI's own log lines stay quiet unless NEXO_LOG asks for more; stdout is for the report. */
function cliLogger() {
  return createLogger({ level: process.env.NEXO_LOG || "warn", base: { component: "plugin-cli" } });
}

export function formatCheckReport(report: PluginCheckReport): string {
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
    lines.push("", "last stderr lines of the plugin:", ...report.stderrTail.map((line) => `  ${line}`));
  }
  const warnings = report.steps.filter((step) => step.status === "warn").length;
  const verdict = report.ok ? "passed" : "FAILED";
  lines.push(
    "",
    `plugin check: ${verdict}${warnings > 0 ? ` (${warnings} warning${warnings === 1 ? "" : "s"})` : ""}`,
  );
  return lines.join("\n");
}

/** `nexo plugin check`: prints the report (or JSON); returns the exit code. */
export async function runCheck(
  target: string,
  options: { json?: boolean; env: Record<string, string> },
): Promise<number> {
  const report = await checkPlugin(target, { operatorEnv: options.env, logger: cliLogger() });
  process.stdout.write(
    options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatCheckReport(report)}\n`,
  );
  return report.ok ? 0 : 1;
}

export async function callTool(
  target: string,
  tool: string,
  rawArgs: string,
  options: { agent?: string; json?: boolean; env: Record<string, string> },
): Promise<number> {
  let args: unknown;
  try {
    args = JSON.parse(rawArgs);
  } catch (error) {
    process.stderr.write(`nexo plugin call: the arguments are not JSON: ${(error as Error).message}\n`);
    return 2;
  }
  let manifest: Awaited<ReturnType<typeof loadPluginManifest>>;
  try {
    manifest = await loadPluginManifest(target);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`nexo plugin call: invalid manifest\n${error.message}\n`);
    return 1;
  }
  const stateDir = mkdtempSync(join(tmpdir(), `nexo-plugin-call-${manifest.id}-`));
  const host = new PluginHost({
    manifest,
    stateDir,
    operatorEnv: options.env,
    restart: { respawn: false },
    logger: cliLogger(),
  });
  try {
    await host.start();
    const result = await invokePluginTool(host, tool, args, { agentId: options.agent ?? null });
    const conventional = plugin.ToolResponseSchema.safeParse(result);
    if (options.json || !conventional.success) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } else {
      const text = conventional.data.content.map((block) => block.text ?? JSON.stringify(block)).join("\n");
      process.stdout.write(`${text}\n`);
    }
    // The tool ran but reported a failure: still a failure for a script.
    return conventional.success && conventional.data.is_error ? 1 : 0;
  } catch (error) {
    process.stderr.write(`${describeFailure(error, options.json === true)}\n`);
    const tail = host.status().stderrTail;
    if (tail.length > 0 && !(error instanceof RpcError)) {
      process.stderr.write(
        `last stderr lines of the plugin:\n${tail.map((line) => `  ${line}`).join("\n")}\n`,
      );
    }
    return 1;
  } finally {
    await host.stop("nexo plugin call");
    rmSync(stateDir, { recursive: true, force: true });
  }
}

function describeFailure(error: unknown, json: boolean): string {
  if (error instanceof RpcError) {
    if (json) return JSON.stringify({ error: error.toJSON() }, null, 2);
    const data = error.data === undefined ? "" : `\ndata: ${JSON.stringify(error.data)}`;
    return `error ${error.code} (${error.name}): ${error.message}${data}`;
  }
  const code = errorCodeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  return json ? JSON.stringify({ error: { code, message } }, null, 2) : `error ${code}: ${message}`;
}
