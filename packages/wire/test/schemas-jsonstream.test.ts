import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { z } from "zod";
import {
  JsonStreamCommandSchema,
  JsonStreamErrorEventSchema,
  JsonStreamEventSchema,
  JsonStreamMessageCommandSchema,
  JsonStreamReadyEventSchema,
  JsonStreamToolApproveCommandSchema,
  JsonStreamToolDenyCommandSchema,
  JsonStreamToolRequestEventSchema,
  JsonStreamToolResultEventSchema,
  messageCommandText,
} from "../src/schemas/jsonstream.js";

/** Parses or fails with the issues printed, so a broken example names its own problem. */
function parseOk<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) assert.fail(`expected to parse ${JSON.stringify(value)}:\n${result.error.message}`);
  return result.data;
}

/** Asserts rejection and returns the path of each issue, joined with dots. */
function rejectedPaths(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  assert.equal(result.success, false, `expected ${JSON.stringify(value)} to be rejected`);
  return result.error!.issues.map((issue) => issue.path.join("."));
}

// Every complete JSON example of specs/json-stream-protocol.txt, verbatim. Lifecycle lines that
// abbreviate with `...` or `{...}` are not JSON and are left out.
const specEvents: string[] = [
  `{"type":"ready","version":"0.1.0","session_id":"a1b2c3","capabilities":{"tool_approval":true,"thinking":true,"mcp":true}}`,
  `{"type":"stream_start","msg_id":"abc-123"}`,
  `{"type":"text_delta","text":"Hello, ","msg_id":"abc-123"}`,
  `{"type":"thinking","text":"Let me analyze the code structure...","msg_id":"abc-123"}`,
  `{"type":"tool_request","msg_id":"abc-123","call_id":"tool-call-001","tool":{"name":"Write","category":"edit","args":{"file_path":"/src/main.rs","content":"fn main() { ... }"},"description":"Write to /src/main.rs"}}`,
  `{"type":"tool_running","msg_id":"abc-123","call_id":"tool-call-001","tool_name":"Write"}`,
  `{"type":"tool_result","msg_id":"abc-123","call_id":"tool-call-001","tool_name":"Write","status":"success","output":"File written successfully","output_type":"text"}`,
  `{"type":"tool_result","msg_id":"abc-123","call_id":"tool-call-002","tool_name":"Edit","status":"success","output":"--- a/src/main.rs\\n+++ b/src/main.rs\\n@@ -1,3 +1,3 @@\\n-old line\\n+new line","output_type":"diff","metadata":{"file_path":"/src/main.rs"}}`,
  `{"type":"tool_cancelled","msg_id":"abc-123","call_id":"tool-call-001","reason":"User denied"}`,
  `{"type":"stream_end","msg_id":"abc-123","usage":{"input_tokens":1500,"output_tokens":320,"cache_read_tokens":800,"cache_write_tokens":200}}`,
  `{"type":"error","msg_id":"abc-123","error":{"code":"provider_error","message":"Rate limit exceeded","retryable":true}}`,
  `{"type":"info","msg_id":"abc-123","message":"Stream interrupted, retrying... (1/2)"}`,
  // §3.2 / §3.3 lifecycle lines
  `{"type":"stream_start","msg_id":"m1"}`,
  `{"type":"text_delta","text":"Hi! ","msg_id":"m1"}`,
  `{"type":"text_delta","text":"How can I help?","msg_id":"m1"}`,
  `{"type":"stream_start","msg_id":"m2"}`,
  `{"type":"text_delta","text":"I'll create the file.","msg_id":"m2"}`,
  `{"type":"tool_running","msg_id":"m2","call_id":"t1","tool_name":"Write"}`,
  `{"type":"text_delta","text":"File created successfully.","msg_id":"m2"}`,
  // §4 error handling
  `{"type":"error","msg_id":null,"error":{"code":"protocol_error","message":"Unknown command type: foo","retryable":false}}`,
  `{"type":"error","msg_id":"m3","error":{"code":"provider_error","message":"Rate limit exceeded. Retry after 30s.","retryable":true}}`,
  `{"type":"error","msg_id":null,"error":{"code":"config_error","message":"ANTHROPIC_API_KEY not set","retryable":false}}`,
];

