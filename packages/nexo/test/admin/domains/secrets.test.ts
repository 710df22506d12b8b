/** `nexo/admin/secrets/write`: the file, the environment `${NAME}` reads, and what the audit keeps. */
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, it } from "node:test";
import { readSecretFiles } from "../../../src/config/secret-files.js";
import { type AdminRig, adminRig } from "../../fixtures/microapps/admin-harness.js";
import { cleanupMicroapps } from "../../fixtures/microapps/harness.js";

let rig: AdminRig | undefined;
afterEach(async () => {
  await rig?.stop();
  rig = undefined;
  await cleanupMicroapps();
});

const WRITE = "nexo/admin/secrets/write";

describe("secrets/write", () => {
  it("writes <state>/secrets/<NAME>.txt 0600, where ${NAME} is read; reports a replaced one", async () => {
    const env: NodeJS.ProcessEnv = { GITHUB_TOKEN: "from-the-environment" };
    const remembered: string[] = [];
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read", "secrets_write"] }], {
      services: (_store, stateDir) => ({
        secrets: { stateDir, env, remember: (value) => remembered.push(value) },
      }),
    });
    const first = await rig.call("probe", WRITE, { name: "WHATSAPP_TOKEN", value: "first-secret-value" });
    const path = join(rig.stateDir, "secrets", "WHATSAPP_TOKEN.txt");
    assert.deepEqual(first.result, { path, overwrote_env: false });
    assert.equal(readFileSync(path, "utf8"), "first-secret-value");
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(rig.stateDir, "secrets")).mode & 0o777, 0o700);
    assert.equal(env.WHATSAPP_TOKEN, undefined, "the daemon's environment is not touched");
    const second = await rig.call("probe", WRITE, { name: "WHATSAPP_TOKEN", value: "second-secret-value" });
    assert.deepEqual(second.result, { path, overwrote_env: true });
    assert.deepEqual(readSecretFiles(rig.stateDir), { WHATSAPP_TOKEN: "second-secret-value" });
    assert.deepEqual(remembered, ["first-secret-value", "second-secret-value"]);
    const shadowing = await rig.call("probe", WRITE, {
      name: "GITHUB_TOKEN",
      value: "a-stored-github-token",
    });
    assert.equal(
      (shadowing.result as { overwrote_env: boolean }).overwrote_env,
      true,
      "set in the environment",
    );

    // The audit hashes the call with the value blanked: both writes hash alike, no value is stored.
    const rows = rig.store.audit.tail({ limit: 10 }).entries;
    assert.equal(rows[1]?.args_hash, rows[2]?.args_hash);
    const database = readFileSync(join(rig.stateDir, "nexo.db")).toString("latin1");
    assert.ok(!database.includes("secret-value"));
  });

  it("refuses names that would change how the daemon or its children run", async () => {
    const env: NodeJS.ProcessEnv = { PATH: "/usr/bin" };
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read", "secrets_write"] }], {
      services: (_store, stateDir) => ({ secrets: { stateDir, env } }),
    });
    for (const name of [
      "PATH",
      "LD_PRELOAD",
      "NODE_OPTIONS",
      "NEXO_PLUGIN_SANDBOX_REQUIRE",
      "lowercase",
      "../X",
    ]) {
      const reply = await rig.call("probe", WRITE, { name, value: "x" });
      assert.equal(reply.error?.code, -32602, name);
    }
    assert.equal(env.PATH, "/usr/bin");
    assert.deepEqual(readSecretFiles(rig.stateDir), {});
  });
});
