/**
 * Typed dispatch over the protocols' method tables: params checked before the handler runs
 * (-32602 naming the fields, no `data`), parsed params with defaults and unknown fields, results
 * checked when asked, -32601 for what nobody serves, disposers, guards reading the table entry,
 * and notifications checked and reported. Errors are compared as the raw JSON on the wire.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import {
  Caller,
  CapabilityNotGrantedError,
  Dispatcher,
  JsonRpcPeer,
  type RequestContext,
  type SchemaFailure,
  WebSocketTransport,
} from "@nexo/wire";
import { admin, appserver, method, plugin } from "@nexo/wire/schemas";
import { WebSocket, WebSocketServer } from "ws";
import { z } from "zod";
import { rawPeer } from "./helpers/raw-peer.js";

/** A peer to serve with a Dispatcher, and the raw other end: requests in, parsed frames out. */
function served() {
  const { peer, toPeer, lines: frames, problems } = rawPeer();
  let nextId = 0;
  async function call(methodName: string, params?: unknown): Promise<Record<string, unknown>> {
    const id = ++nextId;
    toPeer.write(`${JSON.stringify({ jsonrpc: "2.0", id, method: methodName, params })}\n`);
    for (let i = 0; i < 200; i++) {
      const frame = frames.find((f) => (f as { id?: unknown }).id === id);
      if (frame) return frame as Record<string, unknown>;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`no reply to ${methodName} (id ${id})`);
  }
  function notify(methodName: string, params: unknown): void {
    toPeer.write(`${JSON.stringify({ jsonrpc: "2.0", method: methodName, params })}\n`);
  }
  return { peer, call, notify, problems };
}

const table = {
  "math/add": method(
    z.looseObject({ a: z.number(), b: z.number().default(0) }),
    z.looseObject({ sum: z.number(), note: z.string().default("none") }),
  ),
  "math/broken": method(z.looseObject({}), z.looseObject({ sum: z.number() })),
} as const;

