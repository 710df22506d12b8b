/**
 * The schemas an idle daemon does not keep (built on use, freed by a collection once no parse holds
 * them, built again on the next use) validate after a collection exactly as before it: llm.yaml's
 * and its provider entry, broker.yaml's, mcp.yaml's, plugins.yaml's grants, agents.yaml's parts
 * from the wire, and the microapp handshake envelopes. A rebuilt schema that lost a refinement, a
 * default or a transform fails here; one that composed a kept lazy wire schema (built for good by
 * the first parse) instead of that schema's builder fails the group checks.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { builtSchemaGroups } from "@nexo/wire/schemas/lazy";
import { z } from "zod";
import {
  BrokerConfigSchema,
  LocalBrokerConfigSchema,
  NatsBrokerConfigSchema,
} from "../../src/broker/config.js";
import { AgentsFileSchema } from "../../src/daemon/config/agents.js";
import { TenantsFileSchema } from "../../src/daemon/config/tenants.js";
import { LlmConfigSchema } from "../../src/engine/providers/llm-config.js";
import { ProviderConfigSchema, ProvidersConfigSchema } from "../../src/engine/providers/registry.js";
import {
  McpConfigSchema,
  McpHttpServerConfigSchema,
  McpServerConfigSchema,
  McpServerNameSchema,
  McpStdioServerConfigSchema,
} from "../../src/extensions/mcp/config.js";
import { InitializeEnvelopeSchema, ToolsListEnvelopeSchema } from "../../src/extensions/microapps/catalog.js";
import { PluginGrantsSchema } from "../../src/extensions/plugins/grants.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

async function collect(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}

/** What a schema makes of each input: the parsed value, or the issues' codes, paths and messages. */
function outcomes(schema: z.ZodType, inputs: readonly unknown[]): unknown[] {
  return inputs.map((input) => {
    const parsed = schema.safeParse(input);
    return parsed.success
      ? { ok: parsed.data }
      : { issues: parsed.error.issues.map(({ code, path, message }) => ({ code, path, message })) };
  });
}

/** The same outcomes before and after a collection; `expect` pins a few so neither side is vacuous. */
async function sameAfterCollection(
  schema: z.ZodType,
  inputs: readonly unknown[],
  expect: (results: unknown[]) => void,
): Promise<void> {
  const before = outcomes(schema, inputs);
  expect(before);
  await collect();
  assert.deepEqual(outcomes(schema, inputs), before);
}

const ok = (result: unknown) => (result as { ok?: unknown }).ok;
const failed = (result: unknown) => JSON.stringify((result as { issues?: unknown }).issues ?? "");

test("llm.yaml's schema: defaults, the entry's refinement and secrets, tenant ids", async () => {
  const inputs = [
    {},
    { providers: { local: { type: "openai_compatible" } } },
    { providers: { a: { type: "anthropic", api_key: "" } }, retry: { max_retries: 2 } },
    { tenants: { "Bad Tenant": {} } },
    { providers: { "-x": { type: "scripted" } } },
  ];
  await sameAfterCollection(LlmConfigSchema, inputs, (r) => {
    assert.deepEqual(ok(r[0]), { providers: {}, tenants: {} });
    assert.match(failed(r[1]), /base_url is required/);
    assert.deepEqual(ok(r[2]), {
      providers: { a: { type: "anthropic", api_key: undefined } },
      retry: { max_retries: 2 },
      tenants: {},
    });
    assert.match(failed(r[3]), /"code":"invalid_key","path":\["tenants","Bad Tenant"\]/);
    assert.match(failed(r[4]), /"code":"invalid_key","path":\["providers","-x"\]/);
  });
  await sameAfterCollection(ProviderConfigSchema, [{ type: "openai", extra: 1 }, { type: "x" }], (r) => {
    assert.deepEqual(ok(r[0]), { type: "openai", extra: 1 });
    assert.match(failed(r[1]), /invalid_value/);
  });
  await sameAfterCollection(ProvidersConfigSchema, [{ s: { type: "scripted" } }], (r) =>
    assert.deepEqual(ok(r[0]), { s: { type: "scripted" } }),
  );
  assert.ok(LlmConfigSchema instanceof z.ZodObject);
});

test("broker.yaml's schemas: the union, the NATS URL and authentication rules", async () => {
  const inputs = [
    { type: "local", queue_depth: 5 },
    { type: "nats", url: "http://x" },
    { type: "nats", url: "nats://127.0.0.1:4222", user: "u" },
    { type: "nats", servers: ["a:4222"], token: "t", creds_file: "c" },
    { type: "kafka" },
  ];
  await sameAfterCollection(BrokerConfigSchema, inputs, (r) => {
    assert.deepEqual(ok(r[0]), { type: "local", queue_depth: 5 });
    assert.match(failed(r[1]), /scheme \\"http\\"/);
    assert.match(failed(r[2]), /user and pass go together/);
    assert.match(failed(r[3]), /choose one way to authenticate/);
    assert.match(failed(r[4]), /invalid_union/);
  });
  await sameAfterCollection(LocalBrokerConfigSchema, [{ type: "local", extra: 1 }], (r) =>
    assert.match(failed(r[0]), /unrecognized_keys/),
  );
  await sameAfterCollection(NatsBrokerConfigSchema, [{ type: "nats" }], (r) =>
    assert.match(failed(r[0]), /give exactly one of url and servers/),
  );
});

