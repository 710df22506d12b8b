#!/usr/bin/env node
// `npm start`: runs the daemon on examples/quickstart and opens a terminal chat into its loopback
// channel. The daemon's logs go to .nexo-state/quickstart/daemon.log so the chat keeps the
// terminal. With ANTHROPIC_API_KEY or OPENAI_API_KEY set the agent uses that provider; without,
// nexo's offline scripted demo model. Ctrl-D or /quit ends the chat and stops the daemon.
import { spawn } from "node:child_process";
import { mkdirSync, openSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const stateDir = join(root, ".nexo-state", "quickstart");
mkdirSync(stateDir, { recursive: true });
const endpointFile = join(stateDir, "plugins", "loopback", "endpoint.json");
rmSync(endpointFile, { force: true }); // never talk to a previous run's address

const env = { ...process.env, NEXO_STATE_DIR: stateDir };
if (!env.NEXO_QUICKSTART_PROVIDER) {
  if (env.ANTHROPIC_API_KEY) {
    env.NEXO_QUICKSTART_PROVIDER = "anthropic";
    env.NEXO_QUICKSTART_MODEL ??= "claude-sonnet-4-5";
  } else if (env.OPENAI_API_KEY) {
    env.NEXO_QUICKSTART_PROVIDER = "openai";
    env.NEXO_QUICKSTART_MODEL ??= "gpt-4o";
  }
}
const provider = env.NEXO_QUICKSTART_PROVIDER ?? "scripted (offline demo model)";
const log = join(stateDir, "daemon.log");
process.stdout.write(`nexo quickstart — provider: ${provider}; daemon log: ${log}\n`);

const logFd = openSync(log, "a");
const daemon = spawn(
  process.execPath,
  [join(root, "packages/nexo/bin/nexo.js"), "start", "--config", join(root, "examples/quickstart")],
  { env, stdio: ["ignore", logFd, logFd] },
);
let daemonExited = false;
daemon.on("exit", (code, signal) => {
  daemonExited = true;
  if (!stopping) {
    process.stderr.write(`the daemon stopped (${signal ?? `exit ${code}`}); see ${log}\n`);
    chat?.kill("SIGTERM");
    process.exitCode = 1;
  }
});

let stopping = false;
const chat = spawn(
  process.execPath,
  ["dist/chat.js", "--endpoint-file", endpointFile, "--from", "you", "--wait-secs", "60"],
  { cwd: join(root, "examples/plugins/loopback-channel"), stdio: "inherit", env: process.env },
);
chat.on("exit", (code) => {
  stopping = true;
  if (daemonExited) return process.exit(code ?? 0);
  daemon.once("exit", () => process.exit(code ?? 0));
  daemon.kill("SIGTERM");
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    stopping = true;
    chat.kill(signal);
    daemon.kill("SIGTERM");
  });
}
