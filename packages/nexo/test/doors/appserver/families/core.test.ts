/**
 * `nexo app-server` without a config directory serves only families/core.ts's families, so the
 * management families and what they import stay off its start-up path. That is only right while
 * every other family of families/index.ts is unavailable without management services: a family
 * added there that serves without them must be added to core.ts too, or plain launches would lose it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CORE_FAMILIES } from "../../../../src/doors/appserver/families/core.js";
import { FAMILIES } from "../../../../src/doors/appserver/families/index.js";
import { managesConfig, managesLive } from "../../../../src/doors/appserver/families/managed.js";
import {
  ABSENT_METHODS,
  absentFamily,
  CONFIG_METHODS,
  LIVE_METHODS,
  notLiveFamily,
  withoutConfigFamily,
} from "../../../../src/doors/appserver/families/unsupported.js";
import { familyCapabilities } from "../../../../src/doors/appserver/family.js";
import { createThreadedAppServer } from "../../../../src/doors/appserver/server.js";
import { createLogger } from "../../../../src/log.js";

function serverWithoutManagement() {
  return createThreadedAppServer({
    version: "test",
    workspace: process.cwd(),
    logger: createLogger({ level: "silent" }),
    approvalTimeoutMs: 1000,
    openStore: () => Promise.reject(new Error("no store in this test")),
    sessions: () => Promise.reject(new Error("no sessions in this test")),
    families: FAMILIES,
  });
}

test("every family outside core.ts needs management services", () => {
  const host = serverWithoutManagement();
  const servedWithout = FAMILIES.filter((family) => family.available?.(host) ?? true).map((f) => f.name);
  assert.deepEqual(
    servedWithout.sort(),
    CORE_FAMILIES.map((family) => family.name).sort(),
    "a family served without management services must be listed in families/core.ts",
  );
  host.close("test over");
});

test("a server without management advertises the same flags with the core families as with all", () => {
  const host = serverWithoutManagement();
  assert.deepEqual(familyCapabilities(CORE_FAMILIES, host), familyCapabilities(FAMILIES, host));
  assert.equal(familyCapabilities(CORE_FAMILIES, host).threadManagement, true);
  host.close("test over");
});

test("every core family is also in families/index.ts", () => {
  for (const family of CORE_FAMILIES) assert.ok(FAMILIES.includes(family), family.name);
});

test("the -32601 lists name exactly what the real families leave unserved", () => {
  const refusing = [absentFamily, withoutConfigFamily, notLiveFamily];
  const served = (family: (typeof FAMILIES)[number]) => Object.keys(family.handlers);
  const real = FAMILIES.filter((family) => !refusing.includes(family));
  const byCondition = (condition: unknown) =>
    real
      .filter((family) => family.available === condition)
      .flatMap(served)
      .sort();
  assert.deepEqual(
    byCondition(managesConfig),
    [...CONFIG_METHODS].sort(),
    "withoutConfigFamily covers managesConfig's",
  );
  assert.deepEqual(byCondition(managesLive), [...LIVE_METHODS].sort(), "notLiveFamily covers managesLive's");
  const all = new Set(real.flatMap(served));
  for (const method of Object.keys(ABSENT_METHODS))
    assert.ok(!all.has(method), `${method} is served after all`);
});
