import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { z } from "zod";
import { MicroappOutboundRequestSchema } from "../src/schemas/admin/envelope.js";
import { adminNotifications } from "../src/schemas/admin/notifications.js";
import {
  ExtensionsFileSchema,
  HOOK_METHOD_PREFIX,
  hookMethodName,
  hookNameFromMethod,
  isValidMicroappToolName,
  MICROAPP_TOOL_NAME_REGEX,
  MicroappAgentsUpdatedParamsSchema,
  MicroappBindingContextSchema,
  MicroappDaemonRequestSchema,
  MicroappDispatchParamsSchema,
  MicroappExtensionEntrySchema,
  MicroappHookDecisionSchema,
  MicroappInboundRefSchema,
  MicroappInitializeParamsSchema,
  MicroappInitializeResultSchema,
  MicroappManifestSchema,
  MicroappNotificationFrameSchema,
  MicroappRequestResponseSchema,
  MicroappResponseSchema,
  MicroappShutdownResultSchema,
  MicroappToolCallParamsSchema,
  MicroappToolCallResultSchema,
  MicroappToolDefinitionSchema,
  MicroappToolsListResultSchema,
  microappHookMethod,
  microappMethodSchema,
  microappMethods,
  microappNotifications,
  microappOutboundMethods,
  microappToolCatalogSchema,
  microappToolNameProblem,
  microappToolPrefix,
} from "../src/schemas/microapp/index.js";

/** Dotted issue paths of a parse that must fail. */
function rejectedPaths(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  assert.equal(result.success, false, `expected ${JSON.stringify(value)} to be rejected`);
  return result.error!.issues.map((issue) => issue.path.map(String).join("."));
}

function assertRejectedAt(schema: z.ZodType, value: unknown, path: string, messagePart?: string): void {
  const result = schema.safeParse(value);
  assert.equal(result.success, false, `expected ${JSON.stringify(value)} to be rejected`);
  const issue = result.error!.issues.find((i) => i.path.map(String).join(".") === path);
  assert.ok(issue, `no issue at "${path}"; got ${JSON.stringify(result.error!.issues)}`);
  if (messagePart) assert.match(issue.message, new RegExp(messagePart));
}

// The contract's JSON examples. Where the spec elides a value (`{...}`, `"..."`, `<JSON>`,
// `<int>`, `<uuid>`) the elision is filled with the smallest value of the shape the prose
// describes; everything else is verbatim.
const spec = {
  bindingContext: {
    agent_id: "ana",
    channel: "whatsapp",
    account_id: "acme",
    binding_id: "whatsapp:acme",
    binding_index: 0,
  },
  inbound: { kind: "whatsapp_message", from: "+573000000000", ts_ms: 1735689600000, session_id: "..." },
  initializeParams: {
    extension_id: "agent-creator",
    state_dir: "/path/to/.nexo/extensions/agent-creator/state",
    config: { note: "...microapp-specific config from extensions.yaml..." },
  },
  initializeResult: {
    tools: [{ name: "agent_creator_create", description: "...", input_schema: {} }],
    version: "0.1.0",
  },
  toolsCallArgs: { name: "alice" },
  dispatchRequest: {
    id: "app:6f0e2c1a-3b7d-4f7e-9a51-0c2d4e6f8a10",
    method: "nexo/dispatch",
    params: { to: "+573000000000", channel: "whatsapp", body: "Hello" },
  },
  errorEnvelope: { code: -32000, message: "...", data: { detail: "...optional structured info..." } },
  pythonInitializeResult: {
    tools: [
      {
        name: "hello_world_greet",
        description: "Echo a greeting",
        input_schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      },
    ],
    version: "0.1.0",
  },
  goInitializeResult: {
    tools: [{ name: "hello_go_greet", description: "Echo a greeting", input_schema: { type: "object" } }],
    version: "0.1.0",
  },
  tsInitializeResult: {
    tools: [{ name: "hello_ts_greet", description: "Echo a greeting", input_schema: { type: "object" } }],
    version: "0.1.0",
  },
};

