/**
 * Decoding received error objects into typed errors: the admin RPC's capability denial carries its
 * three fields, and the other -32004 of the admin RPC (`not_paused`) is not mistaken for one.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CapabilityNotGrantedError, RpcError } from "@nexo/wire";

describe("RpcError.fromObject on the admin RPC", () => {
  test("a capability denial becomes CapabilityNotGrantedError with capability, method and microapp id", () => {
    const data = { capability: "agents_crud", microapp_id: "probe", method: "nexo/admin/agents/list" };
    const error = RpcError.fromObject({ code: -32004, message: "capability_not_granted", data }, "admin");
    assert.ok(error instanceof CapabilityNotGrantedError);
    assert.equal(error.capability, "agents_crud");
    assert.equal(error.method, "nexo/admin/agents/list");
    assert.equal(error.microappId, "probe");
    assert.deepEqual(error.data, data);
  });

  test("-32004 without a capability (intervention on a scope that is not paused) stays a plain RpcError", () => {
    const error = RpcError.fromObject(
      { code: -32004, message: "not_paused", data: { reason: "not_paused" } },
      "admin",
    );
    assert.ok(!(error instanceof CapabilityNotGrantedError));
    assert.equal(error.code, -32004);
    assert.equal(error.message, "not_paused");
  });

  test("outside the admin RPC, -32004 is not a capability denial", () => {
    const data = { capability: "agents_crud", method: "x" };
    const error = RpcError.fromObject({ code: -32004, message: "capability_not_granted", data }, "microapp");
    assert.ok(!(error instanceof CapabilityNotGrantedError));
  });
});
