/**
 * The bot token registered and rotated the way an operator does it: a microapp calls the admin
 * RPC's `credentials/register` on a real daemon (started from a real config directory) running the
 * compiled Telegram plugin, against the fake Bot API. The daemon runs the plugin's persister:
 * validate (a malformed token is refused before anything is stored), persist (the plugin saves it
 * and, when running, reconnects as the new bot; a token Telegram refuses is not taken), probe
 * (getMe; its outcome is the reply's validation block). The agent then answers through the new bot
 * and the old token is revoked. Run `npm run build` first.
 */
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type DaemonAdmin, daemonAdmin, errorOf, resultOf } from "../../../nexo/test/helpers/admin-daemon.js";
import { FakeBotApi } from "./fake-bot-api.js";

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const TOKEN_A = "6660001:AAH-rotate-first-0123456789abcdefghij";
const TOKEN_B = "6660002:AAH-rotate-second-0123456789abcdefghi";
const ALICE = { id: 111, first_name: "Alice", username: "alice" };
const CHAT = { id: 111, type: "private" as const };

describe("telegram token through credentials/register on a daemon", () => {
  const fake = new FakeBotApi();
  let admin: DaemonAdmin;
  const register = (token: string) =>
    admin.ops("nexo/admin/credentials/register", {
      channel: "telegram",
      agent_ids: ["ana"],
      payload: { token },
    });
  const replyFrom = (botId: number) =>
    fake.next(
      (c) => c.ok && c.method === "sendMessage" && c.botId === botId && Number(c.params.chat_id) === 111,
    );

  before(async () => {
    await fake.start();
    fake.addBot(TOKEN_A, "first_bot");
    fake.addBot(TOKEN_B, "second_bot");
    admin = await daemonAdmin(
      {
        "agents.yaml": "agents:\n  - id: ana\n    model: { provider: scripted, model: nexo-scripted-demo }\n",
        "plugins.yaml": `plugins:
  - dir: ${PLUGIN_DIR}
    env: { TELEGRAM_API_ROOT: "${fake.url}", TELEGRAM_ALLOWED_USERS: "*", TELEGRAM_POLL_TIMEOUT_SECS: "5" }
`,
      },
      ["credentials_crud"],
    );
  });
  after(async () => {
    await admin?.stop();
    await fake.stop();
  });

  test("a malformed token is refused by the plugin's validate, and nothing is stored", async () => {
    const error = errorOf(await register("123:abc"), -32602);
    assert.equal(error.data?.reason_code, "invalid_payload");
    assert.match(error.message, /bot token/);
  });

  test("registered: probed with getMe, the agent bound, and the bot answers", async () => {
    const result = resultOf<{ validation: Record<string, unknown> }>(await register(TOKEN_A));
    assert.deepEqual(result.validation, {
      probed: true,
      healthy: true,
      reason_code: "ok",
      detail: "authenticated as @first_bot (bot id 6660001)",
    });
    assert.match(admin.env.read("agents.yaml"), /plugin: telegram/);
    await fake.next((c) => c.method === "deleteWebhook" && c.botId === 6660001);
    fake.userSends("first_bot", { chat: CHAT, from: ALICE, text: "hello" });
    await replyFrom(6660001);
  });

  test("rotated: a token Telegram refuses is not taken; a good one reconnects, the old one is revoked", async () => {
    const refused = errorOf(await register("6669999:AAH-not-a-known-token-0123456789abc"), -33002);
    assert.match(refused.message, /refused the new token/);
    const result = resultOf<{ validation: Record<string, unknown> }>(await register(TOKEN_B));
    assert.equal(result.validation.detail, "authenticated as @second_bot (bot id 6660002)");
    fake.revoke(TOKEN_A);
    await fake.next((c) => c.method === "deleteWebhook" && c.botId === 6660002);
    fake.userSends("second_bot", { chat: CHAT, from: ALICE, text: "hello again" });
    await replyFrom(6660002);
    const saved = join(admin.env.stateDir, "plugins", "telegram", "credentials", "_default.json");
    assert.equal(JSON.parse(readFileSync(saved, "utf8")).token, TOKEN_B);
    assert.equal(statSync(saved).mode & 0o777, 0o600);
  });
});
