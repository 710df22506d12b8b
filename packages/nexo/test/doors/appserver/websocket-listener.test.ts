/**
 * The WebSocket listener of the real `nexo app-server --listen ws://…`, from the attacker's side
 * too: /healthz and /readyz answer without a token; the upgrade needs the exact `?token=` (401
 * before any WebSocket exists); without a token, a browser (an `Origin` header) is refused; frames
 * are read the way DotCraft Desktop writes them (trailing newline, several messages per frame);
 * garbage, binary and oversized frames get typed errors, and each connection has its own handshake.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { AppServerProcess, upgradeStatus, WsClient } from "../../helpers/appserver-client.js";

const TOKEN = "test-token-0123456789abcdef";
const processes: AppServerProcess[] = [];
const sockets: WsClient[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  for (const p of processes.splice(0)) await p.stop();
});

async function serve(args: string[]): Promise<{ server: AppServerProcess; url: string }> {
  const server = new AppServerProcess({ args, stdin: "ignore" });
  processes.push(server);
  return { server, url: await server.websocketUrl() };
}

function connect(url: string, headers?: Record<string, string>): WsClient {
  const client = new WsClient(url, headers ? { headers } : {});
  sockets.push(client);
  return client;
}

const httpBase = (url: string) => url.replace(/^ws:/, "http:").replace(/\/ws$/, "");

describe("the AppServer WebSocket listener", () => {
  test("/healthz and /readyz answer without a token; other paths are 404", async () => {
    const { url } = await serve(["--listen", "ws://127.0.0.1:0", "--token", TOKEN]);
    const base = httpBase(url);
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal(await ready.text(), "ready\n");
    assert.equal((await fetch(`${base}/nope`)).status, 404);
    assert.equal((await fetch(`${base}/readyz`, { method: "POST" })).status, 405);
  });

  test("the upgrade needs the exact ?token= and is refused with 401 before any WebSocket opens", async () => {
    const { url } = await serve(["--listen", "ws://127.0.0.1:0", "--token", TOKEN]);
    assert.equal(await upgradeStatus(url), 401);
    assert.equal(await upgradeStatus(`${url}?token=`), 401);
    assert.equal(await upgradeStatus(`${url}?token=${TOKEN.slice(0, -1)}`), 401);
    assert.equal(await upgradeStatus(`${url}?token=${TOKEN}x`), 401);
    assert.equal(await upgradeStatus(`${url}?token=${TOKEN.toUpperCase()}`), 401);
    assert.equal(await upgradeStatus(url.replace(/\/ws$/, `/other?token=${TOKEN}`)), 404);
    // With the token, a browser origin is fine: the token is the proof.
    assert.equal(await upgradeStatus(`${url}?token=${TOKEN}`, { Origin: "https://example.com" }), 101);
    const client = connect(`${url}?token=${encodeURIComponent(TOKEN)}`);
    await client.opened;
    assert.ok((await client.initialize()).result);
  });

  test("the token may also come from NEXO_APPSERVER_TOKEN", async () => {
    const server = new AppServerProcess({
      args: ["--listen", "ws://127.0.0.1:0"],
      env: { NEXO_APPSERVER_TOKEN: TOKEN },
      stdin: "ignore",
    });
    processes.push(server);
    const url = await server.websocketUrl();
    assert.equal(await upgradeStatus(url), 401);
    assert.equal(await upgradeStatus(`${url}?token=${TOKEN}`), 101);
  });

  test("without a token (loopback only), an upgrade from a browser page is refused with 403", async () => {
    const { url } = await serve(["--listen", "ws://127.0.0.1:0"]);
    assert.equal(await upgradeStatus(url, { Origin: "https://evil.example" }), 403);
    assert.equal(await upgradeStatus(url, { Origin: "null" }), 403);
    assert.equal(await upgradeStatus(url), 101);
  });

  test("frames as Desktop writes them: trailing newline, several messages in one frame", async () => {
    const { url } = await serve(["--listen", "ws://127.0.0.1:0"]);
    const client = connect(url);
    await client.opened;
    await client.initialize();
    const a = JSON.stringify({ jsonrpc: "2.0", id: 100, method: "nope/a" });
    const b = JSON.stringify({ jsonrpc: "2.0", id: 101, method: "nope/b" });
    client.sendFrame(`${a}\n${b}\n`);
    const replyA = await client.waitFor((m) => m.id === 100);
    const replyB = await client.waitFor((m) => m.id === 101);
    assert.equal(replyA.error?.code, -32601);
    assert.equal(replyB.error?.code, -32601);
  });

  test("garbage, binary and oversized frames get typed errors; the connection survives", async () => {
    const { url } = await serve(["--listen", "ws://127.0.0.1:0"]);
    const client = connect(url);
    await client.opened;
    client.sendFrame("{garbage");
    const parse = await client.waitFor((m) => m.error?.code === -32700);
    assert.equal(parse.id, null);
    client.sendFrame(Buffer.from([1, 2, 3]), true);
    await client.waitFor((m) => m.error?.code === -32600 && /binary/.test(m.error.message));
    client.sendFrame(
      `{"jsonrpc":"2.0","id":7,"method":"x","params":{"pad":"${"a".repeat(4 * 1024 * 1024)}"}}`,
    );
    await client.waitFor((m) => m.error?.code === -32600 && /exceeds/.test(m.error.message));
    assert.ok((await client.initialize()).result);

    // A frame too big to buffer at all ends the connection with 1009 (message too big).
    client.sendFrame(`"${"b".repeat(16 * 1024 * 1024)}"`);
    assert.equal((await client.closed).code, 1009);
  });

  test("each connection has its own handshake; a reconnecting client initializes again", async () => {
    const { url } = await serve(["--listen", "ws://127.0.0.1:0"]);
    const first = connect(url);
    await first.opened;
    await first.initialize();
    const second = connect(url);
    await second.opened;
    assert.equal((await second.call("no/such")).error?.code, -32002);
    await second.initialize();
    first.close();
    await first.closed;
    const again = connect(url);
    await again.opened;
    assert.ok((await again.initialize()).result);
    assert.equal((await second.call("no/such")).error?.code, -32601);
  });
});
