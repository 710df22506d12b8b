/**
 * The channel credential persister over a real daemon: `credentials/register` for the loopback
 * channel runs the plugin's validate (a refused payload or metadata is -32602 with its reason code,
 * and nothing is stored) and probe (a real request to the channel's listener with the registered
 * token: `ok` for the channel's token, `auth_failed` for another), its outcome the reply's
 * `validation` block; a channel whose plugin has no persister (the kitchen fixture) answers null.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type DaemonAdmin, daemonAdmin, errorOf, resultOf } from "../../helpers/admin-daemon.js";
import { LOOPBACK_AND_KITCHEN_AGENTS, loopbackAndKitchenPlugins } from "../../helpers/loopback.js";

const TOKEN = "the-loopback-channel-token";

describe("admin credentials/register with a channel plugin's persister", () => {
  let admin: DaemonAdmin;
  before(async () => {
    admin = await daemonAdmin(
      {
        "agents.yaml": LOOPBACK_AND_KITCHEN_AGENTS,
        "plugins.yaml": loopbackAndKitchenPlugins({ LOOPBACK_TOKEN: TOKEN }),
      },
      ["credentials_crud"],
    );
  });
  after(() => admin?.stop());
  const blob = (channel: string, instance: string) =>
    join(admin.env.stateDir, "credentials", channel, `${instance}.json`);

  it("the plugin's probe is the validation block: ok for the channel's token, auth_failed otherwise", async () => {
    const good = resultOf(
      await admin.ops("nexo/admin/credentials/register", {
        channel: "loopback",
        instance: "desk",
        agent_ids: [],
        payload: { token: TOKEN },
        metadata: { host: "127.0.0.1" },
      }),
    );
    assert.deepEqual(good.summary, { channel: "loopback", instance: "desk", agent_ids: [] });
    const validation = good.validation as { detail: string };
    assert.deepEqual(validation, {
      probed: true,
      healthy: true,
      reason_code: "ok",
      detail: validation.detail,
    });
    assert.match(validation.detail, /^authenticated at http:\/\/127\.0\.0\.1:\d+$/);

    const wrong = resultOf(
      await admin.ops("nexo/admin/credentials/register", {
        channel: "loopback",
        instance: "other",
        agent_ids: [],
        payload: { token: "a-token-the-channel-does-not-use" },
      }),
    );
    assert.equal((wrong.validation as { reason_code: string }).reason_code, "auth_failed");
    assert.equal((wrong.validation as { healthy: boolean }).healthy, false);
    assert.ok(existsSync(blob("loopback", "other")), "a failed probe never aborts the register");
  });

  it("a shape the plugin refuses is -32602 with its reason code, and nothing is stored", async () => {
    const payload = errorOf(
      await admin.ops("nexo/admin/credentials/register", {
        channel: "loopback",
        instance: "short",
        agent_ids: ["ana"],
        payload: { token: "short" },
      }),
      -32602,
    );
    assert.equal(payload.data?.reason_code, "invalid_payload");
    assert.match(payload.message, /payload\.token/);
    const metadata = errorOf(
      await admin.ops("nexo/admin/credentials/register", {
        channel: "loopback",
        instance: "remote",
        agent_ids: [],
        payload: { token: TOKEN },
        metadata: { host: "203.0.113.9" },
      }),
      -32602,
    );
    assert.equal(metadata.data?.reason_code, "invalid_metadata");
    assert.ok(!existsSync(blob("loopback", "short")));
    assert.ok(!existsSync(blob("loopback", "remote")));
    assert.deepEqual(
      admin.env.daemon.spec.agents.find((agent) => agent.id === "ana")?.bindings,
      [{ plugin: "loopback" }],
      "ana was not bound",
    );
  });

  it("a channel whose plugin has no persister keeps validation null", async () => {
    assert.deepEqual(
      resultOf(
        await admin.ops("nexo/admin/credentials/register", {
          channel: "kitchen_chat",
          instance: "k1",
          agent_ids: [],
          payload: { anything: "goes" },
        }),
      ),
      { summary: { channel: "kitchen_chat", instance: "k1", agent_ids: [] }, validation: null },
    );
  });
});
