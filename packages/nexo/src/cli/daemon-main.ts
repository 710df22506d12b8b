/**
 * `nexo start`'s entry: the launcher (bin/nexo) runs bundle/daemon-main.js, this file in the
 * daemon's own build (scripts/bundle-cli.mjs), for `start` or a leading `--log-format`, once it is
 * built. Every ES module a process loads costs it for its life (~19 KB each at idle,
 * docs/performance.md "Tenth pass (b)"), and the way in through bin/nexo.js loaded bin/nexo.js,
 * main.js, its chunks and the fast start's before the daemon's build: here, a plain launch loads
 * this file and the secrets module (bundle/secrets.js) only.
 *
 * The same decisions as cli/main.ts, in an order no one can tell apart: fastStart only reads argv
 * (no environment, no child, no WebAssembly), so it may come before startUp(); whatever it declines
 * (`nexo start --help`, a bad flag, ...) goes to bundle/main.js, which does its own startUp() and
 * gives commander's help, usage errors and exit codes, as `node bin/nexo.js start ...` always did.
 */

import { fastStart, startPlain } from "./start-plain.js";
import { startUp } from "./start-up.js";

const launch = fastStart(process.argv.slice(2));
if (launch === undefined) await import("./main.js");
else {
  const startup = await startUp();
  try {
    await startPlain(launch, startup.env);
  } catch (error) {
    // What cli/main.ts does with an error that is not commander's (the plain launch has no commander).
    process.stderr.write(`nexo: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  }
}
