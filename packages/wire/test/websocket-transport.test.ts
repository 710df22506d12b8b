/**
 * The WebSocket transport against a real `ws` server and client on loopback: one message per text
 * frame, lenient receiving (trailing newline, several messages per frame), problems that are not
 * crashes (garbage, binary frames, oversize messages and frames), close in the middle of a request,
 * and backpressure with its overflow policy.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import {
  type CloseInfo,
  ConnectionClosedError,
  JsonRpcPeer,
  type PeerOptions,
  type ProtocolProblem,
  WebSocketTransport,
  type WebSocketTransportOptions,
} from "@nexo/wire";
import { WebSocket, WebSocketServer } from "ws";
import { outcomes } from "./helpers/raw-peer.js";

interface Server {
  url: string;
  /** The server-side peer of the next connection. */
  nextPeer(): Promise<JsonRpcPeer>;
  problems: ProtocolProblem[];
  close(): Promise<void>;
}

const servers: Server[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function startServer(
  setup: (peer: JsonRpcPeer) => void,
  options: { peer?: Partial<PeerOptions>; transport?: WebSocketTransportOptions; maxPayload?: number } = {},
): Promise<Server> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, maxPayload: options.maxPayload });
  await new Promise<void>((resolve) => wss.once("listening", resolve));
  const problems: ProtocolProblem[] = [];
  const waiting: Array<(peer: JsonRpcPeer) => void> = [];
  const ready: JsonRpcPeer[] = [];
  wss.on("connection", (ws) => {
    const peer = new JsonRpcPeer({
      transport: new WebSocketTransport(ws, options.transport),
      name: "server",
      onProtocolProblem: (p) => problems.push(p),
      ...options.peer,
    });
    setup(peer);
    const waiter = waiting.shift();
    if (waiter) waiter(peer);
    else ready.push(peer);
  });
  const server: Server = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    nextPeer: () => {
      const peer = ready.shift();
      return peer ? Promise.resolve(peer) : new Promise((resolve) => waiting.push(resolve));
    },
    problems,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
  servers.push(server);
  return server;
}

