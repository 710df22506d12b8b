/**
 * Schemas an idle daemon does not keep: importing the wire's schemas builds none of them (the agent
 * event union, the admin MCP server detail and the app-server items' shared fields included), and
 * extensions.yaml's, nexo-plugin.toml's, a microapp's plugin.toml's and the plugin handshake's
 * schemas are built on use and let go (a collection frees them; they validate the same after it),
 * keeping none of the lazy schemas whose builders they compose. The first two tests must stay
 * first: they look at what the imports alone built.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { z } from "zod";
import "../src/schemas/index.js";
import {
  AdminCapabilityDeclarationSchema,
  AgentEventNotificationSchema,
  AgentEventSchema,
  adminCapabilityDeclarationSchema,
  SkillNameSchema,
  skillNameSchema,
  TenantKeySchema,
  tenantKeySchema,
} from "../src/schemas/admin/index.js";
import { builtSchemaGroups } from "../src/schemas/lazy.js";
import {
  ExtensionIdSchema,
  ExtensionsFileSchema,
  extensionIdSchema,
  MicroappCapabilitiesSchema,
  MicroappExtensionEntrySchema,
  MicroappHttpServerSchema,
  MicroappInitializeResultSchema,
  MicroappManifestPluginSchema,
  MicroappManifestSchema,
  MicroappToolsListResultSchema,
  microappInitializeResultSchema,
  microappToolsListResultSchema,
} from "../src/schemas/microapp/index.js";
import {
  ChannelFeaturesAdvertSchema,
  EchoedManifestSchema,
  HostFeaturesAdvertSchema,
  InitializeParamsSchema,
  InitializeResultSchema,
  ManifestChannelRegistrationSchema,
  ManifestChannelsSchema,
  ManifestEntrypointSchema,
  ManifestExtendsSchema,
  ManifestPluginSchema,
  ManifestRequiresSchema,
  ManifestSandboxSchema,
  ManifestSupervisorSchema,
  PluginIdSchema,
  PluginManifestSchema,
  pluginIdSchema,
  pluginMethods,
  RemoteToolDefSchema,
  SandboxNetworkSchema,
} from "../src/schemas/plugin/index.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

test("importing the wire's schemas builds none of them", () => {
  assert.deepEqual([...builtSchemaGroups()], []);
});

test("importing the admin wire builds no agent event schema; a parse builds them", () => {
  assert.ok(!builtSchemaGroups().has("admin.agent-events"), "admin.agent-events was built at import");
  const event = {
    kind: "transcript_appended",
    agent_id: "ana",
    session_id: "s1",
    seq: 3,
    role: "user",
    body: "hi",
    sent_at_ms: 1,
    source_plugin: "internal",
  };
  assert.deepEqual(AgentEventSchema.parse(event), event);
  assert.ok(builtSchemaGroups().has("admin.agent-events"));
  // Still open (an unknown kind passes as it came) and still precise (a known kind's issue keeps its path).
  assert.deepEqual(AgentEventNotificationSchema.parse({ kind: "future_kind", x: 1 }), {
    kind: "future_kind",
    x: 1,
  });
  const wrong = AgentEventSchema.safeParse({ ...event, seq: -1 });
  assert.equal(wrong.success, false);
  assert.deepEqual(
    wrong.error?.issues.map((issue) => issue.path),
    [["seq"]],
  );
});

test("extensions.yaml's schemas validate the same after a collection", async () => {
  const inputs = [
    {},
    { extensions: { entries: { "agent-creator": { path: "main.py", capabilities_grant: ["audit_read"] } } } },
    { extensions: { entries: { "Bad Id": { path: "x" } } } },
    { extensions: { entries: { ok: { path: "", timeout_secs: 0 } } } },
    { extension: {} },
  ];
  const outcomes = () =>
    inputs.map((input) => {
      const parsed = ExtensionsFileSchema.safeParse(input);
      return parsed.success ? { ok: parsed.data } : { issues: parsed.error.issues };
    });
  const before = outcomes();
  assert.deepEqual(before[0], { ok: { extensions: { entries: {} } } });
  assert.deepEqual(before[1], {
    ok: {
      extensions: {
        entries: {
          "agent-creator": {
            path: "main.py",
            capabilities_grant: ["audit_read"],
            allow_external_bind: false,
          },
        },
      },
    },
  });
  assert.match(JSON.stringify(before[2]), /invalid_key/);
  assert.match(JSON.stringify(before[3]), /must not be empty/);
  assert.match(JSON.stringify(before[3]), /too_small/);
  assert.match(JSON.stringify(before[4]), /unrecognized_keys/);
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  assert.deepEqual(outcomes(), before);
  assert.deepEqual(MicroappExtensionEntrySchema.parse({ path: "p" }), {
    path: "p",
    capabilities_grant: [],
    allow_external_bind: false,
  });
  assert.ok(MicroappExtensionEntrySchema instanceof z.ZodObject);
});

/** Each schema's outcome (value or issues) for each input, to compare before and after a collection. */
function outcomes(schemas: Record<string, z.ZodType>, inputs: readonly unknown[]) {
  return Object.entries(schemas).map(([name, schema]) => ({
    name,
    results: inputs.map((input) => {
      const parsed = schema.safeParse(input);
      return parsed.success ? { ok: parsed.data } : { issues: parsed.error.issues };
    }),
  }));
}