describe("microapp: every example of the contract parses", () => {
  test("initialize params and result", () => {
    assert.deepEqual(MicroappInitializeParamsSchema.parse(spec.initializeParams), spec.initializeParams);
    assert.deepEqual(MicroappInitializeResultSchema.parse(spec.initializeResult), spec.initializeResult);
  });

  test("tools/call params with binding context and inbound, both result forms", () => {
    const params = {
      tool: "agent_creator_create",
      args: spec.toolsCallArgs,
      binding_context: spec.bindingContext,
      inbound: spec.inbound,
    };
    assert.deepEqual(MicroappToolCallParamsSchema.parse(params), params);
    assert.deepEqual(MicroappBindingContextSchema.parse(spec.bindingContext), spec.bindingContext);
    assert.deepEqual(MicroappInboundRefSchema.parse(spec.inbound), spec.inbound);
    assert.deepEqual(MicroappToolCallResultSchema.parse({ output: { id: 1 } }), { output: { id: 1 } });
    assert.deepEqual(MicroappToolCallResultSchema.parse({ error: "description" }), { error: "description" });
    // `output` is opaque JSON: null and scalars are outputs too.
    assert.deepEqual(MicroappToolCallResultSchema.parse({ output: null }), { output: null });
  });

  test("hook decisions: each vote of {vote: allow|deny|abstain, reason, metadata}", () => {
    for (const vote of ["allow", "deny", "abstain"]) {
      const decision = { vote, reason: "...", metadata: { rule: "x" } };
      assert.deepEqual(MicroappHookDecisionSchema.parse(decision), decision);
    }
  });

  test("shutdown answers {ok: true}", () => {
    assert.deepEqual(MicroappShutdownResultSchema.parse({ ok: true }), { ok: true });
  });

  test("nexo/dispatch is an app:-prefixed outbound request", () => {
    const frame = { jsonrpc: "2.0", ...spec.dispatchRequest };
    assert.deepEqual(MicroappOutboundRequestSchema.parse(frame), frame);
    assert.deepEqual(
      MicroappDispatchParamsSchema.parse(spec.dispatchRequest.params),
      spec.dispatchRequest.params,
    );
  });

  test("the framing table's five frame kinds", () => {
    assert.ok(MicroappDaemonRequestSchema.safeParse({ jsonrpc: "2.0", id: 7, method: "tools/list" }).success);
    assert.ok(MicroappResponseSchema.safeParse({ jsonrpc: "2.0", id: 7, result: { tools: [] } }).success);
    assert.ok(
      MicroappResponseSchema.safeParse({ jsonrpc: "2.0", id: 7, error: spec.errorEnvelope }).success,
      "error envelope",
    );
    assert.ok(
      MicroappRequestResponseSchema.safeParse({ jsonrpc: "2.0", id: spec.dispatchRequest.id, result: {} })
        .success,
    );
    assert.ok(
      MicroappNotificationFrameSchema.safeParse({ jsonrpc: "2.0", method: "agents/updated", params: {} })
        .success,
    );
  });

  test("the Python, Go and TypeScript skeletons' frames", () => {
    for (const result of [spec.pythonInitializeResult, spec.goInitializeResult, spec.tsInitializeResult]) {
      assert.deepEqual(MicroappInitializeResultSchema.parse(result), result);
      assert.deepEqual(MicroappToolsListResultSchema.parse({ tools: result.tools }), { tools: result.tools });
    }
    assert.deepEqual(MicroappToolCallResultSchema.parse({ output: { greeting: "hello, alice" } }), {
      output: { greeting: "hello, alice" },
    });
    const unknownMethod = { jsonrpc: "2.0", id: 3, error: { code: -32601, message: "unknown method: x" } };
    assert.deepEqual(MicroappResponseSchema.parse(unknownMethod), unknownMethod);
  });

  test("the extensions.yaml entry of the Python walkthrough", () => {
    const entry = { path: "extensions/hello/main.py" };
    assert.deepEqual(MicroappExtensionEntrySchema.parse(entry), {
      ...entry,
      capabilities_grant: [],
      allow_external_bind: false,
    });
  });

  test("extensions.yaml is closed: a misspelt key is an error at that key", () => {
    assertRejectedAt(MicroappExtensionEntrySchema, { path: "x", capabilities_grants: [] }, "");
    assertRejectedAt(ExtensionsFileSchema, { extensions: { entires: {} } }, "extensions");
    assertRejectedAt(
      ExtensionsFileSchema,
      { extensions: { entries: { Bad_Id: { path: "x" } } } },
      "extensions.entries.Bad_Id",
    );
    assert.deepEqual(ExtensionsFileSchema.parse({}), { extensions: { entries: {} } });
  });

  test("plugin.toml: [capabilities.admin] and [capabilities.http_server], other sections pass", () => {
    const manifest = MicroappManifestSchema.parse({
      plugin: { id: "agent-creator", version: "0.1.0" },
      capabilities: {
        admin: { required: ["agents_crud"], optional: ["llm_keys_crud"] },
        http_server: { port: 9001, token_env: "AGENT_CREATOR_TOKEN" },
      },
      transport: { kind: "stdio" },
    });
    assert.deepEqual(manifest.capabilities.admin, { required: ["agents_crud"], optional: ["llm_keys_crud"] });
    assert.deepEqual(manifest.capabilities.http_server, {
      port: 9001,
      bind: "127.0.0.1",
      token_env: "AGENT_CREATOR_TOKEN",
      health_path: "/healthz",
    });
    assert.deepEqual(MicroappManifestSchema.parse({}), { plugin: {}, capabilities: {} });
    assertRejectedAt(
      MicroappManifestSchema,
      { capabilities: { http_server: { port: 0 } } },
      "capabilities.http_server.port",
    );
  });
});

