/**
 * What every `nexo` process does first, however it was started (the ES module entry main.ts,
 * `nexo start`'s own entry daemon-main.ts, or a startup snapshot's entry, snapshot-start.ts): the
 * V8 flag below, then the launcher's own settings
 * and the secrets taken out of the environment. A snapshot's entry runs this when the process starts, never while the snapshot
 * is built, so no environment of the build is kept in it.
 */
import { setFlagsFromString } from "node:v8";
import { type CapturedEnvironment, captureSecrets } from "../secrets/index.js";
import { forgetLauncherTuning } from "./launcher-env.js";

export async function startUp(): Promise<CapturedEnvironment> {
  // Node's fetch (every model call) parses HTTP with llhttp compiled to WebAssembly. After a
  // response or two V8 re-compiles llhttp's hot functions with its optimizing tier on a background
  // thread, and an exiting process waits for that compile to finish: a one-shot `nexo agent
  // --json-stream` spent 0.4-0.9 s between its last answer and its exit (a bare `fetch` then
  // `process.exit` too; 5-30 ms with this). Ten times V8's default budget keeps a short-lived
  // command in the baseline tier; a long stream or a daemon still earns the optimized code. Set
  // before any WebAssembly is compiled.
  setFlagsFromString("--wasm-tiering-budget=18000000");

  // The launcher's malloc settings for the daemon have been read by glibc already; they are not
  // the operator's, so neither the start-up view nor any child sees them (cli/launcher-env.ts).
  forgetLauncherTuning();

  // Before anything reads the environment or starts a child: secrets leave process.env and
  // /proc/<pid>/environ, and the start-up view handed to the commands keeps them (secrets/capture.ts).
  const startup = captureSecrets();
  if (startup.warning !== undefined) {
    const { createLogger } = await import("../log.js");
    createLogger({ base: { component: "secrets" } }).warn(
      { secrets: startup.captured },
      `secrets stay readable by other processes of this user: ${startup.warning}`,
    );
  }
  return startup;
}
