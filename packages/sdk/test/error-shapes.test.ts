/**
 * Issue 10.2: every error a plugin built on the SDK writes has exactly the keys the plugin contract
 * gives it (§3: `{code, message}`; `data` only where §5 defines one: `details` on -33402,
 * `retry_after_ms` on -33404, and what a channel / LLM / memory handler passes), because strict
 * hosts compare the error object's keys. Checked on the raw line a real child process wrote.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertErrorKeys, type Frame, rawReply } from "./helpers/raw-reply.js";
import { ScriptedHost } from "./helpers/scripted-host.js";

describe("error shapes on the wire: a plugin with no handlers", () => {
  let host: ScriptedHost;
  before(() => {
    host = new ScriptedHost("bare-plugin.ts");
  });
  after(() => host.dispose());

  test("an unknown method is exactly {code: -32601, message}", async () => {
    const frame = await rawReply(host, 101, "no.such.method", {});
    assertErrorKeys(frame, -32601);
    assert.equal(frame.error!.message, "method not found: no.such.method");
  });

  test("every contract method without a handler is exactly {code: -32601, message}", async () => {
    let id = 200;
    for (const method of [
      "tool.invoke",
      "channel.start",
      "channel.stop",
      "channel.send_outbound",
      "llm.chat",
      "hook.on_hook",
      "memory.vector_upsert",
      "memory.vector_search",
      "memory.vector_delete",
    ]) {
      assertErrorKeys(await rawReply(host, ++id, method, {}), -32601);
    }
  });

  test("an id of null is answered with id null and the same shape", async () => {
    host.writeRaw('{"jsonrpc":"2.0","id":null,"method":"nope","params":{}}\n');
    const line = await host.until("the reply to id null", () =>
      host.stdoutLines.find((l) => (JSON.parse(l) as Frame).id === null),
    );
    assertErrorKeys(JSON.parse(line) as Frame, -32601);
  });

  test("initialize with params of the wrong type is exactly {code: -32602, message}", async () => {
    const frame = await rawReply(host, 301, "initialize", { nexo_version: 5 });
    assertErrorKeys(frame, -32602);
    assert.match(String(frame.error!.message), /^invalid initialize params: nexo_version: /);
  });
});

describe("error shapes on the wire: handler errors", () => {
  let host: ScriptedHost;
  before(() => {
    host = new ScriptedHost("demo-plugin.ts", { env: { DEMO_DRAIN_MS: "300" } });
  });
  after(() => host.dispose());

  let id = 1000;
  const fail = (kind: string) =>
    rawReply(host, ++id, "tool.invoke", { tool_name: "demo_fail", args: { kind } });

  test("tool errors carry data only where §5.t defines it", async () => {
    assertErrorKeys(await fail("not_found"), -33401);
    assertErrorKeys(await fail("invalid"), -33402, ["details"]);
    assertErrorKeys(await fail("failed"), -33403);
    assertErrorKeys(await fail("unavailable"), -33404, ["retry_after_ms"]);
    assertErrorKeys(await fail("denied"), -33405);
    assertErrorKeys(await fail("base"), -33403);
    assertErrorKeys(await fail("plain exception"), -33403);
    assertErrorKeys(await rawReply(host, ++id, "tool.invoke", { tool_name: "demo_nan", args: {} }), -33403);
  });

  test("invalid params and an invalid handler result carry no data", async () => {
    assertErrorKeys(await rawReply(host, ++id, "tool.invoke", { tool_name: "" }), -32602);
    assertErrorKeys(await rawReply(host, ++id, "tool.invoke", [1, 2]), -32602);
    assertErrorKeys(
      await rawReply(host, ++id, "channel.send_outbound", { kind: "loopback", msg: { kind: "custom" } }),
      -32603,
    );
  });

  test("typed channel, LLM and memory errors keep exactly the data the handler gave", async () => {
    const send = (to: string) =>
      rawReply(host, ++id, "channel.send_outbound", {
        kind: "loopback",
        msg: { kind: "text", to, body: "x" },
      });
    assertErrorKeys(await send("auth"), -33002);
    assertErrorKeys(await send("flood"), -33004, ["retry_after_secs"]);
    assertErrorKeys(await send("nobody"), -33003, ["recipient", "reason"]);
    const chat = (model: string) =>
      rawReply(host, ++id, "llm.chat", {
        provider: "echo_llm",
        model,
        stream: false,
        request: { model, messages: [{ role: "user", content: "hi" }], max_tokens: 8, temperature: 0 },
      });
    assertErrorKeys(await chat("missing"), -33104);
    assertErrorKeys(await chat("boom"), -32603);
    assertErrorKeys(
      await rawReply(host, ++id, "memory.vector_upsert", {
        backend: "mem_vec",
        collection: "readonly",
        records: [],
      }),
      -33304,
    );
  });

  test("work refused or abandoned by shutdown carries no data", async () => {
    const hung = rawReply(host, ++id, "tool.invoke", { tool_name: "demo_hang", args: {} });
    const ack = rawReply(host, ++id, "shutdown", {});
    const refused = rawReply(host, ++id, "tool.invoke", { tool_name: "demo_echo", args: {} });
    assertErrorKeys(await refused, -33403);
    assertErrorKeys(await hung, -33403);
    assert.deepEqual((await ack).result, { ok: true });
  });
});
