/**
 * The whole method table against a real daemon started from a config directory (the composition
 * `nexo start` runs): every `nexo/admin/*` method of the spec, nexo's additions and `nexo/dispatch`
 * has a domain serving it — none falls through to -32601 — and each one asked by a microapp without its
 * capability is refused -32004 with `{capability, microapp_id, method}` and leaves a `denied`
 * audit row naming that capability. The granted side of each method is its domain's own test.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { admin } from "@nexo/wire/schemas";
import { OUTBOUND_METHOD_NAMES, outboundMethods } from "../../../src/admin/methods.js";
import { MICROAPPS_DIR } from "../../fixtures/microapps/harness.js";
import { type DaemonDir, startFromDir } from "../../helpers/daemon-dir.js";
import { call } from "../../helpers/takeover.js";

describe("every admin method on a real daemon", () => {
  let run: DaemonDir;
  before(async () => {
    run = await startFromDir({
      "agents.yaml": "agents:\n  - id: ana\n    model: { provider: scripted, model: nexo-scripted-demo }\n",
      // The probe requires audit_read; it is granted nothing else.
      "extensions.yaml": `extensions:
  entries:
    viewer:
      path: ${join(MICROAPPS_DIR, "probe/main.mjs")}
      capabilities_grant: [audit_read]
      config: { daemon_timeout_ms: 60000 }
`,
    });
  });
  after(() => run?.daemon.stop("test over"));

  it("serves all 52 methods of the spec's table, nexo's additions and nexo/dispatch", () => {
    const additions: readonly string[] = admin.NEXO_ADMIN_ADDITIONS;
    assert.equal(admin.ADMIN_METHOD_NAMES.filter((method) => !additions.includes(method)).length, 52);
    assert.deepEqual([...run.daemon.microapps.servedMethods()].sort(), [...OUTBOUND_METHOD_NAMES].sort());
    assert.equal(OUTBOUND_METHOD_NAMES.length, admin.ADMIN_METHOD_NAMES.length + 1);
  });

  it("refuses each method it was not granted with -32004 and audits the refusal", async () => {
    const refused = OUTBOUND_METHOD_NAMES.filter(
      (method) => outboundMethods[method].capability !== "audit_read",
    );
    assert.equal(
      refused.length,
      OUTBOUND_METHOD_NAMES.length - 1,
      "only microapp_audit/tail is behind audit_read",
    );
    for (const method of refused) {
      const { capability } = outboundMethods[method];
      // The gate answers before the params are read: empty params are enough.
      const reply = await call(run, "viewer", method, {});
      assert.equal(reply.error?.code, -32004, `${method}: ${JSON.stringify(reply)}`);
      assert.equal(reply.error?.message, "capability_not_granted");
      assert.deepEqual(reply.error?.data, { capability, microapp_id: "viewer", method });
    }
    const rows = run.daemon.store.audit.tail({ microappId: "viewer", limit: 100 }).entries;
    const denied = new Map(rows.filter((row) => row.result === "denied").map((row) => [row.method, row]));
    for (const method of refused) {
      const row = denied.get(method);
      assert.ok(row, `${method} has a denied audit row`);
      assert.equal(row.capability, outboundMethods[method].capability, method);
      assert.equal(row.error_code, -32004, method);
    }
  });
});
