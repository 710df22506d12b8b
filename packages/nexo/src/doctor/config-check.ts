/**
 * `nexo doctor --config DIR`: the directory must load exactly as the daemon would load it (every
 * known file valid, `${...}` resolved, plugin manifests readable, the names files share existing).
 * Each problem is reported with its file, line, column and key path; warnings turn the check
 * yellow without failing it.
 */
import { formatIssue } from "../config/index.js";
import { inspectDaemonConfig } from "../daemon/config/load.js";
import { formatWarning, summarizeConfig } from "../daemon/config/report.js";
import type { Check } from "./checks.js";

const MAX_LISTED_ISSUES = 10;

export function configDirCheck(dir: string, env: NodeJS.ProcessEnv = process.env): Check {
  return {
    id: "config",
    title: `config directory ${dir}`,
    required: true,
    async run() {
      const report = await inspectDaemonConfig(dir, { env });
      const warnings = report.warnings.map(formatWarning);
      if (report.config === undefined) {
        const problems = [...report.issues.map(formatIssue), ...warnings];
        const shown = problems.slice(0, MAX_LISTED_ISSUES);
        const more = problems.length > shown.length ? `\n… and ${problems.length - shown.length} more` : "";
        return { status: "fail", detail: `${shown.join("\n")}${more}` };
      }
      const summary = summarizeConfig(report.config);
      if (warnings.length === 0) return { status: "ok", detail: summary };
      return { status: "warn", detail: [summary, ...warnings].join("\n") };
    },
  };
}
