/**
 * The microapp tool wrapper against a host that answers as told: what `tools/call` carries (the
 * binding, the inbound only when there is one, the call's signal), and every outcome as the output
 * the model reads — `{output}` (a string as it is, anything else as JSON), `{error}`, each kind of
 * failed call, and a failure before anything is sent (the resolver, the host throwing).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ConnectionClosedError,
  MalformedReplyError,
  RequestCancelledError,
  RpcError,
  TimeoutError,
} from "@nexo/wire";
import type { microapp } from "@nexo/wire/schemas";
import type { ToolContext } from "../../../src/engine/types.js";
import { MicroappUnavailableError } from "../../../src/extensions/microapps/errors.js";
import {
  agentOnlyOrigin,
  MicroappTool,
  type OriginResolver,
} from "../../../src/extensions/microapps/tool.js";

type Answer = () => Promise<microapp.MicroappToolCallResult>;

function rig(answer: Answer, origin: OriginResolver = agentOnlyOrigin) {
  const calls: Array<{ params: microapp.MicroappToolCallParams; signal: AbortSignal | undefined }> = [];
  const host = {
    id: "notes",
    timeoutMs: 30_000,
    callTool(params: microapp.MicroappToolCallParams, options: { signal?: AbortSignal } = {}) {
      calls.push({ params, signal: options.signal });
      return answer();
    },
  };
  const tool = new MicroappTool(host, { name: "notes_add", input_schema: { type: "object" } }, origin);
  const turn = new AbortController();
  const ctx: ToolContext = {
    signal: turn.signal,
    sessionId: "s1",
    agentId: "ana",
    callId: "c1",
    workspace: "/tmp",
    unconfined: false,
  };
  return {
    tool,
    calls,
    ctx,
    run: (args: Record<string, unknown> = { text: "hi" }) => tool.execute(args, ctx),
  };
}

const metadata = { microapp_id: "notes" };

describe("microapp tool: what tools/call carries", () => {
  it("the tool, the args and the binding; no inbound key when the origin has none; the call's signal", async () => {
    const { calls, ctx, run } = rig(async () => ({ output: "ok" }));
    const args = { text: "hi" };
    await run(args);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]!.params, { tool: "notes_add", args, binding_context: { agent_id: "ana" } });
    assert.equal(Object.hasOwn(calls[0]!.params, "inbound"), false);
    assert.equal(calls[0]!.params.args, args, "the args as given, not a copy");
    assert.equal(calls[0]!.signal, ctx.signal);
  });

  it("the inbound the origin resolver gives", async () => {
    const inbound = { kind: "whatsapp_message", from: "+57300", session_id: "s1" };
    const binding = { agent_id: "ana", channel: "whatsapp", account_id: "acme" };
    const { calls, run } = rig(
      async () => ({ output: "ok" }),
      () => ({ binding_context: binding, inbound }),
    );
    await run();
    assert.deepEqual(calls[0]!.params, {
      tool: "notes_add",
      args: { text: "hi" },
      binding_context: binding,
      inbound,
    });
  });
});

describe("microapp tool: outcomes as outputs", () => {
  it("{output}: a string as it is, anything else as indented JSON, null as null", async () => {
    assert.deepEqual(await rig(async () => ({ output: "saved" })).run(), { output: "saved", metadata });
    assert.deepEqual(await rig(async () => ({ output: { id: 7, tags: ["a"] } })).run(), {
      output: JSON.stringify({ id: 7, tags: ["a"] }, null, 2),
      metadata,
    });
    assert.deepEqual(await rig(async () => ({ output: null })).run(), { output: "null", metadata });
  });

  it("{error} is an error output naming the tool", async () => {
    assert.deepEqual(await rig(async () => ({ error: "the calendar is full" })).run(), {
      output: "notes_add failed: the calendar is full",
      isError: true,
      metadata,
    });
  });

  it("each kind of failed call is an error output saying why", async () => {
    const cases: Array<[Error, string]> = [
      [
        new TimeoutError("tools/call", 30_000),
        "notes_add: no reply from microapp notes within 30000 ms (the call was abandoned; the microapp keeps running)",
      ],
      [new RpcError(-32099, "boom"), "notes_add: microapp notes answered error -32099: boom"],
      [
        new ConnectionClosedError("the pipe broke"),
        "notes_add: microapp notes stopped during the call (the pipe broke)",
      ],
      [new RequestCancelledError("tools/call"), "notes_add: cancelled"],
      [
        new MicroappUnavailableError("notes", "stopped"),
        'notes_add: microapp "notes" is not running (state: stopped)',
      ],
      [
        new MalformedReplyError("tools/call", "(result): bad"),
        "notes_add: malformed tools/call reply: (result): bad",
      ],
      [new Error("disk full"), "notes_add: failed: disk full"],
    ];
    for (const [error, output] of cases) {
      assert.deepEqual(
        await rig(() => Promise.reject(error)).run(),
        { output, isError: true, metadata },
        error.name,
      );
    }
  });

  it("a host that throws instead of rejecting, and a resolver that throws, are error outputs too", async () => {
    const throwing = rig(() => {
      throw new MicroappUnavailableError("notes", "failed");
    });
    assert.deepEqual(await throwing.run(), {
      output: 'notes_add: microapp "notes" is not running (state: failed)',
      isError: true,
      metadata,
    });
    const resolver = rig(
      async () => ({ output: "never" }),
      () => {
        throw new Error("no such session");
      },
    );
    assert.deepEqual(await resolver.run(), {
      output: "notes_add: failed: no such session",
      isError: true,
      metadata,
    });
    assert.equal(resolver.calls.length, 0, "nothing was sent");
  });
});
