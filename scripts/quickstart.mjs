#!/usr/bin/env node
// `npm start`: runs the daemon on examples/quickstart and opens a terminal chat into its loopback
// channel. The daemon's logs go to .nexo-state/quickstart/daemon.log so the chat keeps the
// terminal. With ANTHROPIC_API_KEY or OPENAI_API_KEY set the agent uses that provider; without,
// nexo's offline scripted demo model. Ctrl-D or /quit ends the chat and stops the daemon.
//
// A second `npm start` while one runs fails: the daemon refuses the locked state dir, and this
// script prints the daemon's reason and exits 1. Nothing of the first run is touched — in
// particular its endpoint file stays; the chat ignores an endpoint written before this run began
// instead of this script deleting it (issue 14.8). NEXO_STATE_DIR overrides the state dir.
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const stateDir = process.env.NEXO_STATE_DIR || join(root, ".nexo-state", "quickstart");
mkdirSync(stateDir, { recursive: true });
const endpointFile = join(stateDir, "plugins", "loopback", "endpoint.json");
const startedAt = Date.now();

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
const logStart = statSync(log).size;
const daemon = spawn(
  process.execPath,
  [join(root, "packages/nexo/bin/nexo.js"), "start", "--config", join(root, "examples/quickstart")],
  { env, stdio: ["ignore", logFd, logFd] },
);
let daemonExited = false;
let daemonFailed = false;
daemon.on("exit", (code, signal) => {
  daemonExited = true;
  if (!stopping) {
    daemonFailed = true;
    const reasons = daemonReasons();
    process.stderr.write(
      `the daemon stopped (${signal ?? `exit ${code}`})${reasons.length > 0 ? `:\n  ${reasons.join("\n  ")}` : ""}\nfull log: ${log}\n`,
    );
    chat?.kill("SIGTERM");
  }
});

/** What the daemon said on its way out during this run: its own `nexo start:` lines (the human summary). */
function daemonReasons() {
  const fd = openSync(log, "r");
  try {
    const length = Math.max(0, statSync(log).size - logStart);
    const buffer = Buffer.alloc(Math.min(length, 1 << 20));
    readSync(fd, buffer, 0, buffer.length, Math.max(logStart, logStart + length - buffer.length));
    return buffer
      .toString("utf8")
      .split("\n")
      .filter((line) => line.startsWith("nexo start:"))
      .slice(-5);
  } finally {
    closeSync(fd);
  }
}

let stopping = false;
const chat = spawn(
  process.execPath,
  [
    "dist/chat.js",
    "--endpoint-file",
    endpointFile,
    "--endpoint-not-before",
    String(startedAt),
    "--from",
    "you",
    "--wait-secs",
    "60",
  ],
  { cwd: join(root, "examples/plugins/loopback-channel"), stdio: "inherit", env: process.env },
);
chat.on("exit", (code) => {
  stopping = true;
  // A chat ended because the daemon failed must not turn the daemon's failure into exit 0.
  const exitCode = daemonFailed ? 1 : (code ?? 0);
  if (daemonExited) return process.exit(exitCode);
  daemon.once("exit", () => process.exit(exitCode));
  daemon.kill("SIGTERM");
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    stopping = true;
    chat.kill(signal);
    daemon.kill("SIGTERM");
  });
}
