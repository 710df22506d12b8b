/**
 * Runs the real `nexo` executable — packages/nexo/bin/nexo.js, which loads the bundled CLI — as a
 * child process. `npm test` builds before testing; when running single files after changing the
 * sources, run `npm run build` first.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const CLI_PATH = fileURLToPath(new URL("../../bin/nexo.js", import.meta.url));
const BUNDLE_PATH = fileURLToPath(new URL("../../bundle/main.js", import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number; cwd?: string } = {},
): Promise<CliResult> {
  if (!existsSync(BUNDLE_PATH)) throw new Error(`${BUNDLE_PATH} is missing: run npm run build first`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}