/** Collects, and says whether the schema a stand-in had built (seen through its internals) is gone. */
async function freedByACollection(standIn: z.ZodType): Promise<boolean> {
  const internals = new WeakRef(standIn._zod);
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  return internals.deref() === undefined;
}

test("nexo-plugin.toml's schemas validate the same after a collection, which frees them", async () => {
  const plugin = {
    id: "demo",
    version: "0.1.0",
    name: "Demo",
    description: "d",
    min_nexo_version: ">=0.1.0",
    entrypoint: { command: "node", args: ["main.js"], env: { A: "1" } },
    channels: { register: [{ kind: "demo", adapter: "DemoAdapter" }] },
    extends: { tools: ["demo_dice"], hooks: ["demo"] },
    sandbox: { enabled: true, network: "deny", fs_write_paths: ["${state_dir}"] },
    supervisor: { respawn: true, max_attempts: 2 },
    extra: "passes",
  };
  const wrongPlugin = {
    ...plugin,
    id: "Demo",
    name: " ",
    version: "1",
    entrypoint: { command: "node", arg: [], env: { NEXO_X: "1" } },
    channels: {
      register: [
        { kind: "a", adapter: "A" },
        { kind: "a", adapter: "B" },
      ],
    },
    extends: { tools: ["other_tool", "other_tool"], channels: ["x"], hooks: ["x"], registries: [] },
    sandbox: { enabled: true, network: "open", fs_read_paths: ["relative"], network_allowlist: [] },
    supervisor: { respawn: true, max_attempts: 0, backoff_ms: 5 },
  };
  const schemas = {
    PluginManifestSchema,
    ManifestPluginSchema,
    ManifestRequiresSchema,
    ManifestEntrypointSchema,
    ManifestChannelRegistrationSchema,
    ManifestChannelsSchema,
    ManifestExtendsSchema,
    SandboxNetworkSchema,
    ManifestSandboxSchema,
    ManifestSupervisorSchema,
  } as Record<string, z.ZodType>;
  const inputs = [
    { plugin },
    { plugin: wrongPlugin },
    plugin,
    wrongPlugin,
    ...Object.values(plugin),
    ...Object.values(wrongPlugin),
    {},
    null,
  ];
  const before = outcomes(schemas, inputs);
  const document = before[0]!.results;
  assert.deepEqual(document[0], { ok: { plugin } });
  const problems = JSON.stringify(document[1]);
  for (const expected of [
    "must match ^[a-z]",
    "must not be blank",
    "must be a semantic version",
    "is reserved",
    '"arg"',
    "registered more than once",
    "listed twice in tools",
    "is already declared in channels",
    "[plugin.extends] only accepts",
    "[plugin.sandbox] only accepts",
    "must be at least 1 when respawn = true",
    "must be between 100 and 300000",
  ])
    assert.ok(problems.includes(expected), `no "${expected}" among ${problems}`);
  for (const [name, schema] of Object.entries(schemas))
    assert.ok(await freedByACollection(schema), `${name} was not freed by a collection`);
  assert.deepEqual(outcomes(schemas, inputs), before);
  assert.ok(PluginManifestSchema instanceof z.ZodObject);
  assert.ok(!builtSchemaGroups().has("plugin.manifest"));
});

