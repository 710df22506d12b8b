/**
 * `nexo console url`: the operator console's login URL (packages/console, the first-party
 * microapp that serves nexo's web UI on loopback). console-url.ts does the work.
 */
import type { Command } from "commander";

export function registerConsole(program: Command): void {
  program
    .command("console")
    .description("the operator console, nexo's web UI (the `console` microapp)")
    .command("url")
    .description("print the console's login URL (the login token rides in its #fragment)")
    .option("--state-dir <dir>", "the daemon's state directory")
    .option("--config <dir>", "the daemon's config directory (its daemon.yaml says where the state is)")
    .option("--id <id>", "the console's extension id in extensions.yaml", "console")
    .option("--wait <secs>", "wait this long for the console to come up", (value: string) => Number(value), 0)
    .option("--json", "print {url, login_url, pid} as JSON")
    .action(async (options) => {
      const { runConsoleUrl } = await import("./console-url.js");
      process.exitCode = await runConsoleUrl(options);
    });
}