describe("microapp: tool name namespacing", () => {
  test("the contract's good and bad examples", () => {
    assert.equal(isValidMicroappToolName("agent-creator", "agent_creator_create"), true);
    assert.equal(isValidMicroappToolName("acme_billing", "acme_billing_charge"), true);
    assert.equal(isValidMicroappToolName("acme-billing", "acme_billing_charge"), true);
    assert.equal(isValidMicroappToolName("agent-creator", "create"), false, "unprefixed");
    assert.equal(isValidMicroappToolName("agent-creator", "agent-creator/create"), false, "wrong separator");
    assert.equal(isValidMicroappToolName("hello", "hello_world_greet"), true);
  });

  test("the prefix must be this extension's, followed by a non-empty tool part", () => {
    assert.equal(
      isValidMicroappToolName("agent-creator", "agent-creator_create"),
      false,
      "the literal hyphenated id is not the prefix: one spelling per extension",
    );
    assert.equal(
      isValidMicroappToolName("billing", "acme_billing_charge"),
      false,
      "another extension's prefix",
    );
    assert.equal(isValidMicroappToolName("acme", "acme_"), false, "empty tool part");
    assert.equal(isValidMicroappToolName("acme", "acmex_send"), false, "prefix without separator");
    assert.equal(isValidMicroappToolName("", "acme_send"), false, "no extension id");
    assert.equal(microappToolPrefix("agent-creator"), "agent_creator_");
    assert.equal(microappToolPrefix("hello"), "hello_");
  });

  test("the problem names the tool and the prefix it needs", () => {
    assert.equal(microappToolNameProblem("agent-creator", "agent_creator_create"), undefined);
    assert.match(
      microappToolNameProblem("agent-creator", "create") ?? "",
      /"create" is not prefixed "agent_creator_"/,
    );
    assert.match(microappToolNameProblem("acme", "acme_") ?? "", /"acme_" is not a valid tool name/);
  });

  test("the extension-agnostic regex", () => {
    for (const good of ["agent_creator_create", "a_b", "hello_go_greet", "x-y_z-w"]) {
      assert.match(good, MICROAPP_TOOL_NAME_REGEX);
    }
    for (const bad of ["create", "agent-creator/create", "_send", "acme_", "acme send_x", "acme_sénd"]) {
      assert.doesNotMatch(bad, MICROAPP_TOOL_NAME_REGEX, bad);
    }
  });

  test("a catalogue is checked against its extension at the offending entry", () => {
    const catalog = microappToolCatalogSchema("agent-creator");
    const tools = [
      { name: "agent_creator_create", input_schema: {} },
      { name: "send_message", input_schema: {} },
      { name: "agent_creator_create", input_schema: {} },
    ];
    assertRejectedAt(catalog, tools, "1.name", "agent_creator_");
    assertRejectedAt(catalog, tools, "2.name", "declared twice");
    assert.ok(catalog.safeParse(tools.slice(0, 1)).success);
  });

  test("a tool definition with a malformed name or no input_schema is rejected", () => {
    assertRejectedAt(
      MicroappToolDefinitionSchema,
      { name: "agent-creator/create", input_schema: {} },
      "name",
    );
    assertRejectedAt(MicroappToolDefinitionSchema, { name: "acme_send" }, "input_schema");
  });
});