test("a microapp's plugin.toml schemas validate the same after a collection, which frees them", async () => {
  const schemas = {
    MicroappManifestSchema,
    MicroappManifestPluginSchema,
    MicroappCapabilitiesSchema,
    MicroappHttpServerSchema,
  } as Record<string, z.ZodType>;
  const inputs = [
    {},
    {
      plugin: { id: "agent-creator", version: "0.1.0", sandbox: { enabled: true, network: "host" } },
      capabilities: {
        admin: { required: ["agents_crud"], optional: ["llm_keys_crud"] },
        http_server: { port: 9001, token_env: "TOKEN" },
      },
      transport: { kind: "stdio" },
    },
    {
      plugin: { id: "Bad Id", version: "x", sandbox: { enabled: true, fs_write_paths: ["rel"], nope: 1 } },
      capabilities: {
        admin: { required: ["a"], optional: ["a"] },
        http_server: { port: 0, token_env: "1x", health_path: "health", extra: 1 },
      },
    },
    { port: 8080 },
    null,
  ];
  const before = outcomes(schemas, inputs);
  assert.deepEqual(before[0]!.results[0], { ok: { plugin: {}, capabilities: {} } });
  assert.deepEqual(before[3]!.results[3], { ok: { port: 8080, bind: "127.0.0.1", health_path: "/healthz" } });
  const problems = JSON.stringify(before[0]!.results[2]);
  for (const expected of [
    "extension ids are",
    "must be a semantic version",
    "[plugin.sandbox] only accepts",
    "listed as both required and optional",
    "must be a variable name",
    "must start with /",
    "unrecognized_keys",
  ])
    assert.ok(problems.includes(expected), `no "${expected}" among ${problems}`);
  for (const [name, schema] of Object.entries(schemas))
    assert.ok(await freedByACollection(schema), `${name} was not freed by a collection`);
  assert.deepEqual(outcomes(schemas, inputs), before);
  assert.ok(!builtSchemaGroups().has("microapp.manifest"));
  // The extension id and the capability declaration come from their modules' builders: the kept
  // lazy schemas those modules export were not built.
  assert.ok(!builtSchemaGroups().has("microapp.extensions-config"), "ExtensionIdSchema was built");
  assert.ok(!builtSchemaGroups().has("admin.capabilities"), "AdminCapabilityDeclarationSchema was built");
});

