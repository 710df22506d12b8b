/**
 * Talking to the example loopback channel plugin from daemon tests: where it listens, and one
 * message sent with its reply read back over HTTP.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { EXAMPLE_PLUGINS } from "./daemon-dir.js";

/** The channel's URL, from the endpoint file the plugin writes under the daemon's state dir. */
export async function endpoint(stateDir: string): Promise<string> {
  const file = join(stateDir, "plugins", "loopback", "endpoint.json");
  for (let i = 0; i < 200 && !existsSync(file); i++) await sleep(50);
  return (JSON.parse(readFileSync(file, "utf8")) as { url: string }).url;
}

/** POSTs `text` as `from` and long-polls until the reply arrives; returns its text. */
export async function say(url: string, from: string, text: string): Promise<string> {
  const post = await fetch(`${url}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ from, text }),
  });
  assert.equal(post.status, 202);
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${url}/messages?to=${from}&timeout=2000`);
    const body = (await res.json()) as { messages: Array<{ text: string }> };
    if (body.messages.length > 0) return body.messages.map((m) => m.text).join("\n");
  }
  throw new Error(`no reply for ${from}`);
}

/** The kitchen fixture plugin: a channel (`kitchen_chat`) without nexo's optional channel features. */
export const KITCHEN_PLUGIN = fileURLToPath(new URL("../fixtures/plugins/kitchen", import.meta.url));

/** plugins.yaml running the loopback example (with `loopbackEnv` for it) and the kitchen fixture. */
export function loopbackAndKitchenPlugins(loopbackEnv: Record<string, string> = {}): string {
  const env = Object.entries(loopbackEnv)
    .map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
    .join(", ");
  return `plugins:
  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}
    env: { ${env} }
  - dir: ${KITCHEN_PLUGIN}
`;
}

/** agents.yaml: `ana` on the loopback channel, `kim` on the kitchen's. */
export const LOOPBACK_AND_KITCHEN_AGENTS = `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: loopback }]
  - id: kim
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: kitchen_chat }]
`;
