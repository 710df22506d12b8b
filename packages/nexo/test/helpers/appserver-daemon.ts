/**
 * `nexo start` serving the AppServer (the config directory's appserver.yaml), as the daemon-door
 * tests run it: the built CLI with a clean environment that carries only the token the config
 * interpolates (`${MY_TOKEN}`), resolved once the daemon's log announces where it listens.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { CLI_PATH } from "./cli.js";
import { SLOW_MACHINE_INIT_MS } from "./daemon-dir.js";

export interface AppServerDaemon {
  child: ChildProcessWithoutNullStreams;
  /** The AppServer's ws:// URL from the "AppServer listening" log line. */
  url: Promise<string>;
  /** The exit code and when it came. */
  exited: Promise<{ code: number | null; at: number }>;
  /** Everything the daemon wrote to stderr so far. */
  stderr: () => string;
}

/** Starts `nexo start --config dir` with `MY_TOKEN=token` in its environment. */
export function startAppServerDaemon(dir: string, token: string): AppServerDaemon {
  const child = spawn(process.execPath, [CLI_PATH, "start", "--config", dir], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NEXO_LOG: "info",
      NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS,
      MY_TOKEN: token,
    },
    stdio: ["ignore", "pipe", "pipe"],
  }) as unknown as ChildProcessWithoutNullStreams;
  let stderr = "";
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.on("close", (code) => resolve({ code, at: Date.now() })),
  );
  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no AppServer line:\n${stderr}`)), 45_000);
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      for (const line of stderr.split("\n")) {
        if (!line.startsWith("{")) continue;
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === "AppServer listening" && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
        }
      }
    });
    // A daemon that exits first (a config it refuses) settles the URL now: the 45 s timer left
    // pending would keep the test file's process alive that long after its tests.
    child.on("close", () => {
      clearTimeout(timer);
      reject(new Error(`nexo start exited:\n${stderr}`));
    });
  });
  return { child, url, exited, stderr: () => stderr };
}