test("the plugin handshake's schemas validate the same after a collection, which frees them", async () => {
  const schemas = {
    InitializeParamsSchema,
    InitializeResultSchema,
    RemoteToolDefSchema,
    EchoedManifestSchema,
    ChannelFeaturesAdvertSchema,
    HostFeaturesAdvertSchema,
  } as Record<string, z.ZodType>;
  const tool = { name: "demo_dice", description: "rolls", input_schema: { type: "object" } };
  const inputs = [
    {
      manifest: { plugin: { id: "demo", version: "0.1.0" }, extra: 1 },
      server_version: "0.1.0",
      tools: [tool, { name: "demo_coin", description: "" }],
      channel_features: ["pairing", "future", "reply_stream"],
    },
    {
      manifest: { plugin: { id: "" } },
      tools: [tool, tool, { name: "", description: 1, input_schema: [] }],
      channel_features: "pairing",
    },
    { nexo_version: "0.3.0", host_features: ["broker.publish_acked", "other"] },
    { host_features: "broker.publish_acked" },
    tool,
    ["bots", "nope"],
    {},
    null,
    { manifest: { plugin: { id: "demo" } }, server_version: "1", tools: [tool, tool] },
  ];
  const before = outcomes(schemas, inputs);
  const [params, result] = before;
  assert.deepEqual(params!.results[7], { ok: {} });
  assert.deepEqual(params!.results[2], {
    ok: { nexo_version: "0.3.0", host_features: ["broker.publish_acked"] },
  });
  assert.deepEqual(params!.results[3], { ok: { host_features: [] } });
  assert.deepEqual(result!.results[0], {
    ok: { ...(inputs[0] as object), channel_features: ["pairing", "reply_stream"] },
  });
  const problems = JSON.stringify(result!.results[1]);
  for (const expected of ['"server_version"', '"description"', '"channel_features"', '"id"'])
    assert.ok(problems.includes(expected), `no ${expected} among ${problems}`);
  assert.match(JSON.stringify(result!.results[8]), /tool \\"demo_dice\\" is advertised more than once/);
  for (const [name, schema] of Object.entries(schemas))
    assert.ok(await freedByACollection(schema), `${name} was not freed by a collection`);
  assert.deepEqual(outcomes(schemas, inputs), before);
  // The method table holds the stand-ins, not what they built.
  assert.equal(pluginMethods.initialize.result, InitializeResultSchema);
  assert.ok(!builtSchemaGroups().has("plugin.lifecycle"));
  assert.ok(!builtSchemaGroups().has("plugin.channel-features"));
});

test("the builders that disposable trees compose validate as the kept schemas they stand beside", () => {
  const tool = { name: "notes_add", description: "adds", input_schema: { type: "object" } };
  const pairs: [string, z.ZodType, z.ZodType, unknown[]][] = [
    [
      "extension id",
      extensionIdSchema(),
      ExtensionIdSchema,
      ["agent-creator", "a", "Bad", "-x", "a".repeat(33), 7],
    ],
    [
      "capability declaration",
      adminCapabilityDeclarationSchema(),
      AdminCapabilityDeclarationSchema,
      [
        {},
        { required: ["a"], optional: ["b"], x: 1 },
        { required: ["a"], optional: ["a"] },
        { required: [""] },
        null,
      ],
    ],
    ["skill name", skillNameSchema(), SkillNameSchema, ["notes", "a-b", "-a", "A", "a".repeat(65), ""]],
    ["tenant key", tenantKeySchema(), TenantKeySchema, ["acme", "acme-2", "-acme", "Acme", "", 1]],
    ["plugin id", pluginIdSchema(), PluginIdSchema, ["demo", "demo_tools", "Demo", "de-mo", "a".repeat(33)]],
    [
      "microapp initialize result",
      microappInitializeResultSchema(),
      MicroappInitializeResultSchema,
      [
        { tools: [tool], version: "1", hooks: ["before_turn"], x: 1 },
        { tools: [{ name: "" }] },
        { hooks: [""] },
        {},
      ],
    ],
    [
      "microapp tools/list result",
      microappToolsListResultSchema(),
      MicroappToolsListResultSchema,
      [{ tools: [tool] }, { tools: [{}] }, { tools: "x" }],
    ],
  ];
  for (const [name, fresh, kept, inputs] of pairs) {
    const [fromBuilder, fromKept] = outcomes({ fresh, kept }, inputs);
    assert.deepEqual(fromBuilder!.results, fromKept!.results, name);
    assert.ok(
      fromBuilder!.results.some((result) => "ok" in result) &&
        fromBuilder!.results.some((result) => "issues" in result),
      `${name}: the inputs should include accepted and refused ones`,
    );
  }
});