/** A plain `ws` client that sends raw frames and collects every text frame it receives as JSON. */
async function rawClient(url: string) {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const received: unknown[] = [];
  const waiters: Array<() => void> = [];
  ws.on("message", (data, isBinary) => {
    assert.equal(isBinary, false, "the transport sends text frames only");
    received.push(JSON.parse(data.toString()));
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  return {
    ws,
    received,
    closed,
    async next(count: number): Promise<unknown[]> {
      const deadline = Date.now() + 5_000;
      while (received.length < count) {
        if (Date.now() > deadline)
          throw new Error(`waited 5 s for ${count} messages, got ${received.length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return received.splice(0, count);
    },
  };
}

const request = (id: number, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });

describe("WebSocketTransport", () => {
  test("a peer on each end: requests, notifications and replies in both directions", async () => {
    const server = await startServer((peer) => {
      peer.onRequest("echo", (p) => p);
      peer.onRequest("ask-back", (_p, ctx) => peer.request("whoami").then((who) => ({ who, id: ctx.id })));
    });
    // The client socket is still connecting: sends wait for `open` instead of failing.
    const ws = new WebSocket(server.url);
    const client = new JsonRpcPeer({ transport: new WebSocketTransport(ws), name: "client" });
    client.onRequest("whoami", () => "the client");
    assert.deepEqual(await client.request("echo", { text: "héllo", n: [1, 2] }), {
      text: "héllo",
      n: [1, 2],
    });
    assert.deepEqual(await client.request("ask-back"), { who: "the client", id: 2 });
    client.close("done");
    const serverPeer = await server.nextPeer();
    const info = await serverPeer.closed;
    assert.equal(info.code, 1000);
    assert.match(info.reason, /websocket closed \(1000 normal closure\): done/);
  });

  test("a frame may end with a newline and hold several newline-separated messages", async () => {
    const server = await startServer((peer) => peer.onRequest("echo", (p) => p));
    const client = await rawClient(server.url);
    client.ws.send(`${request(1, "echo", "one")}\n`);
    client.ws.send(
      `${request(2, "echo", "two")}\n${request(3, "echo", "three")}\r\n\n${request(4, "echo", "four")}`,
    );
    assert.deepEqual(outcomes(await client.next(4)).sort(), [
      [1, "one"],
      [2, "two"],
      [3, "three"],
      [4, "four"],
    ]);
    assert.deepEqual(server.problems, []);
  });

  test("garbage and binary frames are answered under the reply policy, and the peer keeps serving", async () => {
    const server = await startServer((peer) => peer.onRequest("echo", (p) => p), {
      peer: { malformed: "reply" },
    });
    const client = await rawClient(server.url);
    client.ws.send("{not json");
    client.ws.send(Buffer.from(request(5, "echo", "binary")), { binary: true });
    client.ws.send("[1,2]");
    client.ws.send(request(6, "echo", "still here"));
    assert.deepEqual(outcomes(await client.next(4)), [
      [null, -32700],
      [null, -32600],
      [null, -32600],
      [6, "still here"],
    ]);
    assert.deepEqual(
      server.problems.map((p) => p.kind),
      ["parse_error", "binary_message", "invalid_request"],
    );
  });

  test("a message over the cap is dropped and reported; a frame over maxPayload closes with 1009", async () => {
    const server = await startServer((peer) => peer.onRequest("echo", (p) => p), {
      peer: { malformed: "reply" },
      transport: { maxMessageBytes: 1024 },
      maxPayload: 64 * 1024,
    });
    const client = await rawClient(server.url);
    client.ws.send(request(7, "echo", "x".repeat(2000)));
    client.ws.send(request(8, "echo", "small"));
    assert.deepEqual(outcomes(await client.next(2)), [
      [null, -32600],
      [8, "small"],
    ]);
    assert.equal(server.problems[0]?.kind, "oversize");

    const serverPeer = await server.nextPeer();
    client.ws.send("y".repeat(100 * 1024));
    const info: CloseInfo = await serverPeer.closed;
    assert.equal(info.code, 1009);
    assert.match(info.reason, /message too big/);
    assert.equal(await client.closed, 1009);

    // A text frame that is not UTF-8 is refused by ws itself: 1007, not a crash.
    const other = await rawClient(server.url);
    const otherPeer = await server.nextPeer();
    other.ws.send(Buffer.from([0x22, 0xc3, 0x28, 0x22]), { binary: false });
    const invalid = await otherPeer.closed;
    assert.equal(invalid.code, 1007);
    assert.equal(await other.closed, 1007);
  });

  test("a close in the middle of a request fails it with ConnectionClosedError and aborts the handler", async () => {
    let handlerSignal: AbortSignal | undefined;
    const server = await startServer((peer) => {
      peer.onRequest("hang", (_p, ctx) => {
        handlerSignal = ctx.signal;
        return new Promise(() => {});
      });
    });
    const ws = new WebSocket(server.url);
    const client = new JsonRpcPeer({ transport: new WebSocketTransport(ws), requestTimeoutMs: 0 });
    const pending = [client.request("hang"), client.request("hang")];
    const serverPeer = await server.nextPeer();
    while (serverPeer.runningHandlers < 2) await new Promise((r) => setTimeout(r, 5));

    ws.terminate(); // no close frame: the server sees 1006
    for (const outcome of await Promise.allSettled(pending)) {
      assert.equal(outcome.status, "rejected");
      assert.ok((outcome as PromiseRejectedResult).reason instanceof ConnectionClosedError);
    }
    const info = await serverPeer.closed;
    assert.equal(info.code, 1006);
    assert.equal(handlerSignal?.aborted, true);
    await assert.rejects(client.request("hang"), ConnectionClosedError);

    // And from the server's side: closing the server peer fails the client's pending call.
    const ws2 = new WebSocket(server.url);
    const client2 = new JsonRpcPeer({ transport: new WebSocketTransport(ws2), requestTimeoutMs: 0 });
    const call = client2.request("hang");
    const serverPeer2 = await server.nextPeer();
    while (serverPeer2.runningHandlers < 1) await new Promise((r) => setTimeout(r, 5));
    serverPeer2.close("server shutting down");
    await assert.rejects(
      call,
      (e: unknown) => e instanceof ConnectionClosedError && /server shutting down/.test(e.message),
    );
    assert.equal((await client2.closed).code, 1000);
  });

  test("backpressure: sends wait while the client does not read, then arrive complete and in order", async () => {
    const server = await startServer(() => {}, {
      transport: { highWaterMarkBytes: 64 * 1024, maxBufferedBytes: 256 * 1024 * 1024 },
    });
    const client = await rawClient(server.url);
    const serverPeer = await server.nextPeer();
    client.ws.pause();
    const payload = "z".repeat(32 * 1024);
    const sends: Array<Promise<void>> = [];
    let maxQueued = 0;
    for (let i = 0; i < 600; i++) {
      sends.push(serverPeer.notify("chunk", { i, payload }));
      maxQueued = Math.max(maxQueued, serverPeer.queuedFrames);
    }
    assert.ok(maxQueued > 0, "sends must queue once the socket holds more than the high-water mark");
    client.ws.resume();
    await Promise.all(sends);
    const got = (await client.next(600)) as Array<{ params: { i: number } }>;
    assert.deepEqual(
      got.map((m) => m.params.i),
      Array.from({ length: 600 }, (_, i) => i),
    );
  });

  test("overflow: a client that never reads is disconnected with 1008 instead of growing memory", async () => {
    const server = await startServer(() => {}, {
      transport: { highWaterMarkBytes: 64 * 1024, maxBufferedBytes: 1024 * 1024 },
    });
    const client = await rawClient(server.url);
    const serverPeer = await server.nextPeer();
    client.ws.pause();
    const payload = "z".repeat(64 * 1024);
    const sends: Array<Promise<void>> = [];
    for (let i = 0; i < 2000 && !serverPeer.isClosed; i++) {
      sends.push(serverPeer.notify("chunk", { i, payload }));
    }
    const info = await serverPeer.closed;
    assert.equal(info.code, 1008);
    assert.match(info.reason, /send buffer overflow/);
    const outcomes = await Promise.allSettled(sends);
    const failed = outcomes.filter((o) => o.status === "rejected");
    assert.ok(failed.length > 0);
    for (const o of failed) assert.ok((o as PromiseRejectedResult).reason instanceof ConnectionClosedError);
    assert.equal(serverPeer.queuedFrames, 0);
    client.ws.terminate();
  });
});
