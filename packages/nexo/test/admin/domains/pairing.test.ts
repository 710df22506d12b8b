/**
 * `nexo/admin/pairing/*` over a real daemon running the loopback channel plugin, which implements
 * nexo's optional pairing feature: the whole lifecycle (the QR code's PNG decoded and its URL
 * "scanned" over the channel's HTTP side, confirmed, linked), cancel, expiry, each state change
 * pushed as `pairing_status_changed` only to the microapp holding pairing_initiate; a channel
 * whose plugin has no pairing (the kitchen fixture, written without the feature) or that no plugin
 * serves is channel_unavailable; each method refused and audited without the capability.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Note } from "../../fixtures/microapps/admin-harness.js";
import {
  assertDenied,
  type DaemonAdmin,
  daemonAdmin,
  errorOf,
  resultOf,
} from "../../helpers/admin-daemon.js";
import {
  LOOPBACK_AND_KITCHEN_AGENTS as AGENTS,
  loopbackAndKitchenPlugins as pluginsYaml,
} from "../../helpers/loopback.js";
import { scanQrPng } from "../../helpers/qr.js";

const CHANGED = "nexo/notify/pairing_status_changed";

interface Status {
  challenge_id: string;
  state: string;
  channel?: string;
  data?: { qr_ascii?: string; qr_png_base64?: string; device_jid?: string; error?: string };
}

/** The pairing notifications `id` received for `challengeId`, once there are at least `count`. */
async function changes(
  admin: DaemonAdmin,
  id: string,
  challengeId: string,
  count: number,
): Promise<Status[]> {
  let found: Status[] = [];
  for (let i = 0; i < 600; i++) {
    const notes: Note[] = await admin.rig.notes(id);
    found = notes
      .filter((note) => note.method === CHANGED)
      .map((note) => note.params as Status)
      .filter((status) => status.challenge_id === challengeId);
    if (found.length >= count) return found;
    await sleep(50);
  }
  assert.fail(`${id} got ${found.length} of ${count} pairing notifications: ${JSON.stringify(found)}`);
}

