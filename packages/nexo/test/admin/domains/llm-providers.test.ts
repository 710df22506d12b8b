/**
 * `nexo/admin/llm_providers/*` over a real daemon: llm.yaml edited with its comments kept, keys
 * referenced and never returned (a written key lands in the state dir's secrets, not in llm.yaml
 * nor the audit log), a tenant's own entries apart from the global ones, and delete refused while
 * an agent uses the entry.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { readSecretFiles } from "../../../src/config/secret-files.js";
import {
  assertDenied,
  type DaemonAdmin,
  daemonAdmin,
  errorOf,
  resultOf,
} from "../../helpers/admin-daemon.js";

const LLM = `# Providers of the test deployment.
providers:
  # The hosted one; its key comes from the environment.
  anthropic:
    type: anthropic
    api_key: \${ANTHROPIC_API_KEY:-}
tenants:
  acme:
    providers:
      anthropic:
        type: anthropic
        api_key: \${ACME_KEY:-}
`;

const AGENTS = `agents:
  - id: ana
    model: { provider: anthropic, model: claude-test }
`;

describe("admin llm_providers/*", () => {
  let admin: DaemonAdmin;
  before(async () => {
    admin = await daemonAdmin(
      { "llm.yaml": LLM, "agents.yaml": AGENTS, "tenants.yaml": "tenants:\n  - id: acme\n" },
      ["llm_keys_crud"],
      { env: { LOCAL_KEY: "sk-local-from-the-environment" } },
    );
  });
  after(() => admin?.stop());

  it("are refused without llm_keys_crud", async () => {
    for (const [method, params] of [
      ["nexo/admin/llm_providers/list", {}],
      ["nexo/admin/llm_providers/upsert", { id: "openai", base_url: "https://api.openai.com/v1" }],
      ["nexo/admin/llm_providers/delete", { provider_id: "anthropic" }],
    ] as const) {
      assertDenied(admin, await admin.viewer(method, params), method, "llm_keys_crud");
    }
  });

  it("list: the global table, or one tenant's; keys by variable name only", async () => {
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/llm_providers/list", {})), {
      providers: [
        {
          id: "anthropic",
          base_url: "",
          api_key_env: "ANTHROPIC_API_KEY",
          type: "anthropic",
          api_key_source: "env",
        },
      ],
    });
    const acme = resultOf<{ providers: { id: string; tenant_scope: string; api_key_env: string }[] }>(
      await admin.ops("nexo/admin/llm_providers/list", { tenant_id: "acme" }),
    );
    assert.deepEqual(
      acme.providers.map((p) => [p.id, p.tenant_scope, p.api_key_env]),
      [["anthropic", "acme", "ACME_KEY"]],
    );
    errorOf(await admin.ops("nexo/admin/llm_providers/list", { tenant_id: 5 }), -32602);
  });

  it("upsert: a new entry referencing a variable, comments kept, live for the daemon", async () => {
    const summary = resultOf(
      await admin.ops("nexo/admin/llm_providers/upsert", {
        id: "local",
        factory_type: "openai_compatible",
        base_url: "http://127.0.0.1:9/v1",
        api_key_env: "LOCAL_KEY",
        headers: { "X-Team": "ops" },
      }),
    );
    assert.deepEqual(summary, {
      id: "local",
      base_url: "http://127.0.0.1:9/v1",
      api_key_env: "LOCAL_KEY",
      type: "openai_compatible",
      api_key_source: "env",
    });
    const text = admin.env.read("llm.yaml");
    assert.ok(text.includes("# The hosted one; its key comes from the environment."));
    assert.match(
      text,
      /local:\n {4}base_url: http:\/\/127\.0\.0\.1:9\/v1\n {4}type: openai_compatible\n {4}api_key: \$\{LOCAL_KEY\}/,
    );
    assert.ok(admin.env.daemon.spec.llm.providers?.local !== undefined, "the running daemon has it");
  });

  it("upsert: a key value is stored as a secret and referenced; never in llm.yaml or the audit", async () => {
    resultOf(
      await admin.ops("nexo/admin/llm_providers/upsert", {
        id: "local",
        base_url: "http://127.0.0.1:9/v1",
        api_key_secret_value: "sk-very-secret-value",
      }),
    );
    assert.deepEqual(readSecretFiles(admin.env.stateDir), { LLM_LOCAL_API_KEY: "sk-very-secret-value" });
    assert.match(admin.env.read("llm.yaml"), /api_key: \$\{LLM_LOCAL_API_KEY\}/);
    assert.ok(!admin.env.read("llm.yaml").includes("sk-very-secret-value"));
    const database = readFileSync(join(admin.rig.stateDir, "nexo.db")).toString("latin1");
    assert.ok(!database.includes("sk-very-secret-value"));
  });

  it("upsert: refuses what it cannot write, with nothing written", async () => {
    const beforeText = admin.env.read("llm.yaml");
    errorOf(await admin.ops("nexo/admin/llm_providers/upsert", { id: "x", base_url: "" }), -32602);
    const unknownType = errorOf(
      await admin.ops("nexo/admin/llm_providers/upsert", {
        id: "minimax",
        base_url: "https://api.minimax.io",
      }),
      -32602,
    );
    assert.match(unknownType.message, /factory_type/);
    errorOf(
      await admin.ops("nexo/admin/llm_providers/upsert", {
        id: "anthropic",
        base_url: "https://api.anthropic.com",
        api_key_env: "not a name",
      }),
      -32602,
    );
    errorOf(
      await admin.ops("nexo/admin/llm_providers/upsert", {
        id: "anthropic",
        base_url: "https://api.anthropic.com",
        api_key_env: "A",
        api_key_secret_id: "B_KEY",
      }),
      -32602,
    );
    const badUrl = errorOf(
      await admin.ops("nexo/admin/llm_providers/upsert", { id: "anthropic", base_url: "ftp://nowhere" }),
      -32602,
    );
    assert.equal((badUrl.data as { reason: string }).reason, "invalid_config");
    assert.equal(admin.env.read("llm.yaml"), beforeText);
  });

  it("delete: refused while an agent uses the entry; otherwise removed from the file and the daemon", async () => {
    const inUse = errorOf(
      await admin.ops("nexo/admin/llm_providers/delete", { provider_id: "anthropic" }),
      -32602,
    );
    assert.deepEqual(inUse.data, {
      reason: "in_use",
      provider: "anthropic",
      users: { agents: ["ana"], tenants: [], plugins: [] },
    });
    assert.match(admin.env.read("llm.yaml"), /anthropic:/);

    assert.deepEqual(resultOf(await admin.ops("nexo/admin/llm_providers/delete", { provider_id: "local" })), {
      removed: true,
    });
    assert.ok(!admin.env.read("llm.yaml").includes("local:"));
    assert.equal(admin.env.daemon.spec.llm.providers?.local, undefined);
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/llm_providers/delete", { provider_id: "local" })), {
      removed: false,
    });
    assert.deepEqual(
      resultOf(
        await admin.ops("nexo/admin/llm_providers/delete", { provider_id: "anthropic", tenant_id: "acme" }),
      ),
      { removed: true },
    );
    errorOf(await admin.ops("nexo/admin/llm_providers/delete", {}), -32602);
  });
});
