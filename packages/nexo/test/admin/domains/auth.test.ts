/** `nexo/admin/auth/rotate_token` and `nexo/notify/token_rotated`, which only credentials_crud holders get. */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { admin } from "@nexo/wire/schemas";
import type { OperatorToken } from "../../../src/admin/index.js";
import { type AdminRig, adminRig } from "../../fixtures/microapps/admin-harness.js";
import { cleanupMicroapps } from "../../fixtures/microapps/harness.js";

let rig: AdminRig | undefined;
afterEach(async () => {
  await rig?.stop();
  rig = undefined;
  await cleanupMicroapps();
});

const ROTATE = "nexo/admin/auth/rotate_token";

function operatorToken(initial: string | undefined): OperatorToken & { token: string | undefined } {
  return {
    token: initial,
    current() {
      return this.token;
    },
    problem: (token) => (token.length < 16 ? "must be at least 16 characters" : undefined),
    async replace(token) {
      this.token = token;
    },
  };
}

const notesOf = (r: AdminRig, id: string) => r.notes(id);

describe("auth/rotate_token", () => {
  it("puts a new token in force, answers its hash and tells credentials_crud holders only", async () => {
    const token = operatorToken("the-old-operator-token");
    rig = await adminRig(
      [
        { id: "probe", fixture: "probe", grants: ["audit_read", "auth_rotate"] },
        { id: "creds", fixture: "probe", grants: ["audit_read", "credentials_crud"] },
      ],
      { services: () => ({ operatorToken: token, now: () => 1_700_000_000_000 }) },
    );
    const reply = await rig.call("probe", ROTATE, {
      new_token: "a-brand-new-operator-token",
      reason: "scheduled",
    });
    const newHash = admin.tokenHash("a-brand-new-operator-token");
    assert.deepEqual(reply.result, { ok: true, new_hash: newHash, at_ms: 1_700_000_000_000 });
    assert.equal(token.token, "a-brand-new-operator-token");
    const expected = {
      method: "nexo/notify/token_rotated",
      params: { old_hash: admin.tokenHash("the-old-operator-token"), new: newHash },
    };
    for (let i = 0; i < 50 && (await notesOf(rig, "creds")).length === 0; i++) await sleep(20);
    assert.deepEqual(await notesOf(rig, "creds"), [expected]);
    assert.deepEqual(await notesOf(rig, "probe"), [], "no credentials_crud, no notification");

    const generated = await rig.call("probe", ROTATE, {});
    assert.equal((generated.result as { new_hash: string }).new_hash, admin.tokenHash(token.token ?? ""));
    assert.ok((token.token ?? "").length >= 32);
  });

  it("a short or unchanged token is invalid params; no token to rotate is an internal error", async () => {
    const token = operatorToken("the-old-operator-token");
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read", "auth_rotate"] }], {
      services: () => ({ operatorToken: token }),
    });
    assert.equal((await rig.call("probe", ROTATE, { new_token: "short" })).error?.code, -32602);
    assert.equal(
      (await rig.call("probe", ROTATE, { new_token: "the-old-operator-token" })).error?.code,
      -32602,
    );
    assert.equal((await rig.call("probe", ROTATE, { reason: "x".repeat(201) })).error?.code, -32602);
    token.token = undefined;
    const none = await rig.call("probe", ROTATE, {});
    assert.equal(none.error?.code, -32603);
    assert.match(none.error?.message ?? "", /no operator token/);
  });
});