test("mcp.yaml's schemas: defaults, transports, key rules", async () => {
  const inputs = [
    {},
    { servers: { fs: { transport: "stdio", command: "x", env: { NEXO_X: "1" } } } },
    { servers: { web: { transport: "streamable-http", url: "https://h/mcp" } } },
    { servers: { old: { transport: "sse", url: "https://h" } } },
    { servers: { a__b: { transport: "stdio", command: "x" } } },
  ];
  await sameAfterCollection(McpConfigSchema, inputs, (r) => {
    assert.deepEqual(ok(r[0]), { startup_timeout_ms: 30_000, call_timeout_ms: 60_000, servers: {} });
    assert.match(failed(r[1]), /is reserved/);
    assert.equal(
      (ok(r[2]) as { servers: Record<string, { transport: string }> }).servers.web?.transport,
      "streamable_http",
    );
    assert.match(failed(r[3]), /transport \\"sse\\"/);
    assert.match(failed(r[4]), /must not contain/);
  });
  await sameAfterCollection(McpServerConfigSchema, [{ transport: "stdio", command: "" }], (r) =>
    assert.match(failed(r[0]), /command must not be empty/),
  );
  await sameAfterCollection(McpStdioServerConfigSchema, [{ transport: "stdio", command: "c" }], (r) =>
    assert.deepEqual(ok(r[0]), { transport: "stdio", command: "c", args: [], env: {}, enabled: true }),
  );
  await sameAfterCollection(
    McpHttpServerConfigSchema,
    [{ transport: "streamable_http", url: "ftp://h" }],
    (r) => assert.match(failed(r[0]), /url must be an http\(s\) URL/),
  );
  await sameAfterCollection(McpServerNameSchema, ["ok", "bad_"], (r) => {
    assert.equal(ok(r[0]), "ok");
    assert.match(failed(r[1]), /must not end with/);
  });
});

test("plugins.yaml's grants and the microapp handshake envelopes", async () => {
  await sameAfterCollection(
    PluginGrantsSchema,
    [{ memory_agents: "*", llm_providers: ["a"] }, { memory_agent: "*" }, { llm_providers: [""] }],
    (r) => {
      assert.deepEqual(ok(r[0]), { memory_agents: "*", llm_providers: ["a"] });
      assert.match(failed(r[1]), /unrecognized_keys/);
      assert.match(failed(r[2]), /too_small/);
    },
  );
  // The envelopes leave the tools unread (checked one by one later), unlike the wire's results.
  await sameAfterCollection(
    InitializeEnvelopeSchema,
    [{ tools: [{ nonsense: true }], hooks: [1], version: "1" }, { tools: "x" }],
    (r) => {
      assert.deepEqual(ok(r[0]), { tools: [{ nonsense: true }], hooks: [1], version: "1" });
      assert.match(failed(r[1]), /invalid_type/);
    },
  );
  await sameAfterCollection(ToolsListEnvelopeSchema, [{ tools: [7] }, {}], (r) => {
    assert.deepEqual(ok(r[0]), { tools: [7] });
    assert.match(failed(r[1]), /invalid_type/);
  });
  // They extend fresh wire results (the wire's builders), so the kept lazy ones stay unbuilt.
  assert.ok(!builtSchemaGroups().has("microapp.methods"), "the wire's microapp result schemas were built");
});

test("agents.yaml's schema: the wire's plugin id, skill name and tenant id rules, none of them kept", async () => {
  const agent = { id: "ana", model: { provider: "scripted", model: "m" } };
  const inputs = [
    {
      agents: [
        {
          ...agent,
          tenant_id: "acme",
          skills: ["notes", "web-search"],
          inbound_bindings: [{ plugin: "loopback" }, { plugin: "whatsapp", instance: "main" }],
        },
      ],
    },
    { agents: [{ ...agent, tenant_id: null }] },
    {
      agents: [{ ...agent, tenant_id: "Acme", skills: ["-x"], inbound_bindings: [{ plugin: "Loop-Back" }] }],
    },
  ];
  await sameAfterCollection(AgentsFileSchema, inputs, (r) => {
    const [parsed] = (ok(r[0]) as { agents: Record<string, unknown>[] }).agents;
    assert.equal(parsed?.tenant_id, "acme");
    assert.deepEqual(parsed?.skills, ["notes", "web-search"]);
    assert.deepEqual(parsed?.inbound_bindings, [
      { plugin: "loopback" },
      { plugin: "whatsapp", instance: "main" },
    ]);
    assert.equal((ok(r[1]) as { agents: Record<string, unknown>[] }).agents[0]?.tenant_id, undefined);
    for (const expected of ["tenant ids are", "skill names are", "must match ^[a-z][a-z0-9_]{0,31}$"])
      assert.ok(failed(r[2]).includes(expected), `no "${expected}" among ${failed(r[2])}`);
  });
  for (const group of ["plugin.common", "admin.skills", "admin.tenants"])
    assert.ok(!builtSchemaGroups().has(group), `${group} was built for good by agents.yaml's schema`);
});

test("tenants.yaml's schema: the admin RPC's tenant id rule, not kept", async () => {
  const inputs = [
    { tenants: [{ id: "acme", display_name: "Acme", created_at: "2026-05-01T10:00:00Z" }, { id: "globex" }] },
    { tenants: [{ id: "Acme" }, { id: "globex" }, { id: "globex" }] },
  ];
  await sameAfterCollection(TenantsFileSchema, inputs, (r) => {
    const { tenants } = ok(r[0]) as { tenants: Record<string, unknown>[] };
    assert.deepEqual(
      tenants.map((tenant) => [tenant.id, tenant.active]),
      [
        ["acme", true],
        ["globex", true],
      ],
    );
    for (const expected of ["tenant ids are", "duplicate tenant id", "(also tenants[1])"])
      assert.ok(failed(r[1]).includes(expected), `no "${expected}" among ${failed(r[1])}`);
  });
  assert.ok(
    !builtSchemaGroups().has("admin.tenants"),
    "admin.tenants was built for good by tenants.yaml's schema",
  );
});