const specCommands: string[] = [
  `{"type":"message","msg_id":"abc-123","input":"Read the file src/main.rs and explain the code","files":["/path/to/attached/file.png"]}`,
  `{"type":"stop"}`,
  `{"type":"tool_approve","call_id":"tool-call-001","scope":"once"}`,
  `{"type":"tool_deny","call_id":"tool-call-001","reason":"Not allowed to write this file"}`,
  `{"type":"init_history","text":"Previous conversation summary:\\nUser asked about X...\\nAssistant replied with Y..."}`,
  `{"type":"set_mode","mode":"yolo"}`,
  // §3 lifecycle lines
  `{"type":"message","msg_id":"m1","input":"Hello"}`,
  `{"type":"message","msg_id":"m2","input":"Create a hello.rs file"}`,
  `{"type":"tool_approve","call_id":"t1","scope":"once"}`,
  `{"type":"tool_approve","call_id":"t2","scope":"once"}`,
];

// What the reference writes and AionUi reads beyond the spec (notes/json-stream-details.md §2.2, §5).
const referenceCapabilities = {
  tool_approval: true,
  image_input: "unknown",
  thinking: true,
  effort: false,
  effort_levels: [],
  modes: ["default", "auto_edit", "yolo"],
  current_mode: "default",
  mcp: false,
};
const referenceEvents: unknown[] = [
  {
    type: "ready",
    version: "0.2.10",
    session_id: "0190c3e4-7a1b-7c2d-8e3f-123456789abc",
    capabilities: referenceCapabilities,
  },
  { type: "ready", version: "0.2.10", capabilities: referenceCapabilities },
  {
    type: "ready",
    version: "0.2.10",
    capabilities: {
      ...referenceCapabilities,
      current_model: "gpt-5",
      available_models: [
        { id: "gpt-5", display_name: "GPT-5", context_window: 400000, effort_levels: ["low", "high"] },
      ],
      account_limits: {
        plan_type: "plus",
        limits: [
          {
            limit_id: "codex",
            primary: { used_percent: 12.5, window_minutes: 300, resets_at: 1760000000 },
            credits: { has_credits: true, unlimited: false, balance: "4.20" },
          },
        ],
      },
      context_limit: 200000,
      compaction: {
        enabled: true,
        context_window: 200000,
        output_reserve: 8192,
        autocompact_trigger: 160000,
        emergency_limit: 190000,
      },
    },
  },
  { type: "config_changed", capabilities: { ...referenceCapabilities, current_mode: "auto_edit" } },
  { type: "mcp_ready", name: "team", tools: ["send_message", "list_members"] },
  { type: "mcp_ready", name: "broken", tools: [] },
  { type: "pong" },
  { type: "info", msg_id: "", message: "mode updated: yolo" },
  { type: "info", msg_id: "m1", message: "Tool call: Read" },
  { type: "stream_end", msg_id: "m1" },
  { type: "stream_end", msg_id: "m1", usage: { input_tokens: 0, output_tokens: 0 } },
  { type: "error", error: { code: "internal_error", message: "User aborted the session", retryable: false } },
  {
    type: "tool_result",
    msg_id: "m1",
    call_id: "c1",
    tool_name: "ViewImage",
    status: "error",
    output: "iVBORw0KGgo=",
    output_type: "image",
  },
];
const referenceCommands: unknown[] = [
  { type: "message", msg_id: "m1", content: "Hello", files: [] },
  { type: "message", msg_id: "m2", content: "Look at this" },
  { type: "tool_approve", call_id: "t1" },
  { type: "tool_approve", call_id: "t1", scope: "always" },
  { type: "tool_deny", call_id: "t1" },
  { type: "set_mode", mode: "auto_edit" },
  { type: "set_mode", mode: "default" },
  { type: "ping" },
  { type: "set_config", model: "claude-sonnet-4", thinking: "enabled", thinking_budget: 10000 },
  { type: "set_config", effort: "", image_input: "supported", compaction: "safe" },
  { type: "set_config" },
  {
    type: "add_mcp_server",
    name: "fs",
    transport: "stdio",
    command: "npx",
    args: ["-y", "server-fs"],
    env: { A: "1" },
  },
  {
    type: "add_mcp_server",
    name: "remote",
    transport: "streamable-http",
    url: "https://x.test/mcp",
    headers: { a: "b" },
  },
  { type: "add_mcp_server", name: "remote2", transport: "streamable_http", url: "https://x.test/mcp" },
  { type: "add_mcp_server", name: "legacy", transport: "sse", url: "https://x.test/sse" },
];

