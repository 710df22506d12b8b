/**
 * The connection state machine through the real `nexo app-server` over stdio: the handshake and its
 * error codes (each with its explanation in `error.data.detail`), malformed input answered with a
 * typed error while the connection lives on, unknown params ignored, and stdout carrying JSON-RPC
 * only.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { AppServerProcess } from "../../helpers/appserver-client.js";

const processes: AppServerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop();
});

function start(args: string[] = []): AppServerProcess {
  const server = new AppServerProcess({ args });
  processes.push(server);
  return server;
}

describe("the AppServer handshake", () => {
  test("initialize answers serverInfo with protocolVersion 1", async () => {
    const server = start();
    const reply = await server.initialize();
    const result = reply.result as { serverInfo: Record<string, unknown>; capabilities: object };
    assert.equal(result.serverInfo.name, "nexo");
    assert.equal(result.serverInfo.protocolVersion, "1");
    assert.equal(typeof result.serverInfo.version, "string");
    assert.equal(typeof result.capabilities, "object");
  });

  test("-32002 before initialize, -32600 before initialized, -32003 on a second initialize", async () => {
    const server = start();
    const early = await server.call("thread/list", { identity: { channelName: "t", workspacePath: "" } });
    assert.equal(early.error?.code, -32002);
    assert.equal(early.error?.message, "Not initialized");
    assert.match(early.error?.data?.detail ?? "", /first request .* must be 'initialize'/);
    const unknownEarly = await server.call("no/such/method");
    assert.equal(unknownEarly.error?.code, -32002);

    const init = await server.call("initialize", { clientInfo: { name: "c", version: "1" } });
    assert.ok(init.result);
    const between = await server.call("no/such/method");
    assert.equal(between.error?.code, -32600);
    assert.match(between.error?.data?.detail ?? "", /awaiting the 'initialized' notification/);

    const again = await server.call("initialize", { clientInfo: { name: "c", version: "1" } });
    assert.equal(again.error?.code, -32003);
    assert.equal(again.error?.message, "Already initialized");
    assert.ok(again.error?.data?.detail);

    server.send({ method: "initialized" }); // no params at all: accepted
    const after = await server.call("no/such/method");
    assert.equal(after.error?.code, -32601);
    assert.match(after.error?.data?.detail ?? "", /does not implement 'no\/such\/method'/);
    const stillAgain = await server.call("initialize", { clientInfo: { name: "c", version: "1" } });
    assert.equal(stillAgain.error?.code, -32003);
  });

  test("invalid params are -32602 with the issues in data.detail; unknown fields are ignored", async () => {
    const server = start();
    const bad = await server.call("initialize", { clientInfo: { version: 3 } });
    assert.equal(bad.error?.code, -32602);
    assert.equal(bad.error?.message, "Invalid params");
    assert.match(bad.error?.data?.detail ?? "", /clientInfo\.name: .*; clientInfo\.version: /);
    // The connection is still new: a good initialize with unknown fields everywhere works.
    const good = await server.call("initialize", {
      clientInfo: { name: "c", version: "1", flavour: "extra" },
      capabilities: { approvalSupport: true, futureFlag: { x: 1 }, nodeRepl: { backend: "desktop-node" } },
      unknownTopLevel: true,
    });
    assert.ok(good.result, JSON.stringify(good));
  });

  test("garbage lines get -32700 with id null and the connection keeps serving", async () => {
    const server = start();
    server.sendRaw("{not json");
    server.sendRaw("[1,2,3]");
    server.sendRaw('"a string"');
    server.sendRaw(`{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}`);
    const parse = await server.waitFor((m) => m.error?.code === -32700, "a parse error");
    assert.equal(parse.id, null);
    await server.waitFor((m) => m.error?.code === -32600, "an invalid request error");
    const reply = await server.initialize();
    assert.ok(reply.result);
    const errors = server.received.filter((m) => m.error);
    assert.equal(errors.length, 4, JSON.stringify(errors));
    // Every stdout line is one JSON-RPC message.
    for (const line of server.stdout.trim().split("\n")) {
      assert.equal(JSON.parse(line).jsonrpc, "2.0", line);
    }
  });
});