describe("microapp: unknown fields pass through", () => {
  test("params, results and nested shapes keep members this version does not know", () => {
    const init = { ...spec.initializeParams, protocol_version: 2 };
    assert.deepEqual(MicroappInitializeParamsSchema.parse(init), init);

    const tool = { name: "acme_send", input_schema: { type: "object" }, annotations: { readOnly: true } };
    assert.deepEqual(MicroappToolDefinitionSchema.parse(tool), tool);

    const call = {
      tool: "acme_send",
      args: {},
      binding_context: { ...spec.bindingContext, tenant_id: "acme-corp" },
      inbound: { ...spec.inbound, has_media: true },
      trace_id: "t-1",
    };
    assert.deepEqual(MicroappToolCallParamsSchema.parse(call), call);

    const decision = { vote: "deny", reason: "spam", weight: 0.9 };
    assert.deepEqual(MicroappHookDecisionSchema.parse(decision), decision);
  });
});

describe("microapp: invalid messages are rejected with a useful path", () => {
  test("tools/call without the binding's agent id", () => {
    assertRejectedAt(
      MicroappToolCallParamsSchema,
      { tool: "acme_send", args: {}, binding_context: { channel: "whatsapp" } },
      "binding_context.agent_id",
    );
  });

  test("tools/call args must be an object", () => {
    assertRejectedAt(
      MicroappToolCallParamsSchema,
      { tool: "acme_send", args: "alice", binding_context: { agent_id: "ana" } },
      "args",
    );
  });

  test("a tools/call result carries exactly one of output or error", () => {
    assertRejectedAt(MicroappToolCallResultSchema, { output: 1, error: "boom" }, "error", "exactly one");
    assertRejectedAt(MicroappToolCallResultSchema, {}, "output", "exactly one");
    assertRejectedAt(MicroappToolCallResultSchema, { error: 42 }, "error");
  });

  test("an unknown vote", () => {
    assertRejectedAt(MicroappHookDecisionSchema, { vote: "transform" }, "vote");
  });

  test("initialize without a state dir, a binding index that is not an index", () => {
    assertRejectedAt(MicroappInitializeParamsSchema, { extension_id: "x" }, "state_dir");
    assertRejectedAt(MicroappBindingContextSchema, { agent_id: "ana", binding_index: -1 }, "binding_index");
  });

  test("ids on the wrong side of the app: split", () => {
    assertRejectedAt(MicroappDaemonRequestSchema, { id: "app:1", method: "tools/list" }, "id", "app:");
    assertRejectedAt(MicroappOutboundRequestSchema, { id: 12, method: "nexo/dispatch" }, "id");
    assertRejectedAt(MicroappOutboundRequestSchema, { id: "req-1", method: "nexo/dispatch" }, "id", "app:");
    assert.deepEqual(rejectedPaths(MicroappNotificationFrameSchema, { id: 1, method: "agents/updated" }), [
      "id",
    ]);
  });

  test("an extensions.yaml entry with a non-numeric timeout", () => {
    assertRejectedAt(MicroappExtensionEntrySchema, { timeout_secs: "30s" }, "timeout_secs");
  });
});

describe("microapp: hooks", () => {
  test("abstain is the default vote", () => {
    assert.deepEqual(MicroappHookDecisionSchema.parse({}), { vote: "abstain" });
  });

  test("hooks/<name> method names round-trip", () => {
    assert.equal(hookMethodName("before_message"), "hooks/before_message");
    assert.equal(hookNameFromMethod("hooks/before_message"), "before_message");
    assert.equal(hookNameFromMethod("tools/call"), undefined);
    assert.equal(hookNameFromMethod("hooks/"), undefined);
    assert.equal(hookNameFromMethod("hooks/a/b"), undefined);
    assert.throws(() => hookMethodName("a/b"), TypeError);
  });

  test("hooks resolve to the hook schemas, unknown methods to nothing", () => {
    assert.equal(microappMethodSchema("hooks/before_message"), microappHookMethod);
    assert.equal(microappMethodSchema("tools/call"), microappMethods["tools/call"]);
    assert.equal(microappMethodSchema("nexo/admin/agents/list"), undefined);
    assert.equal(microappMethodSchema("constructor"), undefined);
  });
});