describe("JSON stream events", () => {
  it("parses every event example of the spec, unchanged", () => {
    for (const line of specEvents) {
      const value: unknown = JSON.parse(line);
      assert.deepEqual(parseOk(JsonStreamEventSchema, value), value);
    }
  });

  it("parses what the reference writes and AionUi reads beyond the spec", () => {
    for (const value of referenceEvents) assert.deepEqual(parseOk(JsonStreamEventSchema, value), value);
  });

  it("declares exactly the event types of the spec plus the reference's additions", () => {
    const types = JsonStreamEventSchema.options.map((option) => option.shape.type.value).sort();
    assert.deepEqual(types, [
      "config_changed",
      "error",
      "info",
      "mcp_ready",
      "pong",
      "ready",
      "stream_end",
      "stream_start",
      "text_delta",
      "thinking",
      "tool_cancelled",
      "tool_request",
      "tool_result",
      "tool_running",
    ]);
  });

  it("defaults tool_result.output_type to text", () => {
    const event = parseOk(JsonStreamToolResultEventSchema, {
      type: "tool_result",
      msg_id: "m1",
      call_id: "c1",
      tool_name: "Read",
      status: "success",
      output: "ok",
    });
    assert.equal(event.output_type, "text");
  });

  it("keeps unknown fields at every level", () => {
    const value = {
      type: "tool_request",
      msg_id: "m1",
      call_id: "c1",
      trace: { span: 7 },
      tool: {
        name: "Bash",
        category: "exec",
        args: { cmd: "ls" },
        description: "Execute: ls",
        danger: "low",
      },
    };
    assert.deepEqual(parseOk(JsonStreamEventSchema, value), value);
    const ready = parseOk(JsonStreamReadyEventSchema, {
      type: "ready",
      version: "1.0.0",
      capabilities: { tool_approval: true, thinking: false, mcp: true, sandbox: "bwrap" },
    });
    assert.equal(ready.capabilities.sandbox, "bwrap");
    const error = parseOk(JsonStreamErrorEventSchema, {
      type: "error",
      msg_id: "m1",
      error: { code: "tool_error", message: "boom", retryable: false, tool: "Bash" },
    });
    assert.equal(error.error.tool, "Bash");
  });

  it("rejects invalid events with the offending path", () => {
    const toolRequest = {
      type: "tool_request",
      msg_id: "m1",
      call_id: "c1",
      tool: { name: "Write", category: "write", args: {}, description: "Write to x" },
    };
    assert.deepEqual(rejectedPaths(JsonStreamToolRequestEventSchema, toolRequest), ["tool.category"]);
    assert.deepEqual(
      rejectedPaths(JsonStreamEventSchema, { ...toolRequest, tool: { ...toolRequest.tool, args: [] } }),
      ["tool.category", "tool.args"],
    );
    // The reference's `engine_error` is not a spec code; nexo must emit one of the documented five.
    assert.deepEqual(
      rejectedPaths(JsonStreamEventSchema, {
        type: "error",
        error: { code: "engine_error", message: "x", retryable: false },
      }),
      ["error.code"],
    );
    assert.deepEqual(
      rejectedPaths(JsonStreamEventSchema, {
        type: "error",
        msg_id: null,
        error: { code: "tool_error", message: "x" },
      }),
      ["error.retryable"],
    );
    assert.deepEqual(
      rejectedPaths(JsonStreamEventSchema, {
        type: "stream_end",
        msg_id: "m1",
        usage: { input_tokens: -1, output_tokens: 2 },
      }),
      ["usage.input_tokens"],
    );
    assert.deepEqual(
      rejectedPaths(JsonStreamEventSchema, {
        type: "tool_result",
        msg_id: "m1",
        call_id: "c1",
        tool_name: "Read",
        status: "ok",
        output: "x",
        output_type: "html",
      }),
      ["status", "output_type"],
    );
    assert.deepEqual(rejectedPaths(JsonStreamEventSchema, { type: "info", message: "no msg id" }), [
      "msg_id",
    ]);
    assert.deepEqual(
      rejectedPaths(JsonStreamEventSchema, {
        type: "ready",
        version: "1",
        capabilities: { tool_approval: true, thinking: true, mcp: true, current_mode: "auto" },
      }),
      ["capabilities.current_mode"],
    );
    assert.deepEqual(rejectedPaths(JsonStreamEventSchema, { type: "mcp_ready", name: "x", tools: [1] }), [
      "tools.0",
    ]);
  });

  it("rejects an unknown or missing event type at `type`", () => {
    assert.deepEqual(rejectedPaths(JsonStreamEventSchema, { type: "call_announced", msg_id: "m1" }), [
      "type",
    ]);
    assert.deepEqual(rejectedPaths(JsonStreamEventSchema, { msg_id: "m1" }), ["type"]);
    // A command is not an event.
    assert.deepEqual(rejectedPaths(JsonStreamEventSchema, { type: "ping" }), ["type"]);
  });
});

