import type { Command } from "commander";
import { type CheckResult, defaultChecks, doctorPassed, runChecks } from "../doctor/checks.js";

const MARK: Record<CheckResult["status"], string> = { ok: "ok", warn: "WARN", fail: "FAIL" };

export function formatTable(results: CheckResult[]): string {
  const rows = results.map((r) => [MARK[r.status], r.title, r.detail]);
  const widths = [0, 1].map((col) => Math.max(...rows.map((row) => row[col]!.length)));
  return rows
    .map((row) => `${row[0]!.padEnd(widths[0]!)}  ${row[1]!.padEnd(widths[1]!)}  ${row[2]}`)
    .join("\n");
}

export function registerDoctor(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command("doctor")
    .description(
      "check this machine (Node.js, SQLite, bubblewrap, nats-server), inside a clone what npm test needs, and optionally a config dir",
    )
    .option("--config <dir>", "also validate this config directory")
    .option("--json", "print the results as JSON")
    .action(async (options: { config?: string; json?: boolean }) => {
      const checks = defaultChecks();
      // Inside a nexo clone, also tell the contributor what `npm test` needs from the system.
      const { findNexoClone, testDependenciesCheck } = await import("../doctor/test-deps-check.js");
      const clone = findNexoClone(process.cwd());
      if (clone !== undefined) checks.push(testDependenciesCheck(clone, env.PATH));
      if (options.config !== undefined) {
        const { configDirCheck } = await import("../doctor/config-check.js");
        checks.push(configDirCheck(options.config, env));
      }
      const results = await runChecks(checks);
      const passed = doctorPassed(results);
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ passed, checks: results }, null, 2)}\n`);
      } else {
        process.stdout.write(
          `${formatTable(results)}\n\n${passed ? "doctor: all required checks passed" : "doctor: a required check failed"}\n`,
        );
      }
      process.exitCode = passed ? 0 : 1;
    });
}
