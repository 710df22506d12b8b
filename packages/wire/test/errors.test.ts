/**
 * Decoding received error objects into typed errors: the admin RPC's capability denial carries its
 * three fields, and the other -32004 of the admin RPC (`not_paused`) is not mistaken for one; a
 * microapp's replies decode into the classes of the microapp contract's codes.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  CapabilityNotGrantedError,
  MicroappBackendUnavailableError,
  MicroappError,
  MicroappExternalAuthError,
  MicroappInternalError,
  MicroappRateLimitedError,
  MicroappToolInputInvalidError,
  RpcError,
} from "@nexo/wire";

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

describe("RpcError.fromObject on a microapp's replies", () => {
  test("the contract's codes become their classes, with their fields", () => {
    const invalid = RpcError.fromObject(
      { code: -32001, message: "bad input", data: { details: [{ field: "name" }] } },
      "microapp",
    );
    assert.ok(invalid instanceof MicroappToolInputInvalidError);
    assert.deepEqual(invalid.details, [{ field: "name" }]);
    const limited = RpcError.fromObject(
      { code: -32003, message: "slow down", data: { retry_after_ms: 250 } },
      "microapp",
    );
    assert.ok(limited instanceof MicroappRateLimitedError);
    assert.equal(limited.retryAfterMs, 250);
    assert.ok(
      RpcError.fromObject({ code: -32002, message: "db down" }, "microapp") instanceof
        MicroappBackendUnavailableError,
    );
    assert.ok(
      RpcError.fromObject({ code: -32004, message: "401" }, "microapp") instanceof MicroappExternalAuthError,
    );
    const internal = RpcError.fromObject({ code: -32099, message: "boom" }, "microapp");
    assert.ok(internal instanceof MicroappInternalError && internal instanceof MicroappError);
    assert.equal(internal.code, -32099);
  });

  test("thrown and sent, each keeps its code and data", () => {
    assert.deepEqual(new MicroappRateLimitedError("slow down", 250).toJSON(), {
      code: -32003,
      message: "slow down",
      data: { retry_after_ms: 250 },
    });
    assert.deepEqual(new MicroappToolInputInvalidError("bad").toJSON(), { code: -32001, message: "bad" });
  });
});
