/**
 * `nexo/admin/memory/*_snapshot(s)` over a real SQLite store: a bundle holds the agent's memories
 * with secrets redacted, restore replaces them after an automatic pre-snapshot and refuses a
 * tenant the bundle does not record, delete is idempotent, and each is refused without
 * memory_snapshot.
 */
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, it } from "node:test";
import { MemorySnapshots } from "../../../src/memory/snapshots.js";
import { type AdminRig, adminRig } from "../../fixtures/microapps/admin-harness.js";
import { cleanupMicroapps } from "../../fixtures/microapps/harness.js";
import { errorOf, resultOf } from "../../helpers/admin-daemon.js";

let rig: AdminRig | undefined;
afterEach(async () => {
  await rig?.stop();
  rig = undefined;
  await cleanupMicroapps();
});

async function start(): Promise<AdminRig> {
  return adminRig(
    [
      { id: "ops", fixture: "probe", grants: ["audit_read", "memory_snapshot"] },
      { id: "viewer", fixture: "probe", grants: ["audit_read"] },
    ],
    {
      services: (store, stateDir) => ({
        memory: store.memory,
        memorySnapshots: new MemorySnapshots(store.memory, join(stateDir, "memory-snapshots")),
      }),
    },
  );
}

interface Meta {
  id: string;
  bundle_path: string;
  bundle_size_bytes: number;
  bundle_sha256: string;
  redactions_applied: boolean;
  tenant: string;
  label?: string;
}

describe("admin memory snapshots", () => {
  it("are refused without memory_snapshot", async () => {
    rig = await start();
    for (const method of [
      "nexo/admin/memory/list_snapshots",
      "nexo/admin/memory/create_snapshot",
      "nexo/admin/memory/delete_snapshot",
      "nexo/admin/memory/restore_snapshot",
    ]) {
      const reply = await rig.call("viewer", method, {
        agent_id: "ana",
        tenant: "",
        id: "x",
        snapshot_id: "x",
      });
      assert.equal(reply.error?.code, -32004, method);
      assert.equal((reply.error?.data as { capability?: string } | undefined)?.capability, "memory_snapshot");
    }
  });

  it("create → list → restore (with a pre-snapshot) → delete, secrets never in a bundle", async () => {
    rig = await start();
    const { memory } = rig.store;
    memory.remember({ agentId: "ana", content: "prefers coffee", tags: ["taste"] });
    memory.remember({
      agentId: "ana",
      content: "api key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
    });
    memory.remember({ agentId: "bob", content: "not ana's" });

    const { snapshot } = resultOf<{ snapshot: Meta }>(
      await rig.call("ops", "nexo/admin/memory/create_snapshot", {
        agent_id: "ana",
        tenant: "",
        label: "before",
      }),
    );
    assert.equal(snapshot.redactions_applied, true);
    assert.equal(snapshot.label, "before");
    const bytes = readFileSync(snapshot.bundle_path);
    assert.equal(bytes.length, snapshot.bundle_size_bytes);
    assert.equal(statSync(snapshot.bundle_path).mode & 0o777, 0o600);
    const text = bytes.toString("utf8");
    assert.ok(text.includes("prefers coffee") && !text.includes("not ana's"));
    assert.ok(!text.includes("abcdefghijklmnopqrstuvwxyz0123456789"), "the key is redacted");

    // The memories change; restoring brings back the snapshot's, after snapshotting these.
    memory.remember({ agentId: "ana", content: "moved to Lisbon" });
    const dry = resultOf<{ report: { dry_run: boolean; pre_snapshot_id?: string } }>(
      await rig.call("ops", "nexo/admin/memory/restore_snapshot", {
        agent_id: "ana",
        tenant: "",
        snapshot_id: snapshot.id,
        dry_run: true,
      }),
    );
    assert.deepEqual([dry.report.dry_run, dry.report.pre_snapshot_id], [true, undefined]);
    assert.equal(memory.count("ana"), 3, "a dry run changes nothing");

    const { report } = resultOf<{ report: { pre_snapshot_id: string; from_snapshot_id: string } }>(
      await rig.call("ops", "nexo/admin/memory/restore_snapshot", {
        agent_id: "ana",
        tenant: "",
        snapshot_id: snapshot.id,
      }),
    );
    assert.equal(report.from_snapshot_id, snapshot.id);
    assert.deepEqual(
      memory
        .all("ana")
        .map((entry) => entry.content)
        .sort(),
      ["api key is [REDACTED:api_key]", "prefers coffee"],
    );
    assert.equal(memory.count("bob"), 1, "another agent's memories are untouched");

    const { snapshots } = resultOf<{ snapshots: Meta[]; encryption_available: boolean }>(
      await rig.call("ops", "nexo/admin/memory/list_snapshots", { agent_id: "ana" }),
    );
    assert.deepEqual(
      snapshots.map((s) => s.id),
      [report.pre_snapshot_id, snapshot.id],
      "newest first: the pre-snapshot",
    );
    // The pre-snapshot holds what the restore replaced.
    assert.ok(readFileSync(snapshots[0]?.bundle_path ?? "", "utf8").includes("moved to Lisbon"));

    assert.deepEqual(
      resultOf(
        await rig.call("ops", "nexo/admin/memory/delete_snapshot", {
          agent_id: "ana",
          tenant: "",
          id: snapshot.id,
        }),
      ),
      { removed: true },
    );
    assert.deepEqual(
      resultOf(
        await rig.call("ops", "nexo/admin/memory/delete_snapshot", {
          agent_id: "ana",
          tenant: "",
          id: snapshot.id,
        }),
      ),
      { removed: true },
      "idempotent",
    );
  });

  it("refuses a restore across tenants, encryption, and names that would escape the directory", async () => {
    rig = await start();
    rig.store.memory.remember({ agentId: "ana", content: "acme's secret recipe" });
    const { snapshot } = resultOf<{ snapshot: Meta }>(
      await rig.call("ops", "nexo/admin/memory/create_snapshot", { agent_id: "ana", tenant: "acme" }),
    );
    const across = errorOf(
      await rig.call("ops", "nexo/admin/memory/restore_snapshot", {
        agent_id: "ana",
        tenant: "",
        snapshot_id: snapshot.id,
      }),
      -32602,
    );
    assert.match(across.message, /no snapshot|tenant/);
    errorOf(
      await rig.call("ops", "nexo/admin/memory/restore_snapshot", {
        agent_id: "ana",
        snapshot_id: snapshot.id,
      }),
      -32602,
    );
    errorOf(
      await rig.call("ops", "nexo/admin/memory/create_snapshot", { agent_id: "ana", encrypt: true }),
      -32602,
    );
    errorOf(await rig.call("ops", "nexo/admin/memory/create_snapshot", { agent_id: "../../etc" }), -32602);
    errorOf(
      await rig.call("ops", "nexo/admin/memory/delete_snapshot", {
        agent_id: "ana",
        tenant: "acme",
        id: "../x",
      }),
      -32602,
    );
    assert.equal(rig.store.memory.count("ana"), 1);
  });
});
