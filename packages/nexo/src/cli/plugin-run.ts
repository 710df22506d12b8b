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
import * as plugin from "@nexo/wire/schemas/plugin";
import { ConfigError } from "../config/errors.js";
import { checkPlugin } from "../extensions/plugins/check.js";
import { PluginHost } from "../extensions/plugins/host.js";
import { loadPluginManifest } from "../extensions/plugins/manifest.js";
import { invokePluginTool } from "../extensions/plugins/tool.js";
import { cliLogger, describeFailure, formatCheckReport } from "./extension-cli.js";

/** `nexo plugin check`: prints the report (or JSON); returns the exit code. */
export async function runCheck(
  target: string,
  options: { json?: boolean; env: Record<string, string> },
): Promise<number> {
  const report = await checkPlugin(target, { operatorEnv: options.env, logger: cliLogger("plugin-cli") });
  process.stdout.write(
    options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatCheckReport(report, "plugin")}\n`,
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
    logger: cliLogger("plugin-cli"),
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