// The contract's "Methods (daemon → microapp)" section headings, verbatim, and its notification
// table rows, verbatim (the spec renders table cells without separators).
const SPEC_DAEMON_TO_MICROAPP_HEADINGS = [
  "initialize",
  "tools/list",
  "tools/call",
  "agents/updated",
  "hooks/<name>",
  "shutdown",
];
const SPEC_NOTIFICATION_ROWS = `
nexo/notify/transcript_appendedtranscripts_subscribe{session_id, role, body, ts_ms}82.11
nexo/notify/pairing_status_changedpairing_initiate{channel, instance, status}82.10
nexo/notify/token_rotatedcredentials_crud{old_hash, new}82.12
nexo/notify/agent_eventtranscripts_subscribe{kind, agent_id, payload}82.11
`;

describe("microapp: the method and notification tables cover the contract", () => {
  test("every daemon → microapp method the contract names has a schema", () => {
    let covered = 0;
    for (const heading of SPEC_DAEMON_TO_MICROAPP_HEADINGS) {
      if (heading === "agents/updated") {
        // The contract lists it among the methods but defines it as a notification.
        assert.ok(Object.hasOwn(microappNotifications, heading));
      } else if (heading.startsWith(HOOK_METHOD_PREFIX)) {
        assert.equal(microappMethodSchema(heading.replace("<name>", "on_inbound")), microappHookMethod);
      } else {
        assert.ok(Object.hasOwn(microappMethods, heading), heading);
      }
      covered++;
    }
    assert.equal(covered, SPEC_DAEMON_TO_MICROAPP_HEADINGS.length);
    // Nothing beyond what the contract names: 4 fixed methods + hooks + agents/updated.
    assert.equal(Object.keys(microappMethods).length, SPEC_DAEMON_TO_MICROAPP_HEADINGS.length - 2);
  });

  test("every notification row maps to a schema gated by the row's capability", () => {
    const rows = SPEC_NOTIFICATION_ROWS.trim().split("\n");
    const names = rows.map((row) => {
      const name = Object.keys(microappNotifications).find((n) => row.startsWith(n));
      assert.ok(name, `no notification schema for "${row}"`);
      const capability = row.slice(name.length).split("{")[0];
      const gate = microappNotifications[name as keyof typeof microappNotifications]
        .capabilities as readonly string[];
      assert.ok(gate.includes(capability ?? ""), `${name} must be gated by ${capability}`);
      return name;
    });
    assert.equal(new Set(names).size, rows.length);
    // nexo's one addition to the spec's rows: the resync marker of a lagging agent-event subscriber.
    const additions = ["nexo/notify/agent_events_lagged"];
    assert.equal(
      Object.keys(adminNotifications).length,
      rows.length + additions.length,
      "one nexo/notify/* schema per row",
    );
    assert.deepEqual(
      Object.keys(microappNotifications).sort(),
      [...names, "agents/updated", ...additions].sort(),
    );
  });

  test("agents/updated carries the visible agent ids; transcript_appended and token_rotated parse", () => {
    assert.deepEqual(MicroappAgentsUpdatedParamsSchema.parse({ agent_ids: ["ana", "carlos"] }), {
      agent_ids: ["ana", "carlos"],
    });
    const transcript = {
      session_id: "s-1",
      role: "user",
      body: "[REDACTED:phone] hola",
      ts_ms: 1700000000000,
    };
    assert.deepEqual(
      microappNotifications["nexo/notify/transcript_appended"].params.parse(transcript),
      transcript,
    );
    const rotated = { old_hash: "abcdef0123456789", new: "new-bearer-token-value" };
    assert.deepEqual(microappNotifications["nexo/notify/token_rotated"].params.parse(rotated), rotated);
  });

  test("nexo/dispatch is gated by dispatch_outbound", () => {
    assert.equal(microappOutboundMethods["nexo/dispatch"].capability, "dispatch_outbound");
    assertRejectedAt(
      microappOutboundMethods["nexo/dispatch"].params,
      { channel: "whatsapp", body: "hi" },
      "to",
    );
  });
});
