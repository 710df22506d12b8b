#!/usr/bin/env node
// Makes sure the system programs the tests run for real are installed, before `npm test` runs them:
// nats-server (the multi-machine broker tests), bwrap (the sandbox tests) and chromium (the operator
// console's browser tests). What is missing is
// installed with apt-get when this user may (root, or sudo without a password); otherwise this
// fails once, up front, with the exact command to run, instead of letting whole suites fail later.
// Set NEXO_SKIP_PROVISION=1 to skip the step (the tests that need a missing program then fail).
// The list lives in scripts/test-deps.json, shared with `nexo doctor` (which tells a contributor
// what is missing).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Each program the tests need, with the Debian package that provides it. */
const REQUIRED = JSON.parse(readFileSync(new URL("./test-deps.json", import.meta.url), "utf8")).programs;

const has = (program) => spawnSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" }).status === 0;

if (process.env.NEXO_SKIP_PROVISION === "1") process.exit(0);

const missing = REQUIRED.filter((r) => !has(r.program));
if (missing.length === 0) process.exit(0);

const packages = missing.map((m) => m.pkg);
const command = `apt-get update && apt-get install -y --no-install-recommends ${packages.join(" ")}`;
for (const m of missing) console.error(`npm test: ${m.program} is missing (needed for the ${m.why})`);

const isRoot = process.getuid?.() === 0;
const sudoWorks =
  !isRoot && has("sudo") && spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status === 0;
if (!has("apt-get") || (!isRoot && !sudoWorks)) {
  const prefix = isRoot ? "" : "sudo ";
  console.error(
    `npm test: cannot install them from here. Run this once, then npm test again:\n\n  ${prefix}${command.replace("&& apt-get", `&& ${prefix}apt-get`)}\n`,
  );
  process.exit(1);
}

const sudo = isRoot ? [] : ["sudo", "-n"];
const run = (args) => {
  const [file, ...rest] = [...sudo, ...args];
  console.error(`npm test: ${[file, ...rest].join(" ")}`);
  const result = spawnSync(file, rest, {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return result.status === 0;
};
const installed =
  run(["apt-get", "update", "-qq"]) &&
  run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", ...packages]) &&
  missing.every((m) => has(m.program));
if (!installed) {
  console.error(`npm test: installing ${packages.join(", ")} failed; run by hand:\n\n  ${command}\n`);
  process.exit(1);
}
console.error(`npm test: installed ${packages.join(", ")}`);
