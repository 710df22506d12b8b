/**
 * `nexo config validate DIR`: reads a config directory exactly as `nexo start` will (every file,
 * `${VAR}` from this shell's environment, the plugins' manifests, the checks across files) and
 * prints every problem with its file, line, column and key. Exits 1 when the directory cannot be
 * used, 0 otherwise (warnings alone do not fail it).
 */
import type { Command } from "commander";

export function registerConfig(program: Command, env: NodeJS.ProcessEnv): void {
  const command = program.command("config").description("work with a nexo config directory");

  command
    .command("validate")
    .description("check a config directory: every file, every key, and the names files share")
    .argument("<dir>", "the config directory (holding agents.yaml)")
    .option("--json", "print the report as JSON")
    .action(async (dir: string, options: { json?: boolean }) => {
      process.exitCode = await validate(dir, options.json === true, env);
    });
}

async function validate(dir: string, json: boolean, env: NodeJS.ProcessEnv): Promise<number> {
  const { inspectDaemonConfig } = await import("../daemon/config/load.js");
  const { formatWarning, summarizeConfig } = await import("../daemon/config/report.js");
  const { formatIssue } = await import("../config/index.js");
  const report = await inspectDaemonConfig(dir, { env });
  const ok = report.config !== undefined;
  if (json) {
    const output = {
      ok,
      dir: report.dir,
      files: report.files,
      issues: report.issues,
      warnings: report.warnings,
      ...(report.config === undefined ? {} : { summary: summarizeConfig(report.config) }),
    };
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
    return ok ? 0 : 1;
  }
  const lines = [...report.issues.map(formatIssue), ...report.warnings.map(formatWarning)];
  const verdict =
    report.config === undefined
      ? `config ${dir}: ${report.issues.length} problem${report.issues.length === 1 ? "" : "s"}, not usable`
      : `config ${dir}: valid (${summarizeConfig(report.config)})`;
  process.stdout.write(`${[...lines, ...(lines.length > 0 ? [""] : []), verdict].join("\n")}\n`);
  return ok ? 0 : 1;
}
