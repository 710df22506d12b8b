import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ScriptedHost } from "./helpers/scripted-host.js";

const MIB = 1 << 20;

/** A tool.invoke line of exactly `bytes` bytes (newline excluded), padded inside `args`. */
function requestLine(id: number, bytes: number): string {
  const head = `{"jsonrpc":"2.0","id":${id},"method":"tool.invoke","params":{"tool_name":"demo_sleep","args":{"ms":0,"pad":"`;
  const tail = `"}}}`;
  return head + "x".repeat(bytes - head.length - tail.length) + tail;
}

describe("what the plugin does with unusable input", () => {
  let host: ScriptedHost;
  before(async () => {
    host = new ScriptedHost("demo-plugin.ts");
    await host.peer.request("initialize", {});
  });
  after(async () => {
    host.assertFramesIntact();
    await host.dispose();
  });

  const repliedTo = (id: number) =>
    host.stdoutLines.some((line) => (JSON.parse(line) as { id?: unknown }).id === id);

  test("a line over 1 MiB is dropped and logged; the next request is served", async () => {
    const line = requestLine(9001, MIB + 1);
    assert.equal(Buffer.byteLength(line), MIB + 1);
    host.writeRaw(`${line}\n`);
    await host.stderrMatch(
      /dropped an unusable frame \{[^}]*"kind":"oversize","bytes":1048577,"maxBytes":1048576/,
    );
    const next = await host.peer.request("tool.invoke", { tool_name: "demo_sleep", args: { ms: 0 } });
    assert.deepEqual(next, { content: [{ type: "text", text: "slept 0 ms" }], is_error: false });
    assert.equal(repliedTo(9001), false);
  });

  test("a line of exactly 1 MiB is accepted", async () => {
    const line = requestLine(9002, MIB);
    assert.equal(Buffer.byteLength(line), MIB);
    host.writeRaw(`${line}\n`);
    await host.until("the reply to id 9002", () => (repliedTo(9002) ? true : undefined));
  });

  test("a far larger line is dropped while it streams in, without stopping the plugin", async () => {
    const chunk = Buffer.alloc(MIB, "y");
    for (let i = 0; i < 8; i++) host.writeRaw(chunk);
    host.writeRaw("\n");
    await host.stderrMatch(/"kind":"oversize","bytes":8388608/);
    assert.ok(await host.peer.request("tool.invoke", { tool_name: "demo_echo", args: {} }));
  });

  test("malformed JSON, arrays, scalars, blank lines and CRLF: logged or skipped, never answered", async () => {
    const before = host.stdoutLines.length;
    host.writeRaw("{not json\n");
    host.writeRaw("[1,2,3]\n");
    host.writeRaw("42\n");
    host.writeRaw("\n   \n");
    host.writeRaw(
      '{"jsonrpc":"2.0","id":9003,"method":"tool.invoke","params":{"tool_name":"demo_sleep","args":{"ms":0}}}\r\n',
    );
    await host.until("the reply to id 9003", () => (repliedTo(9003) ? true : undefined));
    assert.equal(host.stdoutLines.length, before + 1, "only the CRLF request was answered");
    // stderr is another pipe: its lines may trail the reply on stdout.
    await host.stderrMatch(/"kind":"parse_error"/);
    await host.stderrMatch(/batches are not supported/);
    await host.stderrMatch(/a message must be a JSON object/);
  });

  test("a reply to an id the plugin never used is logged and dropped", async () => {
    host.writeRaw('{"jsonrpc":"2.0","id":4242,"result":{}}\n');
    host.writeRaw('{"jsonrpc":"2.0","id":"1","result":{}}\n');
    await host.stderrMatch(/response for an unknown or expired request id \{[^}]*"id":4242/);
    await host.stderrMatch(/response for an unknown or expired request id \{[^}]*"id":"1"/);
  });

  test("a known request method sent as a notification is dropped with a warning", async () => {
    host.writeRaw('{"jsonrpc":"2.0","method":"tool.invoke","params":{"tool_name":"demo_echo"}}\n');
    await host.stderrMatch(/tool\.invoke arrived as a notification \(no id\)/);
  });
});
