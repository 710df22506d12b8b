// Finds the processes a test file left running. run-tests.mjs gives each file its own TMPDIR;
// every process the file started inherits it (or names a path under it: a daemon's config dir,
// a plugin's state dir), so after the file exits, any process that still carries that path in
// its environment or command line is a leftover. Linux only (/proc); elsewhere it finds nothing.
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

function scan(marker) {
  let pids;
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const found = [];
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline === "") continue; // a zombie: nothing left to kill
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      if (environ.split("\0").includes(`TMPDIR=${marker}`) || cmdline.includes(marker)) {
        found.push({ pid: Number(pid), cmd: cmdline.split("\0").join(" ").trim().slice(0, 160) });
      }
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** Processes still carrying `marker` after a grace period (a process may be finishing its exit). */
export async function findLeftovers(marker, graceMs = 3000) {
  let found = scan(marker);
  for (let waited = 0; found.length > 0 && waited < graceMs; waited += 250) {
    await sleep(250);
    found = scan(marker);
  }
  return found;
}

export function killLeftovers(found) {
  for (const { pid } of found) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}