describe("Dispatcher", () => {
  test("the handler gets parsed params: defaults applied, unknown fields kept, types from the schema", async () => {
    const { peer, call } = served();
    const seen: unknown[] = [];
    new Dispatcher(peer, { requests: table }).handle("math/add", (params) => {
      seen.push(params);
      const total: number = params.a + params.b; // both typed number, b defaulted
      // @ts-expect-error: `c` is not declared, so it is unknown, not a number
      const typeOnly = () => params.c.toFixed();
      void typeOnly;
      return { sum: total };
    });
    const reply = await call("math/add", { a: 2, extra: "kept" });
    assert.deepEqual(reply, { jsonrpc: "2.0", id: 1, result: { sum: 2 } });
    assert.deepEqual(seen, [{ a: 2, b: 0, extra: "kept" }]);
  });

  test("params that break the schema are -32602 naming each field, exactly {code, message}", async () => {
    const { peer, call } = served();
    let called = false;
    new Dispatcher(peer, { requests: plugin.pluginMethods }).handle("tool.invoke", () => {
      called = true;
      return null;
    });
    const reply = await call("tool.invoke", { tool_name: "", agent_id: 7 });
    const error = reply.error as Record<string, unknown>;
    assert.deepEqual(Object.keys(error).sort(), ["code", "message"]);
    assert.equal(error.code, -32602);
    assert.match(String(error.message), /^invalid tool\.invoke params: tool_name: .+; agent_id: .+/);
    assert.equal(called, false);
    assert.deepEqual(Object.keys(reply).sort(), ["error", "id", "jsonrpc"]);

    const notAnObject = await call("tool.invoke", [1, 2]);
    assert.match(String((notAnObject.error as { message: string }).message), /\(params\): /);
  });

  test("a protocol may shape its own -32602 (AppServer: data.detail)", async () => {
    const { peer, call } = served();
    const { appserver } = await import("@nexo/wire/schemas");
    const { InvalidParamsError, formatIssues } = await import("@nexo/wire");
    new Dispatcher(
      peer,
      { requests: appserver.appServerMethods },
      {
        invalidParams: (_m, issues) =>
          new InvalidParamsError("Invalid params", { detail: formatIssues(issues, "(params)") }),
      },
    ).handle("thread/read", (params) => ({ thread: { id: params.threadId } }) as never);
    const reply = await call("thread/read", { includeTurns: "yes" });
    assert.deepEqual(reply.error, {
      code: -32602,
      message: "Invalid params",
      data: {
        detail:
          "threadId: Invalid input: expected string, received undefined; includeTurns: Invalid input: expected boolean, received string",
      },
    });
  });

  test("missingParams: a request without params (absent or null) is read as the given value", async () => {
    const { peer, call } = served();
    const seen: unknown[] = [];
    new Dispatcher(peer, { requests: table }, { missingParams: { a: 5 } }).handle("math/add", (params) => {
      seen.push(params);
      return { sum: params.a + params.b };
    });
    assert.deepEqual((await call("math/add")).result, { sum: 5 });
    assert.deepEqual((await call("math/add", null)).result, { sum: 5 });
    // Present params are never replaced, even when they break the schema.
    assert.equal(((await call("math/add", {})).error as { code: number }).code, -32602);
    assert.deepEqual(seen, [
      { a: 5, b: 0 },
      { a: 5, b: 0 },
    ]);

    const { peer: strictPeer, call: strictCall } = served();
    new Dispatcher(strictPeer, { requests: table }).handle("math/add", ({ a }) => ({ sum: a }));
    assert.equal(((await strictCall("math/add")).error as { code: number }).code, -32602);
  });

  test("nobody serving a method is -32601 {code, message}; the disposer makes it so again", async () => {
    const { peer, call } = served();
    const dispatcher = new Dispatcher(peer, { requests: table });
    const unknown = await call("math/add", { a: 1 });
    assert.deepEqual(unknown.error, { code: -32601, message: "method not found: math/add" });

    const first = dispatcher.handle("math/add", ({ a }) => ({ sum: a }));
    assert.deepEqual((await call("math/add", { a: 1 })).result, { sum: 1 });
    first();
    assert.deepEqual((await call("math/add", { a: 1 })).error, {
      code: -32601,
      message: "method not found: math/add",
    });
    const second = dispatcher.handle("math/add", ({ a }) => ({ sum: a * 10 }));
    first(); // an old disposer never removes a newer handler
    assert.deepEqual((await call("math/add", { a: 1 })).result, { sum: 10 });
    second();
    second();
    assert.equal(((await call("math/add", { a: 1 })).error as { code: number }).code, -32601);
  });

  test("checkResults: a result that breaks the schema is -32603 and reported; a good one goes out as returned", async () => {
    const { peer, call } = served();
    const failures: SchemaFailure[] = [];
    const dispatcher = new Dispatcher(
      peer,
      { requests: table },
      { checkResults: true, onSchemaFailure: (f) => failures.push(f) },
    );
    dispatcher.handle("math/add", async ({ a, b }) => ({ sum: a + b, extra: true }));
    // @ts-expect-error: `sum` must be a number
    dispatcher.handle("math/broken", () => ({ sum: "three" }));
    // Sent as returned: no `note` default injected, the extra field kept.
    assert.deepEqual((await call("math/add", { a: 1, b: 2 })).result, { sum: 3, extra: true });
    const broken = await call("math/broken", {});
    assert.deepEqual(broken.error, {
      code: -32603,
      message:
        "the math/broken handler returned an invalid result: sum: Invalid input: expected number, received string",
    });
    assert.deepEqual(
      failures.map((f) => [f.method, f.part]),
      [["math/broken", "result"]],
    );
  });

  test("a guard sees the table entry: the admin RPC refuses a method whose capability is not granted", async () => {
    const { peer, call } = served();
    const granted = new Set(["agents_crud"]);
    const dispatcher = new Dispatcher(
      peer,
      { requests: admin.adminMethods },
      {
        guard: (name, entry, _ctx: RequestContext) => {
          if (!granted.has(entry.capability))
            throw new CapabilityNotGrantedError(entry.capability, name, "app1");
        },
      },
    );
    dispatcher.handle("nexo/admin/agents/list", () => ({ agents: [] }) as never);
    dispatcher.handle("nexo/admin/secrets/write", () => {
      throw new Error("must not run");
    });
    assert.equal((await call("nexo/admin/agents/list", {})).error, undefined);
    assert.deepEqual((await call("nexo/admin/secrets/write", { name: "X", value: "y" })).error, {
      code: -32004,
      message: "capability_not_granted",
      data: { capability: "secrets_write", microapp_id: "app1", method: "nexo/admin/secrets/write" },
    });
  });

  test("around sees every outcome of a served request: result, guard refusal, bad params, handler failure", async () => {
    const { peer, call } = served();
    const seen: Array<{ method: string; params: unknown; outcome: string }> = [];
    const dispatcher = new Dispatcher(
      peer,
      { requests: table },
      {
        guard: (_name, _entry, ctx) => {
          if (ctx.id === 99) throw new CapabilityNotGrantedError("math", "math/add", "app1");
        },
        around: (served, serve) => {
          const record = (outcome: string) =>
            seen.push({ method: served.method, params: served.params, outcome });
          try {
            const out = serve();
            return Promise.resolve(out).then(
              (value) => {
                record(`ok ${JSON.stringify(value)}`);
                return value;
              },
              (error: { code?: number }) => {
                record(`error ${error.code}`);
                throw error;
              },
            );
          } catch (error) {
            record(`error ${(error as { code?: number }).code}`);
            throw error;
          }
        },
      },
    );
    dispatcher.handle("math/add", ({ a, b }) => {
      if (a < 0) throw new Error("negative");
      return { sum: a + b };
    });
    assert.deepEqual((await call("math/add", { a: 1, b: 2 })).result, { sum: 3 });
    assert.equal(((await call("math/add", { a: "x" })).error as { code: number }).code, -32602);
    assert.equal(((await call("math/add", { a: -1 })).error as { code: number }).code, -32603);
    assert.deepEqual(seen, [
      { method: "math/add", params: { a: 1, b: 2 }, outcome: 'ok {"sum":3}' },
      { method: "math/add", params: { a: "x" }, outcome: "error -32602" },
      { method: "math/add", params: { a: -1 }, outcome: "error undefined" },
    ]);
    // An unhandled method never reaches around: the peer answers it.
    assert.equal(((await call("math/broken", {})).error as { code: number }).code, -32601);
    assert.equal(seen.length, 3);
  });

  test("notifications: checked params reach the handler; bad ones are dropped and reported", async () => {
    const { peer, notify, call, problems } = served();
    const events: unknown[] = [];
    const dispatcher = new Dispatcher(peer, {
      requests: table,
      notifications: plugin.pluginNotifications,
    });
    dispatcher.on("broker.publish", (params) => {
      events.push(params.topic);
    });
    dispatcher.handle("math/add", ({ a }) => ({ sum: a }));
    notify("broker.publish", { topic: "plugin.outbound.x", event: { topic: "t", source: "s", payload: {} } });
    notify("broker.publish", { topic: 42 });
    await call("math/add", { a: 0 }); // ordered after both notifications
    assert.deepEqual(events, ["plugin.outbound.x"]);
    assert.equal(problems.length, 1);
    assert.equal(problems[0]?.kind, "invalid_notification");
    assert.match(JSON.stringify(problems[0]), /broker\.publish.*topic/);
  });

  test("a method outside the table cannot be registered", () => {
    const { peer } = served();
    const dispatcher = new Dispatcher(peer, { requests: table });
    // @ts-expect-error: not in the table
    assert.throws(() => dispatcher.handle("math/sub", () => ({ sum: 0 })), TypeError);
  });

  test("a method table served over a WebSocket, called with a Caller over the same table", async () => {
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => wss.once("listening", resolve));
    wss.on("connection", (ws) => {
      const peer = new JsonRpcPeer({ transport: new WebSocketTransport(ws), malformed: "reply" });
      new Dispatcher(peer, { requests: appserver.appServerMethods }).handle(
        "thread/unsubscribe",
        (params) => {
          assert.equal(typeof params.threadId, "string");
          return {};
        },
      );
    });
    try {
      const ws = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
      const client = new JsonRpcPeer({ transport: new WebSocketTransport(ws) });
      const calls = new Caller(client, { requests: appserver.appServerMethods });
      assert.deepEqual(await calls.request("thread/unsubscribe", { threadId: "t1" }), {});
      await assert.rejects(
        calls.request("thread/unsubscribe", { threadId: "" }),
        (e: unknown) =>
          e instanceof Error && /invalid thread\/unsubscribe params: threadId: /.test(e.message),
      );
      await assert.rejects(
        calls.request("thread/pause", { threadId: "t1" }),
        /method not found: thread\/pause/,
      );
      client.close();
    } finally {
      await new Promise((resolve) => wss.close(resolve));
    }
  });
});
