/**
 * Reading /proc: the stat line past an awkward command name, and finding a variable in the
 * environment a real process started with — exactly, so tag `r.1` is not found in `r.10`.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { lineageOf } from "../../src/process/lineage.js";
import { environHas, parseProcStat, readProcStat } from "../../src/process/proc.js";
import { waitUntil } from "../fixtures/processes.js";

describe("/proc", () => {
  it("reads state, parent, group, session and start time past a name with spaces and parentheses", () => {
    const line = "4242 (my (odd) name) S 1 4240 4239 0 -1 4194560 99 0 0 0 1 2 0 0 20 0 1 0 987654 1000 20";
    assert.deepEqual(parseProcStat(line), {
      state: "S",
      ppid: 1,
      pgrp: 4240,
      session: 4239,
      startTicks: "987654",
    });
    assert.equal(parseProcStat("7 (sleep) Z 1 7"), undefined, "a cut line is not guessed at");
    assert.equal(readProcStat(process.pid)?.ppid, process.ppid);
  });

  it("finds a tag in a real process's environment, exactly, and its lineage by it", async () => {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
      env: { NEXO_PROCESS_TAG: "0123456789ab.10", OTHER: "x" },
      stdio: "ignore",
    });
    try {
      await waitUntil(() => readProcStat(child.pid!) !== undefined, 2_000, "the child");
      assert.ok(environHas(child.pid!, ["NEXO_PROCESS_TAG=0123456789ab.10\0"]));
      assert.ok(!environHas(child.pid!, ["NEXO_PROCESS_TAG=0123456789ab.1\0"]));
      assert.ok(environHas(child.pid!, ["NEXO_PROCESS_TAG=0123456789ab."]), "a run prefix matches");
      assert.ok(!environHas(child.pid!, ["PROCESS_TAG=0123456789ab."]), "only at a variable's start");
      assert.deepEqual(
        lineageOf([{ tag: "0123456789ab.10" }])?.map((stat) => stat.pid),
        [child.pid],
      );
      assert.deepEqual(lineageOf([{ tag: "0123456789ab.1" }]), []);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