async function post(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("admin pairing/* through the loopback plugin", () => {
  let admin: DaemonAdmin;
  before(async () => {
    admin = await daemonAdmin({ "agents.yaml": AGENTS, "plugins.yaml": pluginsYaml() }, ["pairing_initiate"]);
  });
  after(() => admin?.stop());

  it("are refused without pairing_initiate, each refusal audited", async () => {
    for (const [method, params] of [
      ["nexo/admin/pairing/start", { agent_id: "ana", channel: "loopback" }],
      ["nexo/admin/pairing/status", { challenge_id: "x" }],
      ["nexo/admin/pairing/cancel", { challenge_id: "x" }],
    ] as const) {
      assertDenied(admin, await admin.viewer(method, params), method, "pairing_initiate");
    }
  });

  it("start → qr_ready (a scannable PNG) → awaiting_user → linked, told only to pairing_initiate", async () => {
    const started = resultOf<{ challenge_id: string; expires_at_ms: number; instructions: string }>(
      await admin.ops("nexo/admin/pairing/start", { agent_id: "ana", channel: "loopback" }),
    );
    assert.match(started.challenge_id, /^[0-9a-f-]{36}$/);
    assert.ok(started.expires_at_ms > Date.now());
    assert.match(started.instructions, /QR code/);
    const row = admin.rig.store.audit.tail({ microappId: "ops", limit: 1 }).entries[0];
    assert.equal(row?.method, "nexo/admin/pairing/start");
    assert.equal(row?.result, "ok");

    const [qr] = await changes(admin, "ops", started.challenge_id, 1);
    assert.equal(qr?.state, "qr_ready");
    assert.equal(qr?.channel, "loopback");
    assert.ok((qr?.data?.qr_ascii ?? "").includes("█"), "a text rendering of the code");
    const scanUrl = scanQrPng(qr?.data?.qr_png_base64 ?? "");
    assert.match(scanUrl, /^http:\/\/127\.0\.0\.1:\d+\/pairing\/scan\?code=[\w-]{22}$/);
    const polled = resultOf<Status>(
      await admin.ops("nexo/admin/pairing/status", { challenge_id: started.challenge_id }),
    );
    assert.equal(polled.state, "qr_ready");

    assert.deepEqual(await post(scanUrl, { device: "alice-phone" }), { status: 200, body: { ok: true } });
    const afterScan = await changes(admin, "ops", started.challenge_id, 2);
    assert.equal(afterScan[1]?.state, "awaiting_user");
    assert.equal(
      resultOf<Status>(await admin.ops("nexo/admin/pairing/status", { challenge_id: started.challenge_id }))
        .state,
      "awaiting_user",
    );
    // A second scan of the same code is refused by the channel.
    assert.equal((await post(scanUrl, { device: "mallory" })).status, 409);

    const code = new URL(scanUrl).searchParams.get("code");
    const confirm = await post(new URL("/pairing/confirm", scanUrl).toString(), { code });
    assert.deepEqual(confirm, { status: 200, body: { device_jid: "alice-phone@loopback" } });
    const all = await changes(admin, "ops", started.challenge_id, 3);
    assert.deepEqual(
      all.map((status) => status.state),
      ["qr_ready", "awaiting_user", "linked"],
    );
    assert.deepEqual(all[2]?.data, { device_jid: "alice-phone@loopback" });
    const linked = resultOf<Status>(
      await admin.ops("nexo/admin/pairing/status", { challenge_id: started.challenge_id }),
    );
    assert.deepEqual(linked, {
      challenge_id: started.challenge_id,
      state: "linked",
      channel: "loopback",
      data: { device_jid: "alice-phone@loopback" },
    });
    // Ended: cancel is a no-op; the viewer (no pairing_initiate) heard nothing of it.
    assert.deepEqual(
      resultOf(await admin.ops("nexo/admin/pairing/cancel", { challenge_id: started.challenge_id })),
      { cancelled: false },
    );
    const viewerNotes = await admin.rig.notes("viewer");
    assert.deepEqual(
      viewerNotes.filter((note) => note.method === CHANGED),
      [],
    );
  });

  it("cancel ends the challenge here and at the plugin (its QR code no longer scans)", async () => {
    const { challenge_id } = resultOf<{ challenge_id: string }>(
      await admin.ops("nexo/admin/pairing/start", { agent_id: "ana", channel: "loopback" }),
    );
    const [qr] = await changes(admin, "ops", challenge_id, 1);
    const scanUrl = scanQrPng(qr?.data?.qr_png_base64 ?? "");
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/pairing/cancel", { challenge_id })), {
      cancelled: true,
    });
    const all = await changes(admin, "ops", challenge_id, 2);
    assert.equal(all[1]?.state, "cancelled");
    assert.match(all[1]?.data?.error ?? "", /cancelled/);
    assert.equal(
      resultOf<Status>(await admin.ops("nexo/admin/pairing/status", { challenge_id })).state,
      "cancelled",
    );
    let scan = await post(scanUrl, { device: "late-phone" });
    for (let i = 0; i < 100 && scan.status !== 404; i++) {
      await sleep(50);
      scan = await post(scanUrl, { device: "late-phone" });
    }
    assert.equal(scan.status, 404, "the plugin forgot the cancelled challenge");
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/pairing/cancel", { challenge_id })), {
      cancelled: false,
    });
    await sleep(200);
    assert.equal((await changes(admin, "ops", challenge_id, 2)).length, 2, "no change after the end");
  });

  it("a channel without pairing is channel_unavailable; unknown agents and challenges are not_found", async () => {
    for (const channel of ["kitchen_chat", "whatsapp"]) {
      const error = errorOf(
        await admin.ops("nexo/admin/pairing/start", { agent_id: "kim", channel }),
        -32603,
      );
      assert.match(error.message, /^channel_unavailable: /);
      assert.deepEqual(error.data, { reason: "channel_unavailable", channel, feature: "pairing" });
    }
    const agent = errorOf(
      await admin.ops("nexo/admin/pairing/start", { agent_id: "nobody", channel: "loopback" }),
      -32603,
    );
    assert.equal(agent.data?.reason, "not_found");
    const challenge = errorOf(
      await admin.ops("nexo/admin/pairing/status", { challenge_id: "no-such-challenge" }),
      -32603,
    );
    assert.equal(challenge.data?.reason, "not_found");
    errorOf(await admin.ops("nexo/admin/pairing/start", { agent_id: "", channel: "loopback" }), -32602);
  });
});

describe("admin pairing/*: expiry", () => {
  let admin: DaemonAdmin;
  before(async () => {
    admin = await daemonAdmin(
      { "agents.yaml": AGENTS, "plugins.yaml": pluginsYaml({ LOOPBACK_PAIRING_TTL_MS: "1500" }) },
      ["pairing_initiate"],
    );
  });
  after(() => admin?.stop());

  it("a QR code nobody scans expires: the plugin's deadline, reported and readable", async () => {
    const started = resultOf<{ challenge_id: string; expires_at_ms: number }>(
      await admin.ops("nexo/admin/pairing/start", { agent_id: "ana", channel: "loopback" }),
    );
    assert.ok(started.expires_at_ms <= Date.now() + 1_500, "the plugin's earlier deadline is answered");
    const all = await changes(admin, "ops", started.challenge_id, 2);
    assert.deepEqual(
      all.map((status) => status.state),
      ["qr_ready", "expired"],
    );
    assert.match(all[1]?.data?.error ?? "", /not scanned/);
    const status = resultOf<Status>(
      await admin.ops("nexo/admin/pairing/status", { challenge_id: started.challenge_id }),
    );
    assert.equal(status.state, "expired");
    const scan = await post(scanUrlOf(all[0]), { device: "too-late" });
    assert.equal(scan.status, 404);
  });
});

function scanUrlOf(status: Status | undefined): string {
  return scanQrPng(status?.data?.qr_png_base64 ?? "");
}