describe("JSON stream commands", () => {
  it("parses every command example of the spec, unchanged", () => {
    for (const line of specCommands) {
      const value: unknown = JSON.parse(line);
      const parsed = parseOk(JsonStreamCommandSchema, value);
      // `files` gets its default on the two lifecycle messages that omit it; nothing else changes.
      const expected =
        parsed.type === "message" && !("files" in (value as object))
          ? { ...(value as object), files: [] }
          : value;
      assert.deepEqual(parsed, expected);
    }
  });

  it("parses what the real client (AionUi) sends", () => {
    for (const value of referenceCommands) parseOk(JsonStreamCommandSchema, value);
  });

  it("reads a message's text from `input` (spec) or `content` (AionUi)", () => {
    const spec = parseOk(JsonStreamMessageCommandSchema, { type: "message", msg_id: "m1", input: "hi" });
    const aionui = parseOk(JsonStreamMessageCommandSchema, {
      type: "message",
      msg_id: "m2",
      content: "hello",
    });
    const both = parseOk(JsonStreamMessageCommandSchema, {
      type: "message",
      msg_id: "m3",
      input: "a",
      content: "b",
    });
    assert.equal(messageCommandText(spec), "hi");
    assert.equal(messageCommandText(aionui), "hello");
    assert.equal(messageCommandText(both), "a");
    assert.deepEqual(aionui.files, []);
  });

  it("fills the documented defaults of optional command fields", () => {
    assert.equal(
      parseOk(JsonStreamToolApproveCommandSchema, { type: "tool_approve", call_id: "t1" }).scope,
      "once",
    );
    assert.equal(parseOk(JsonStreamToolDenyCommandSchema, { type: "tool_deny", call_id: "t1" }).reason, "");
  });

  it("keeps unknown fields", () => {
    const value = { type: "set_config", model: "m", reasoning_summary: "auto" };
    assert.deepEqual(parseOk(JsonStreamCommandSchema, value), value);
    const message = { type: "message", msg_id: "m1", content: "x", files: [], client_ts: 17 };
    assert.deepEqual(parseOk(JsonStreamCommandSchema, message), message);
  });

  it("rejects invalid commands with the offending path", () => {
    assert.deepEqual(rejectedPaths(JsonStreamCommandSchema, { type: "message", msg_id: "m1" }), ["input"]);
    assert.deepEqual(rejectedPaths(JsonStreamCommandSchema, { type: "message", input: "hi" }), ["msg_id"]);
    assert.deepEqual(
      rejectedPaths(JsonStreamCommandSchema, { type: "message", msg_id: "m1", input: "x", files: "a.png" }),
      ["files"],
    );
    assert.deepEqual(
      rejectedPaths(JsonStreamCommandSchema, { type: "tool_approve", call_id: "t1", scope: "forever" }),
      ["scope"],
    );
    assert.deepEqual(rejectedPaths(JsonStreamCommandSchema, { type: "tool_deny", reason: "no" }), [
      "call_id",
    ]);
    assert.deepEqual(rejectedPaths(JsonStreamCommandSchema, { type: "set_mode", mode: "auto" }), ["mode"]);
    assert.deepEqual(rejectedPaths(JsonStreamCommandSchema, { type: "init_history" }), ["text"]);
    assert.deepEqual(
      rejectedPaths(JsonStreamCommandSchema, { type: "set_config", thinking: "on", compaction: "max" }),
      ["thinking", "compaction"],
    );
    assert.deepEqual(
      rejectedPaths(JsonStreamCommandSchema, { type: "add_mcp_server", name: "x", transport: "http" }),
      ["transport"],
    );
  });

  it("rejects an unknown or missing command type at `type`", () => {
    assert.deepEqual(rejectedPaths(JsonStreamCommandSchema, { type: "foo" }), ["type"]);
    assert.deepEqual(rejectedPaths(JsonStreamCommandSchema, {}), ["type"]);
    assert.deepEqual(rejectedPaths(JsonStreamCommandSchema, { type: "pong" }), ["type"]);
  });
});
