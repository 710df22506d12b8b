/**
 * Talking to the example loopback channel plugin from daemon tests: where it listens, and one
 * message sent with its reply read back over HTTP.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

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
