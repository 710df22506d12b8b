import assert from "node:assert/strict";
import { test } from "node:test";
import { forgetLauncherTuning } from "../../src/cli/launcher-env.js";

test("the malloc settings the launcher named leave the environment, with the list", () => {
  const env: NodeJS.ProcessEnv = {
    PATH: "/usr/bin",
    MALLOC_ARENA_MAX: "2",
    MALLOC_MMAP_THRESHOLD_: "49152",
    NEXO_LAUNCHER_SET: "MALLOC_ARENA_MAX MALLOC_MMAP_THRESHOLD_",
  };
  assert.deepEqual(forgetLauncherTuning(env), ["MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_"]);
  assert.deepEqual(env, { PATH: "/usr/bin" });
});

test("an operator's own setting, which the launcher does not name, stays", () => {
  const env: NodeJS.ProcessEnv = {
    MALLOC_ARENA_MAX: "4",
    MALLOC_MMAP_THRESHOLD_: "49152",
    NEXO_LAUNCHER_SET: "MALLOC_MMAP_THRESHOLD_",
  };
  assert.deepEqual(forgetLauncherTuning(env), ["MALLOC_MMAP_THRESHOLD_"]);
  assert.deepEqual(env, { MALLOC_ARENA_MAX: "4" });
  const chosen: NodeJS.ProcessEnv = { MALLOC_ARENA_MAX: "4", NEXO_LAUNCHER_SET: "" };
  assert.deepEqual(forgetLauncherTuning(chosen), []);
  assert.deepEqual(chosen, { MALLOC_ARENA_MAX: "4" });
});

test("without the launcher's list nothing is touched, and the list cannot name anything else", () => {
  const plain: NodeJS.ProcessEnv = { MALLOC_ARENA_MAX: "2" };
  assert.deepEqual(forgetLauncherTuning(plain), []);
  assert.deepEqual(plain, { MALLOC_ARENA_MAX: "2" });
  const forged: NodeJS.ProcessEnv = { PATH: "/usr/bin", HOME: "/root", NEXO_LAUNCHER_SET: "PATH HOME" };
  assert.deepEqual(forgetLauncherTuning(forged), []);
  assert.deepEqual(forged, { PATH: "/usr/bin", HOME: "/root" });
});
