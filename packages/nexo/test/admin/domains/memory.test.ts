/** `nexo/admin/memory/query` over the store's long-term memory. */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { type AdminRig, adminRig } from "../../fixtures/microapps/admin-harness.js";
import { cleanupMicroapps } from "../../fixtures/microapps/harness.js";

let rig: AdminRig | undefined;
afterEach(async () => {
  await rig?.stop();
  rig = undefined;
  await cleanupMicroapps();
});

const QUERY = "nexo/admin/memory/query";

describe("memory/query", () => {
  it("recent entries for an empty query, best matches for a query, one agent only", async () => {
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read", "memory_query"] }], {
      services: (store) => ({ memory: store.memory }),
    });
    rig.store.memory.remember({ agentId: "ana", content: "prefers coffee without sugar", tags: ["taste"] });
    rig.store.memory.remember({ agentId: "ana", content: "lives in Bogotá", memoryType: "fact" });
    rig.store.memory.remember({ agentId: "carlos", content: "prefers coffee too" });
    type Result = {
      entries: Array<{ agent_id: string; content: string; memory_type?: string; tags: string[] }>;
    };
    const recent = (await rig.call("probe", QUERY, { agent_id: "ana" })).result as Result;
    assert.deepEqual(
      recent.entries.map((e) => e.content),
      ["lives in Bogotá", "prefers coffee without sugar"],
    );
    assert.equal(recent.entries[0]?.memory_type, "fact");
    assert.deepEqual(recent.entries[1]?.tags, ["taste"]);
    const coffee = (await rig.call("probe", QUERY, { agent_id: "ana", query: "coffee" })).result as Result;
    assert.deepEqual(
      coffee.entries.map((e) => [e.agent_id, e.content]),
      [["ana", "prefers coffee without sugar"]],
    );
    const one = (await rig.call("probe", QUERY, { agent_id: "ana", limit: 1 })).result as Result;
    assert.equal(one.entries.length, 1);
    const missing = await rig.call("probe", QUERY, { query: "x" });
    assert.equal(missing.error?.code, -32602);
  });
});
