/**
 * Every name the upstream TypeScript SDK exports, imported and used the way upstream plugins use
 * them. If this file type-checks (`npx tsc -p tsconfig.tests.json`), upstream plugin code compiles
 * against nexo-plugin-sdk; the tests check that the values behave as upstream documents.
 *
 * Nothing here installs the stdout guard or calls run(): both would take over this test process's
 * stdio, which the test runner uses. The child-process tests cover them.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import * as wire from "@nexo/wire";
import {
  BrokerSender,
  buildErrorResponse,
  buildResponse,
  DEFAULT_RPC_TIMEOUT_MS,
  Event,
  type EventHandler,
  installStdoutGuard,
  isStdoutGuardInstalled,
  JSONRPC_VERSION,
  type JsonRpcErrorResponse,
  type JsonRpcFrame,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type LineWriter,
  type LlmCompleteOptions,
  type LlmCompleteResult,
  type LlmStream,
  MAX_FRAME_BYTES,
  ManifestError,
  type ManifestPluginSection,
  type MemoryEntry,
  type MemoryRecallOptions,
  type Message,
  type ParsedManifest,
  PluginAdapter,
  type PluginAdapterOptions,
  PluginError,
  parseLlmCompleteResult,
  parseManifest,
  parseMemoryEntry,
  RpcDecodeError,
  RpcError,
  RpcServerError,
  RpcTimeoutError,
  RpcTransportError,
  type ShutdownHandler,
  STDOUT_GUARD_MARKER,
  serializeFrame,
  type TokenCount,
  ToolArgumentInvalidError,
  type ToolContext,
  type ToolDef,
  ToolDeniedError,
  ToolError,
  ToolExecutionFailedError,
  type ToolHandler,
  type ToolHandlerWithContext,
  type ToolInvocation,
  ToolNotFoundError,
  ToolUnavailableError,
  textResult,
  toolDefToJson,
  uninstallStdoutGuard,
  VERSION,
  WireError,
} from "nexo-plugin-sdk";

const MANIFEST = `
[plugin]
id = "myplugin"
version = "0.3.0"
name = "My plugin"
description = "Upstream-style plugin"
min_nexo_version = ">=0.1.0"

[plugin.extends]
tools = ["myplugin_weather"]

[[plugin.channels.register]]
kind = "slack"
adapter = "SlackChannelAdapter"
`;

// --- the upstream README / contract §9.3 and §9.5 examples, as plugin code writes them -----------

const onEvent: EventHandler = async (topic, event, broker) => {
  const options: MemoryRecallOptions = {
    agentId: "my_agent",
    query: "user prefers concise answers",
    limit: 5,
  };
  const entries: MemoryEntry[] = await broker.memoryRecall(options);
  const messages: Message[] = [{ role: "user", content: `summarize: ${entries.length} ${topic}` }];
  const completeOptions: LlmCompleteOptions = { provider: "minimax", model: "minimax-m2.5", messages };
  const result: LlmCompleteResult = await broker.llmComplete(completeOptions);
  const stream: LlmStream = broker.llmCompleteStream({ ...completeOptions, systemPrompt: "be brief" });
  let text = "";
  for await (const chunk of stream) text += chunk;
  const final: LlmCompleteResult = await stream.result;
  const usage: TokenCount = final.usage;
  await broker.publish(
    "plugin.inbound.slack",
    Event.new("plugin.inbound.slack", "slack", { summary: result.content, text, usage, from: event.source }),
  );
};

const onShutdown: ShutdownHandler = async () => {};

const weather: ToolDef = {
  name: "myplugin_weather",
  description: "Current weather for a city",
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

const onTool: ToolHandler = (inv: ToolInvocation) => {
  const city = (inv.args as { city?: string } | null)?.city;
  if (!city) throw new ToolArgumentInvalidError("missing `city`");
  return textResult(`Sunny in ${city}`);
};

const onToolWithContext: ToolHandlerWithContext = async (inv, ctx: ToolContext) => {
  const entries = await ctx.broker.memoryRecall({ agentId: inv.agentId ?? "default", query: inv.toolName });
  return textResult(`${ctx.pluginId}: ${entries.length}`);
};

function upstreamOptions(extra: Partial<PluginAdapterOptions> = {}): PluginAdapterOptions {
  return {
    manifestToml: MANIFEST,
    serverVersion: "0.1.0",
    onEvent,
    onShutdown,
    tools: [weather],
    onTool,
    onToolWithContext,
    // Off in this process only: the test runner owns its stdout.
    enableStdoutGuard: false,
    maxFrameBytes: MAX_FRAME_BYTES,
    handleProcessSignals: false,
    ...extra,
  };
}

describe("upstream API surface", () => {
  test("PluginAdapter: constructor validates, `manifest` is the whole document, run() exists", () => {
    const adapter = new PluginAdapter(upstreamOptions());
    const manifest = adapter.manifest as { plugin: { id: string; extends: { tools: string[] } } };
    assert.equal(manifest.plugin.id, "myplugin");
    assert.deepEqual(manifest.plugin.extends.tools, ["myplugin_weather"]);
    assert.equal(typeof adapter.run, "function");
    assert.equal(isStdoutGuardInstalled(), false);
  });

  test("a tool missing from [plugin.extends].tools fails construction with ManifestError", () => {
    assert.throws(
      () =>
        new PluginAdapter(
          upstreamOptions({ tools: [weather, { name: "myplugin_other", description: "d" }] }),
        ),
      (e: unknown) => {
        assert.ok(e instanceof ManifestError);
        assert.ok(e instanceof PluginError);
        assert.equal(e.field, "plugin.extends.tools");
        assert.match(e.message, /myplugin_other/);
        return true;
      },
    );
    const noExtends = MANIFEST.replace('[plugin.extends]\ntools = ["myplugin_weather"]\n', "");
    assert.throws(
      () => new PluginAdapter(upstreamOptions({ manifestToml: noExtends })),
      (e: unknown) => e instanceof ManifestError && /no \[plugin\.extends\]\.tools list/.test(e.message),
    );
    assert.throws(
      () => new PluginAdapter(upstreamOptions({ shutdownDrainTimeoutMs: 0 })),
      (e: unknown) => e instanceof PluginError && /shutdownDrainTimeoutMs/.test(e.message),
    );
  });

  test("tool errors: codes, message prefixes, errorData, and instanceof upstream and wire classes", () => {
    const cases: Array<[ToolError | wire.ToolError, number, string, Record<string, unknown> | undefined]> = [
      [new ToolNotFoundError("myplugin_x"), -33401, "tool not found: myplugin_x", undefined],
      [
        new ToolArgumentInvalidError("bad", { field: "city" }),
        -33402,
        "invalid argument: bad",
        { details: { field: "city" } },
      ],
      [new ToolArgumentInvalidError("bad"), -33402, "invalid argument: bad", undefined],
      [new ToolExecutionFailedError("down"), -33403, "execution failed: down", undefined],
      [new ToolUnavailableError("busy", 5000), -33404, "unavailable: busy", { retry_after_ms: 5000 }],
      [new ToolUnavailableError("busy"), -33404, "unavailable: busy", undefined],
      [new ToolDeniedError("nope"), -33405, "denied: nope", undefined],
      [new ToolError("generic"), -33403, "generic", undefined],
    ];
    for (const [error, code, message, data] of cases) {
      assert.equal(error.code, code);
      assert.equal(error.message, message);
      assert.deepEqual((error as ToolError).errorData(), data);
      assert.ok(error instanceof ToolError, `${error.name} instanceof ToolError`);
      assert.ok(error instanceof PluginError, `${error.name} instanceof PluginError`);
      assert.ok(error instanceof Error);
      assert.ok(error instanceof wire.ToolError, `${error.name} instanceof the wire ToolError`);
      assert.ok(error instanceof wire.RpcError);
    }
    const notFound = new ToolNotFoundError("myplugin_x");
    assert.equal(notFound.toolName, "myplugin_x");
    assert.equal(notFound.name, "ToolNotFoundError");
    assert.ok(notFound instanceof wire.ToolNotFoundError);
    assert.ok(new ToolArgumentInvalidError("x") instanceof wire.ToolArgumentInvalidError);
    assert.ok(new ToolExecutionFailedError("x") instanceof wire.ToolExecutionFailedError);
    assert.ok(new ToolUnavailableError("x") instanceof wire.ToolUnavailableError);
    assert.ok(new ToolDeniedError("x") instanceof wire.ToolDeniedError);
    assert.equal(new ToolUnavailableError("busy", 250).retryAfterMs, 250);
    // Brand, not duck typing: other wire errors are not SDK tool errors, nor PluginErrors.
    assert.ok(!(new wire.ToolDeniedError("x") instanceof ToolError));
    assert.ok(!(new wire.InternalError("x") instanceof ToolError));
    assert.ok(!(new wire.ToolDeniedError("x") instanceof PluginError));
    assert.ok(!(notFound instanceof ToolDeniedError));
    assert.ok(!(new ManifestError("m") instanceof ToolError));
    // Subclassing ToolError keeps ordinary instanceof semantics.
    class QuotaError extends ToolError {}
    const quota = new QuotaError("over quota", -33404, { retry_after_ms: 10 });
    assert.ok(quota instanceof QuotaError && quota instanceof ToolError && quota instanceof PluginError);
    assert.ok(!(new ToolError("plain") instanceof QuotaError));
    assert.deepEqual(quota.errorData(), { retry_after_ms: 10 });
  });

  test("textResult and toolDefToJson produce the wire shapes", () => {
    assert.deepEqual(textResult("hi"), { content: [{ type: "text", text: "hi" }], is_error: false });
    assert.deepEqual(textResult("bad", true), { content: [{ type: "text", text: "bad" }], is_error: true });
    assert.deepEqual(toolDefToJson(weather), {
      name: "myplugin_weather",
      description: "Current weather for a city",
      input_schema: weather.inputSchema,
    });
    assert.deepEqual(toolDefToJson({ name: "n", description: "d" }).input_schema, {});
  });

  test("PluginError family: names, fields, instanceof", () => {
    const server = new RpcServerError(-32602, "invalid params");
    assert.equal(server.code, -32602);
    assert.equal(server.message, "rpc error -32602: invalid params");
    assert.equal(server.name, "RpcServerError");
    const timeout = new RpcTimeoutError(30);
    assert.equal(timeout.seconds, 30);
    assert.equal(timeout.message, "no host reply within 30s");
    for (const error of [server, timeout, new RpcTransportError("t"), new RpcDecodeError("d")]) {
      assert.ok(error instanceof RpcError && error instanceof PluginError && error instanceof Error);
      assert.ok(!(error instanceof wire.RpcError), "never mistaken for a reply error a handler throws");
    }
    assert.ok(new WireError("w") instanceof PluginError);
    assert.ok(!(new WireError("w") instanceof RpcError));
    const manifestError = new ManifestError("bad id", "plugin.id");
    assert.equal(manifestError.field, "plugin.id");
    assert.equal(manifestError.name, "ManifestError");
    const narrowed: unknown = manifestError;
    if (narrowed instanceof ManifestError) assert.equal(narrowed.field, "plugin.id");
    else assert.fail("instanceof narrowing");
  });

  test("Event helpers", () => {
    const event: Event = Event.new("plugin.inbound.slack", "slack", { text: "hi" });
    assert.deepEqual(Event.toJson(event), {
      topic: "plugin.inbound.slack",
      source: "slack",
      payload: { text: "hi" },
    });
    assert.deepEqual(Event.toJson({ ...event, correlation_id: "c1", metadata: {} }), {
      topic: "plugin.inbound.slack",
      source: "slack",
      payload: { text: "hi" },
      correlation_id: "c1",
    });
    assert.deepEqual(Event.toJson({ ...event, metadata: { k: 1 } }).metadata, { k: 1 });
    assert.deepEqual(Event.fromJson({ topic: "t", source: "s", payload: [1, 2] }), {
      topic: "t",
      source: "s",
      payload: {},
    });
    assert.deepEqual(Event.fromJson({ topic: "t", source: "s" }).payload, {});
    const fromHost = Event.fromJson({
      topic: "t",
      source: "s",
      payload: {},
      session_id: "sess",
      id: "e1",
      correlation_id: null,
    });
    assert.equal(fromHost.session_id, "sess");
    assert.equal(fromHost.id, "e1");
    assert.equal("correlation_id" in fromHost, false);
    assert.throws(() => Event.fromJson({ source: "s" }), WireError);
    assert.throws(() => Event.fromJson({ topic: "", source: "s" }), WireError);
    assert.throws(() => Event.fromJson("not an event"), WireError);
  });

  test("BrokerSender on a LineWriter publishes frames; host calls fail at once", async () => {
    const lines: string[] = [];
    const writer: LineWriter = (line) => lines.push(line);
    const broker = new BrokerSender(writer);
    await broker.publish("plugin.inbound.slack", Event.new("plugin.inbound.slack", "slack", { a: 1 }));
    assert.deepEqual(lines, [
      '{"jsonrpc":"2.0","method":"broker.publish","params":{"topic":"plugin.inbound.slack","event":{"topic":"plugin.inbound.slack","source":"slack","payload":{"a":1}}}}\n',
    ]);
    await assert.rejects(broker.memoryRecall({ agentId: "a", query: "q" }), RpcTransportError);
    await assert.rejects(broker.llmComplete({ provider: "p", model: "m", messages: [] }), RpcTransportError);
    const stream = broker.llmCompleteStream({ provider: "p", model: "m", messages: [] });
    const chunks: string[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.deepEqual(chunks, []);
    await assert.rejects(stream.result, RpcTransportError);
    await assert.rejects(
      broker.publish("t", Event.new("t", "s", { bad: Number.POSITIVE_INFINITY })),
      (e: unknown) => e instanceof WireError && /payload\.bad is Infinity/.test(e.message),
    );
    await assert.rejects(broker.publish("", Event.new("t", "s")), WireError);
    assert.equal(lines.length, 1);
  });

  test("the adapter's broker before run(): calls fail with RpcTransportError", async () => {
    const adapter = new PluginAdapter(upstreamOptions());
    await assert.rejects(
      adapter.broker.memoryRecall({ agentId: "a", query: "q" }),
      (e: unknown) => e instanceof RpcTransportError && /not running/.test(e.message),
    );
  });

  test("host-call types and tolerant parsers", () => {
    assert.equal(DEFAULT_RPC_TIMEOUT_MS, 30_000);
    const entry: MemoryEntry = parseMemoryEntry({ id: "m1", agent_id: "a", content: "c", tags: ["x", 3] });
    assert.deepEqual(entry, {
      id: "m1",
      agent_id: "a",
      content: "c",
      tags: ["x"],
      concept_tags: [],
      created_at: "",
      memory_type: null,
    });
    assert.deepEqual(parseMemoryEntry(null).id, "");
    const result: LlmCompleteResult = parseLlmCompleteResult({
      finish_reason: "stop",
      usage: { prompt_tokens: 2 },
    });
    assert.deepEqual(result, {
      content: null,
      finish_reason: "stop",
      usage: { prompt_tokens: 2, completion_tokens: 0 },
    });
    assert.deepEqual(parseLlmCompleteResult("garbage"), {
      content: null,
      finish_reason: "",
      usage: { prompt_tokens: 0, completion_tokens: 0 },
    });
  });

  test("parseManifest returns the [plugin] section and the raw document", () => {
    const parsed: ParsedManifest = parseManifest(MANIFEST);
    const section: ManifestPluginSection = parsed.plugin;
    assert.deepEqual(section, {
      id: "myplugin",
      version: "0.3.0",
      name: "My plugin",
      description: "Upstream-style plugin",
    });
    assert.equal((parsed.raw.plugin as { min_nexo_version: string }).min_nexo_version, ">=0.1.0");
  });

  test("wire helpers", () => {
    assert.equal(JSONRPC_VERSION, "2.0");
    assert.equal(MAX_FRAME_BYTES, 1 << 20);
    const id: JsonRpcId = 7;
    const request: JsonRpcRequest = { jsonrpc: JSONRPC_VERSION, id, method: "tool.invoke", params: {} };
    const notification: JsonRpcNotification = { jsonrpc: JSONRPC_VERSION, method: "broker.publish" };
    const response: JsonRpcResponse = buildResponse(id, { ok: true });
    const errorResponse: JsonRpcErrorResponse = buildErrorResponse(null, -32601, "method not found");
    const frames: JsonRpcFrame[] = [request, notification, response, errorResponse];
    assert.deepEqual(response, { jsonrpc: "2.0", id: 7, result: { ok: true } });
    assert.deepEqual(errorResponse, {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32601, message: "method not found" },
    });
    assert.deepEqual(buildErrorResponse(1, -33402, "bad", { details: 1 }).error.data, { details: 1 });
    assert.equal(serializeFrame(response), '{"jsonrpc":"2.0","id":7,"result":{"ok":true}}\n');
    assert.equal(frames.map((f) => serializeFrame(f)).length, 4);
    assert.throws(
      () => serializeFrame(buildResponse(1, { scores: [1, Number.NaN] })),
      (e: unknown) => e instanceof WireError && /frame\.result\.scores\[1\] is NaN/.test(e.message),
    );
  });

  test("stdout guard exports and VERSION", () => {
    assert.equal(STDOUT_GUARD_MARKER, "[stdout-guard]");
    assert.equal(typeof installStdoutGuard, "function");
    assert.equal(typeof uninstallStdoutGuard, "function");
    uninstallStdoutGuard(); // not installed here: a no-op
    assert.equal(isStdoutGuardInstalled(), false);
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    assert.equal(VERSION, pkg.version);
  });
});
