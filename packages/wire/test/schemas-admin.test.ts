import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { parse as parseToml } from "smol-toml";
import type { z } from "zod";
import {
  ADMIN_CAPABILITIES,
  ADMIN_DOMAINS,
  ADMIN_ID_PREFIX,
  ADMIN_METHOD_CAPABILITIES,
  ADMIN_METHOD_NAMES,
  AdminAuditRowSchema,
  AdminCapabilityDeclarationSchema,
  AdminCapabilitySchema,
  type AdminMethodName,
  AdminRequestSchema,
  AdminSuccessResponseSchema,
  AGENT_EVENT_KINDS,
  AgentBindingSchema,
  AgentEventSchema,
  AgentsListResultSchema,
  AgentsUpsertParamsSchema,
  adminMethodCapabilities,
  adminMethods,
  adminNotifications,
  CapabilityDeniedErrorSchema,
  CREDENTIAL_REASON_CODES,
  CredentialsRegisterParamsSchema,
  CredentialsRegisterResultSchema,
  CredentialsRevokeParamsSchema,
  DaemonRequestIdSchema,
  EscalationStateSchema,
  EscalationsResolveParamsSchema,
  isAdminMethodName,
  isAdminRequestId,
  isKnownCapability,
  isOperatorStampedMethod,
  LlmProvidersUpsertParamsSchema,
  McpUpsertParamsSchema,
  NEXO_ADMIN_ADDITIONS,
  OPERATOR_STAMPED_METHODS,
  PAIRING_STATES,
  PairingStatusSchema,
  PROCESSING_SUMMARY_MAX_LEN,
  ProcessingAckSchema,
  ProcessingControlStateSchema,
  ProcessingInterventionParamsSchema,
  ProcessingPauseParamsSchema,
  ProcessingResumeParamsSchema,
  ProcessingScopeSchema,
  SecretsWriteParamsSchema,
  SkillsUpsertParamsSchema,
  TelegramCredentialMetadataSchema,
  TenantsUpsertParamsSchema,
  WhatsappBotSendParamsSchema,
} from "../src/schemas/admin/index.js";
import { MicroappExtensionEntrySchema } from "../src/schemas/microapp/index.js";

/** Asserts a parse fails with an issue at `path` (dotted) whose message matches `messagePart`. */
function assertRejectedAt(schema: z.ZodType, value: unknown, path: string, messagePart?: string): void {
  const result = schema.safeParse(value);
  assert.equal(result.success, false, `expected ${JSON.stringify(value)} to be rejected`);
  const issue = result.error!.issues.find((i) => i.path.map(String).join(".") === path);
  assert.ok(issue, `no issue at "${path}"; got ${JSON.stringify(result.error!.issues)}`);
  if (messagePart) assert.match(issue.message, new RegExp(messagePart));
}

/** Parses and asserts nothing was lost or changed (unknown members included). */
function assertRoundTrip(schema: z.ZodType, value: unknown): void {
  assert.deepEqual(schema.parse(value), value);
}

// The "Domains + methods" table of specs/admin-rpc.txt, verbatim: the spec renders the cells of a
// row without separators (method, capability, domain, what it wraps).
const SPEC_METHOD_TABLE = `
nexo/admin/agents/listagents_crudagentsyaml read
nexo/admin/agents/getagents_crudagentsyaml read
nexo/admin/agents/upsertagents_crudagentsyaml mutate + reload
nexo/admin/agents/deleteagents_crudagentsyaml remove + reload
nexo/admin/credentials/listcredentials_crudcredentialsfilesystem + yaml join
nexo/admin/credentials/registercredentials_crudcredentialsfilesystem write + yaml mutate (many-to-many)
nexo/admin/credentials/revokecredentials_crudcredentialsfilesystem unlink + yaml mutate
nexo/admin/pairing/startpairing_initiatepairingsession_store insert + plugin trigger
nexo/admin/pairing/statuspairing_initiatepairingsession_store read
nexo/admin/pairing/cancelpairing_initiatepairingsession_store mutate + notification
nexo/admin/llm_providers/listllm_keys_crudllm_providersllm.yaml read
nexo/admin/llm_providers/upsertllm_keys_crudllm_providersenv var validation + llm.yaml mutate
nexo/admin/llm_providers/deletellm_keys_crudllm_providersrefuse if agent uses + llm.yaml remove
nexo/admin/channels/listchannels_crudchannelsyaml read
nexo/admin/channels/approvechannels_crudchannelsyaml mutate (idempotent)
nexo/admin/channels/revokechannels_crudchannelsyaml mutate
nexo/admin/channels/doctorchannels_crudchannelsstatic yaml verdicts
nexo/admin/reloadagents_crudmetaforce Phase 18 hot-reload
nexo/admin/llm/completellm_completellmone-shot completion (admin debugger)
nexo/admin/agent_events/listtranscripts_readagent_eventstranscript pagination
nexo/admin/agent_events/readtranscripts_readagent_eventssingle transcript fetch
nexo/admin/agent_events/searchtranscripts_readagent_eventsfull-text search
nexo/admin/microapp_audit/tailaudit_readauditper-microapp audit log tail
nexo/admin/processing/pauseoperator_interventionprocessingpause autonomous loop
nexo/admin/processing/resumeoperator_interventionprocessingresume after pause
nexo/admin/processing/interventionoperator_interventionprocessinginject operator turn
nexo/admin/processing/stateoperator_interventionprocessingread pause/intervention state
nexo/admin/escalations/listescalations_readescalationspending escalation queue
nexo/admin/escalations/resolveescalations_resolveescalationsmark escalation handled
nexo/admin/skills/listskills_crudskillsfilesystem walk + manifest read
nexo/admin/skills/getskills_crudskillssingle skill manifest
nexo/admin/skills/upsertskills_crudskillsfilesystem write + reload
nexo/admin/skills/deleteskills_crudskillsfilesystem unlink + reload
nexo/admin/tenants/listtenants_crudtenantstenants.yaml read
nexo/admin/tenants/gettenants_crudtenantstenants.yaml lookup
nexo/admin/tenants/upserttenants_crudtenantstenants.yaml mutate + reload
nexo/admin/tenants/deletetenants_crudtenantstenants.yaml remove + reload
nexo/admin/mcp/listmcp_crudmcpmcp.yaml read
nexo/admin/mcp/getmcp_crudmcpmcp.yaml lookup
nexo/admin/mcp/upsertmcp_crudmcpmcp.yaml mutate + reload
nexo/admin/mcp/deletemcp_crudmcpmcp.yaml remove + reload
nexo/admin/plugins/doctorplugin_doctorpluginsdiscovery snapshot (manifests + capabilities)
nexo/admin/plugins/restartplugin_restartpluginsforce-restart subprocess plugin (Phase 81.21.b.b)
nexo/admin/memory/querymemory_querymemoryLongTermMemory recall
nexo/admin/memory/list_snapshotsmemory_snapshotmemorysnapshot bundle list
nexo/admin/memory/delete_snapshotmemory_snapshotmemorysnapshot bundle delete (idempotent)
nexo/admin/memory/create_snapshotmemory_snapshotmemorycapture bundle (server forces redact_secrets+admin-ui provenance)
nexo/admin/memory/restore_snapshotmemory_snapshotmemoryrestore from snapshot_id (server resolves bundle path; auto_pre_snapshot=true)
nexo/admin/secrets/writesecrets_writesecretsper-microapp secret store mutate
nexo/admin/auth/rotate_tokenauth_rotateauthbearer + cookie HMAC rotation
nexo/admin/whatsapp/bot/listchannels_crudwhatsappbot enumeration
nexo/admin/whatsapp/bot/sendchannels_crudwhatsappone-off send
`;

const SPEC_PATH = new URL("../../../../shared/specs/admin-rpc.txt", import.meta.url);

const HASH = "abcdef0123456789";
const T = 1700000000000;
const ISO = "2026-05-02T12:00:00Z";
const SESSION = "33333333-3333-4333-8333-333333333333";
const CORRELATION = "0190f7a2-5b1c-7e3d-9a4f-1c2b3d4e5f60";
const conversation = {
  kind: "conversation",
  agent_id: "ana",
  channel: "whatsapp",
  account_id: "wa.0",
  contact_id: "wa.55",
};
const agentDetail = {
  id: "ana",
  model: { provider: "minimax", model: "MiniMax-M2.5" },
  active: true,
  allowed_tools: ["*"],
  inbound_bindings: [{ plugin: "whatsapp", instance: "shared" }],
  system_prompt: "You are Ana.",
};
const transcriptEvent = {
  kind: "transcript_appended",
  agent_id: "ana",
  session_id: SESSION,
  seq: 7,
  role: "user",
  body: "[REDACTED:phone] hola",
  sent_at_ms: T,
  sender_id: "wa.55",
  source_plugin: "whatsapp",
};
const snapshot = {
  id: "snap-1",
  agent_id: "ana",
  tenant: "default",
  label: "pre-deploy",
  created_at_ms: T,
  bundle_size_bytes: 20480,
  bundle_sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  encrypted: false,
  redactions_applied: true,
};
const auditRow = {
  microapp_id: "agent-creator",
  method: "nexo/admin/agents/upsert",
  capability: "agents_crud",
  args_hash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  started_at_ms: T,
  result: "denied",
  error_code: -32004,
  duration_ms: 1,
};

/** A realistic params/result pair for every admin method; each must parse unchanged. */
const samples: Record<AdminMethodName, { params: unknown; result: unknown }> = {
  "nexo/admin/agents/list": {
    params: { active_only: true },
    result: { agents: [{ id: "ana", active: true, model_provider: "minimax", bindings_count: 2 }] },
  },
  "nexo/admin/agents/get": { params: { agent_id: "ana" }, result: agentDetail },
  "nexo/admin/agents/upsert": {
    params: { id: "ana", model: { provider: "minimax", model: "MiniMax-M2.5" } },
    result: agentDetail,
  },
  "nexo/admin/agents/delete": { params: { agent_id: "ana" }, result: { removed: true } },
  "nexo/admin/credentials/list": {
    params: undefined,
    result: { credentials: [{ channel: "whatsapp", instance: "shared", agent_ids: ["ana", "carlos"] }] },
  },
  "nexo/admin/credentials/register": {
    params: { channel: "whatsapp", instance: "shared", agent_ids: ["ana"], payload: { token: "wa.X" } },
    result: { summary: { channel: "whatsapp", instance: "shared", agent_ids: ["ana"] }, validation: null },
  },
  "nexo/admin/credentials/revoke": {
    params: { channel: "whatsapp", instance: "shared" },
    result: { removed: true, unbound_agents: ["ana", "carlos"] },
  },
  "nexo/admin/pairing/start": {
    params: { agent_id: "ana", channel: "whatsapp" },
    result: { challenge_id: "c-1", expires_at_ms: T + 30000, instructions: "Scan the QR with WhatsApp" },
  },
  "nexo/admin/pairing/status": {
    params: { challenge_id: "c-1" },
    result: { challenge_id: "c-1", state: "pending" },
  },
  "nexo/admin/pairing/cancel": { params: { challenge_id: "c-1" }, result: { cancelled: true } },
  "nexo/admin/llm_providers/list": {
    params: { tenant_id: "acme" },
    result: {
      providers: [
        {
          id: "minimax",
          base_url: "https://api.minimax.chat/v1",
          api_key_env: "MINIMAX_KEY_ACME",
          tenant_scope: "acme",
        },
      ],
    },
  },
  "nexo/admin/llm_providers/upsert": {
    params: { id: "minimax", base_url: "https://api.minimax.chat/v1", api_key_env: "MINIMAX_API_KEY" },
    result: { id: "minimax", base_url: "https://api.minimax.chat/v1", api_key_env: "MINIMAX_API_KEY" },
  },
  "nexo/admin/llm_providers/delete": { params: { provider_id: "minimax" }, result: { removed: false } },
  "nexo/admin/channels/list": {
    params: { agent_id: "ana" },
    result: { entries: [{ agent_id: "ana", server_name: "slack", allowlist: [0, 2] }] },
  },
  "nexo/admin/channels/approve": {
    params: { agent_id: "ana", server_name: "plugin:telegram:tg" },
    result: { agent_id: "ana", server_name: "plugin:telegram:tg" },
  },
  "nexo/admin/channels/revoke": {
    params: { agent_id: "ana", server_name: "slack" },
    result: { removed: true },
  },
  "nexo/admin/channels/doctor": {
    params: undefined,
    result: {
      verdicts: [{ agent_id: "ana", server_name: "slack", status: "ok", message: "static check passed" }],
    },
  },
  "nexo/admin/reload": { params: undefined, result: { reloaded_at_ms: T } },
  "nexo/admin/llm/complete": {
    params: {
      provider: "deepseek",
      model: "deepseek-chat",
      messages: [
        { role: "system", content: "You are Ana." },
        { role: "user", content: "hola" },
      ],
      max_tokens: 512,
      temperature: 0.7,
    },
    result: {
      content: "hola, ¿en qué te ayudo?",
      model: "deepseek-chat",
      usage: { prompt_tokens: 42, completion_tokens: 18, total_tokens: 60 },
    },
  },
  "nexo/admin/agent_events/list": {
    params: { agent_id: "ana", kind: "transcript_appended", limit: 50, before: "1764050000000:42" },
    result: { events: [transcriptEvent], next_before: "1764049000000:17" },
  },
  "nexo/admin/agent_events/read": {
    params: { agent_id: "ana", session_id: SESSION, since_seq: 4 },
    result: { events: [] },
  },
  "nexo/admin/agent_events/search": {
    params: { agent_id: "ana", query: "hola" },
    result: {
      hits: [
        { session_id: SESSION, timestamp_ms: T, role: "user", source_plugin: "whatsapp", snippet: "[hola]" },
      ],
    },
  },
  "nexo/admin/microapp_audit/tail": {
    params: { microapp_id: "agent-creator", result: "denied", limit: 50 },
    result: { entries: [auditRow], total: 1, has_more: false },
  },
  "nexo/admin/processing/pause": {
    params: { scope: conversation, reason: "investigando", operator_token_hash: HASH },
    result: { changed: true, correlation_id: CORRELATION },
  },
  "nexo/admin/processing/resume": {
    params: { scope: conversation, operator_token_hash: HASH },
    result: { changed: true, correlation_id: CORRELATION, transcript_stamped: true, drained_pending: 3 },
  },
  "nexo/admin/processing/intervention": {
    params: {
      scope: conversation,
      action: {
        kind: "reply",
        channel: "whatsapp",
        account_id: "wa.0",
        to: "wa.55",
        body: "ok",
        msg_kind: "text",
      },
      operator_token_hash: HASH,
    },
    result: { changed: false, correlation_id: CORRELATION, transcript_stamped: false },
  },
  "nexo/admin/processing/state": {
    params: { scope: conversation },
    result: { state: { state: "agent_active" } },
  },
  "nexo/admin/escalations/list": {
    params: { filter: "all" },
    result: {
      entries: [
        {
          agent_id: "ana",
          scope: conversation,
          state: {
            state: "pending",
            scope: conversation,
            summary: "customer wants a refund I cannot authorise",
            reason: "out_of_scope",
            urgency: "high",
            context: { question: "can I refund?" },
            requested_at_ms: T,
          },
        },
      ],
    },
  },
  "nexo/admin/escalations/resolve": {
    params: { scope: conversation, by: "takeover", operator_token_hash: HASH },
    result: { changed: true, correlation_id: CORRELATION },
  },
  "nexo/admin/skills/list": {
    params: { prefix: "tari" },
    result: { skills: [{ name: "tarifario-2026", display_name: "Tarifario 2026", updated_at: ISO }] },
  },
  "nexo/admin/skills/get": { params: { name: "tarifario-2026" }, result: { skill: null } },
  "nexo/admin/skills/upsert": {
    params: {
      name: "tarifario-2026",
      body: "# Tarifario",
      requires: { bins: ["jq"], env: [], mode: "warn" },
    },
    result: { skill: { name: "tarifario-2026", body: "# Tarifario", updated_at: ISO }, created: true },
  },
  "nexo/admin/skills/delete": {
    params: { name: "tarifario-2026", tenant_id: "acme-corp" },
    result: { deleted: true },
  },
  "nexo/admin/tenants/list": {
    params: { active_only: true },
    result: {
      tenants: [
        { id: "acme-corp", display_name: "Acme Corp.", active: true, agent_count: 3, created_at: ISO },
      ],
    },
  },
  "nexo/admin/tenants/get": {
    params: { tenant_id: "acme-corp" },
    result: {
      tenant: {
        id: "acme-corp",
        display_name: "Acme Corp.",
        active: true,
        created_at: ISO,
        llm_provider_refs: ["acme-claude"],
        metadata: { tier: "pro" },
      },
    },
  },
  "nexo/admin/tenants/upsert": {
    params: { id: "globex", display_name: "Globex" },
    result: {
      tenant: { id: "globex", display_name: "Globex", active: true, created_at: ISO },
      created: true,
    },
  },
  "nexo/admin/tenants/delete": {
    params: { tenant_id: "acme-corp" },
    result: { removed: false, orphaned_agents: ["a-1", "a-2"] },
  },
  "nexo/admin/mcp/list": { params: undefined, result: { servers: [{ name: "fs", transport: "stdio" }] } },
  "nexo/admin/mcp/get": {
    params: { name: "fs" },
    result: { server: { name: "fs", transport: "stdio", command: "mcp-fs", args: ["/data"] } },
  },
  "nexo/admin/mcp/upsert": {
    params: { name: "remote", transport: "streamable_http", url: "https://mcp.example.com/mcp" },
    result: {
      server: { name: "remote", transport: "streamable_http", url: "https://mcp.example.com/mcp" },
      created: true,
    },
  },
  "nexo/admin/mcp/delete": { params: { name: "fs" }, result: { removed: true } },
  "nexo/admin/plugins/doctor": { params: undefined, result: { report: { plugins: [] }, generated_at_ms: T } },
  "nexo/admin/plugins/restart": {
    params: { plugin_id: "slack" },
    result: { plugin_id: "slack", previous_uptime_ms: 180000, restarted_at_ms: T, new_pid: 4242 },
  },
  "nexo/admin/memory/query": {
    params: { agent_id: "ana", query: "refund" },
    result: { entries: [{ id: "m-1", agent_id: "ana", content: "prefers email", created_at: ISO }] },
  },
  "nexo/admin/memory/list_snapshots": {
    params: { agent_id: "ana" },
    result: { snapshots: [snapshot], encryption_available: false },
  },
  "nexo/admin/memory/delete_snapshot": {
    params: { agent_id: "ana", id: "snap-1" },
    result: { removed: true },
  },
  "nexo/admin/memory/create_snapshot": {
    params: { agent_id: "ana", label: "pre-deploy" },
    result: { snapshot },
  },
  "nexo/admin/memory/restore_snapshot": {
    params: { agent_id: "ana", tenant: "", snapshot_id: "snap-1", dry_run: true },
    result: {
      report: {
        agent_id: "ana",
        from_snapshot_id: "snap-1",
        sqlite_restored_dbs: ["memory.db"],
        state_files_restored: [],
        workers_restarted: false,
        dry_run: true,
      },
    },
  },
  "nexo/admin/secrets/write": {
    params: { name: "MINIMAX_API_KEY", value: "sk-test-value" },
    result: { path: "/state/secrets/MINIMAX_API_KEY.txt", overwrote_env: false },
  },
  "nexo/admin/auth/rotate_token": {
    params: { reason: "scheduled rotation" },
    result: { ok: true, new_hash: "deadbeefcafebabe", at_ms: T },
  },
  "nexo/admin/microapps/list": {
    params: {},
    result: {
      microapps: [
        {
          id: "console",
          state: "running",
          pid: 4242,
          version: "0.1.0",
          restarts: 0,
          tools: [],
          hooks: [],
          capabilities: {
            declared: { required: ["agents_crud"], optional: ["plugin_doctor"] },
            granted: ["agents_crud", "plugin_doctor"],
          },
          warnings: [],
          stderr_tail: [],
        },
        {
          id: "notes",
          state: "refused",
          restarts: 0,
          tools: [],
          hooks: [],
          capabilities: { declared: { required: ["memory_query"], optional: [] }, granted: [] },
          warnings: [],
          last_error: { code: "microapp_refused", message: "memory_query is not granted", at_ms: T },
          stderr_tail: [],
        },
      ],
      generated_at_ms: T,
    },
  },
  "nexo/admin/microapps/restart": {
    params: { microapp_id: "notes" },
    result: {
      microapp_id: "notes",
      previous_pid: 4242,
      restarted_at_ms: T,
      deferred: false,
      state: "running",
      new_pid: 4250,
    },
  },
  "nexo/admin/whatsapp/bot/list": {
    params: { agent_id: "ana" },
    result: { agent_id: "ana", bots: [{ jid: "718584497008509@bot", persona_id: "p-1" }] },
  },
  "nexo/admin/whatsapp/bot/send": {
    params: { agent_id: "ana", bot_jid: "718584497008509@bot", text: "hola" },
    result: { msg_id: "3EB0C767D097B7C7C030" },
  },
};

describe("admin: the method table covers the spec", () => {
  const rows = SPEC_METHOD_TABLE.trim().split("\n");

  test("every row of the spec's table is a method with that capability and domain", () => {
    const seen = new Set<string>();
    for (const row of rows) {
      // The longest matching name wins (agents/list must not be read as a prefix of something longer).
      const name = ADMIN_METHOD_NAMES.filter((m) => row.startsWith(m)).sort((a, b) => b.length - a.length)[0];
      assert.ok(name, `no schema for the spec row "${row}"`);
      const entry = adminMethods[name];
      assert.ok(
        row.startsWith(name + entry.capability + entry.domain),
        `${name}: spec row "${row}" disagrees with capability ${entry.capability} / domain ${entry.domain}`,
      );
      seen.add(name);
    }
    assert.equal(rows.length, 52, "the spec table lists 52 methods");
    assert.equal(seen.size, rows.length, "each row names a different method");
    // nexo's own additions are the only methods beyond the spec's rows, and none is also a row.
    for (const addition of NEXO_ADMIN_ADDITIONS) assert.ok(!seen.has(addition), addition);
    assert.deepEqual(
      ADMIN_METHOD_NAMES.filter((name) => !seen.has(name)).sort(),
      [...NEXO_ADMIN_ADDITIONS].sort(),
      "the table has no method the spec does not list, but nexo's documented additions",
    );
  });

  test("the capability enum holds every capability of the table, and the table uses no other", () => {
    const used = new Set(Object.values(adminMethodCapabilities));
    assert.deepEqual([...used].sort(), [...ADMIN_METHOD_CAPABILITIES].sort());
    for (const capability of ADMIN_CAPABILITIES)
      assert.ok(AdminCapabilitySchema.safeParse(capability).success);
    for (const named of ["transcripts_subscribe", "agent_events_subscribe_all", "dispatch_outbound"]) {
      assert.ok(isKnownCapability(named), named);
    }
    assert.equal(isKnownCapability("agent_crud"), false);
  });

  test("every domain of the spec's table has methods", () => {
    const domains = new Set(Object.values(adminMethods).map((m) => m.domain));
    assert.deepEqual([...domains].sort(), [...ADMIN_DOMAINS].sort());
  });

  test("the embedded table is the spec's, verbatim", {
    skip: !existsSync(SPEC_PATH) && "specs not beside the repo",
  }, () => {
    const text = readFileSync(SPEC_PATH, "utf8");
    const section = text.slice(text.indexOf("Domains + methods"), text.indexOf("Live methods:"));
    const specRows = section.split("\n").filter((line) => line.startsWith("nexo/admin/"));
    assert.deepEqual(specRows, rows);
  });

  test("method names resolve, other names do not", () => {
    assert.equal(isAdminMethodName("nexo/admin/reload"), true);
    assert.equal(isAdminMethodName("nexo/admin/echo"), false);
    assert.equal(isAdminMethodName("toString"), false);
  });
});

describe("admin: every method's params and result parse", () => {
  test("one sample per method, no sample for an unknown method", () => {
    assert.deepEqual(Object.keys(samples).sort(), [...ADMIN_METHOD_NAMES].sort());
  });

  for (const name of ADMIN_METHOD_NAMES) {
    test(name, () => {
      const { params, result } = samples[name];
      assertRoundTrip(adminMethods[name].params, params);
      assertRoundTrip(adminMethods[name].result, result);
    });
  }
});

describe("admin: every JSON example of the spec parses", () => {
  test("[capabilities.admin] in plugin.toml", () => {
    const manifest = parseToml(`
[capabilities.admin]
required = ["agents_crud", "credentials_crud", "pairing_initiate"]
optional = ["llm_keys_crud", "channels_crud"]
`) as { capabilities: { admin: unknown } };
    const declaration = AdminCapabilityDeclarationSchema.parse(manifest.capabilities.admin);
    for (const name of [...declaration.required, ...declaration.optional])
      assert.ok(isKnownCapability(name), name);
  });

  test("extensions.yaml capabilities_grant", () => {
    // entries.agent-creator of the spec's YAML, as the YAML loader yields it, plus the `path` the
    // microapp contract requires (the admin spec's excerpt shows only the grant).
    const entry = {
      path: "extensions/agent-creator/main.py",
      capabilities_grant: ["agents_crud", "credentials_crud", "pairing_initiate"],
      allow_external_bind: false,
    };
    assertRoundTrip(MicroappExtensionEntrySchema, entry);
    for (const name of entry.capabilities_grant) assert.ok(isKnownCapability(name));
  });

  test("the wire shape: an agents/list request and its response", () => {
    const request = {
      jsonrpc: "2.0",
      id: "app:01HXXX...",
      method: "nexo/admin/agents/list",
      params: { active_only: true },
    };
    assertRoundTrip(AdminRequestSchema, request);
    assertRoundTrip(adminMethods["nexo/admin/agents/list"].params, request.params);
    const response = {
      jsonrpc: "2.0",
      id: "app:01HXXX...",
      result: { agents: [{ id: "ana", active: true, model_provider: "minimax", bindings_count: 2 }] },
    };
    assertRoundTrip(AdminSuccessResponseSchema, response);
    assertRoundTrip(AgentsListResultSchema, response.result);
  });

  test("the capability denial", () => {
    const error = {
      code: -32004,
      message: "capability_not_granted",
      data: { capability: "agents_crud", microapp_id: "agent-creator", method: "nexo/admin/agents/upsert" },
    };
    assertRoundTrip(CapabilityDeniedErrorSchema, error);
  });

  test("many-to-many credentials: bindings, register, upsert, revoke", () => {
    assertRoundTrip(AgentBindingSchema, { plugin: "whatsapp", instance: "shared" });
    assertRoundTrip(CredentialsRegisterParamsSchema, {
      channel: "whatsapp",
      instance: "shared",
      agent_ids: ["ana", "carlos"],
      payload: { token: "wa.X" },
    });
    assertRoundTrip(AgentsUpsertParamsSchema, {
      id: "ana",
      inbound_bindings: [{ plugin: "whatsapp", instance: "shared" }],
    });
    assertRoundTrip(CredentialsRevokeParamsSchema, { channel: "whatsapp", instance: "shared" });
  });

  test("the register response with a probe outcome, and without", () => {
    assertRoundTrip(CredentialsRegisterResultSchema, {
      summary: { channel: "telegram", instance: "kate", agent_ids: ["kate"] },
      validation: { probed: true, healthy: true, detail: "authenticated as @kate_bot", reason_code: "ok" },
    });
    assertRoundTrip(CredentialsRegisterResultSchema, {
      summary: { channel: "whatsapp", instance: "shared", agent_ids: [] },
      validation: null,
    });
  });

  test("telegram metadata", () => {
    const metadata = {
      polling: { enabled: true, interval_ms: 1000 },
      allow_agents: ["kate"],
      allowed_chat_ids: [123, 456],
    };
    assertRoundTrip(TelegramCredentialMetadataSchema, metadata);
    assertRoundTrip(CredentialsRegisterParamsSchema, {
      channel: "telegram",
      instance: "kate",
      agent_ids: ["kate"],
      payload: { token: "123:ABC" },
      metadata,
    });
  });

  test("the email register (the spec's // comments removed)", () => {
    const params = {
      channel: "email",
      instance: "ops",
      agent_ids: ["ana"],
      payload: { address: "ops@example.com", password: "..." },
      metadata: {
        imap: { host: "imap.example.com", port: 993, tls: "implicit_tls" },
        smtp: { host: "smtp.example.com", port: 587, tls: "starttls" },
        provider: "gmail",
      },
    };
    assertRoundTrip(CredentialsRegisterParamsSchema, params);
    const withToken = { ...params, payload: { address: "ops@example.com", xoauth2_token: "ya29.x" } };
    assertRoundTrip(CredentialsRegisterParamsSchema, withToken);
  });

  test("pairing_status_changed: qr_ready then linked", () => {
    const challenge_id = "0190f7a2-0000-7000-8000-000000000001";
    assertRoundTrip(adminNotifications["nexo/notify/pairing_status_changed"].params, {
      challenge_id,
      state: "qr_ready",
      data: { qr_ascii: "██ ▄▄ ██", qr_png_base64: "iVBORw0KGgo=" },
    });
    assertRoundTrip(adminNotifications["nexo/notify/pairing_status_changed"].params, {
      challenge_id,
      state: "linked",
      data: { device_jid: "573000000000:12@s.whatsapp.net" },
    });
  });

  test("the processing_state_changed firehose frame", () => {
    const params = {
      kind: "processing_state_changed",
      agent_id: "ana",
      scope: conversation,
      prev_state: { state: "agent_active" },
      new_state: {
        state: "paused_by_operator",
        scope: conversation,
        paused_at_ms: 1700000000000,
        operator_token_hash: "abcdef0123456789",
        reason: "investigando",
      },
      at_ms: 1700000000000,
    };
    assertRoundTrip(adminNotifications["nexo/notify/agent_event"].params, params);
  });

  test("the intervention with transcript stamping", () => {
    assertRoundTrip(ProcessingInterventionParamsSchema, {
      scope: conversation,
      action: {
        kind: "reply",
        channel: "whatsapp",
        account_id: "wa.0",
        to: "wa.55",
        body: "ya te resuelvo, dame 1 minuto",
        msg_kind: "text",
      },
      operator_token_hash: "abcdef0123456789",
      session_id: "33333333-3333-4333-8333-333333333333",
    });
  });

  test("the resume with an operator summary", () => {
    assertRoundTrip(ProcessingResumeParamsSchema, {
      scope: conversation,
      operator_token_hash: "abcdef0123456789",
      session_id: "33333333-3333-4333-8333-333333333333",
      summary_for_agent: "cliente confirmó dirección, IA puede continuar con confirmación de envío",
    });
  });

  test("the smoke recipe's pause and resume bodies", () => {
    assertRoundTrip(ProcessingPauseParamsSchema, {
      scope: {
        kind: "conversation",
        agent_id: "ana",
        channel: "whatsapp",
        account_id: "wa.0",
        contact_id: "wa.55",
      },
      operator_token_hash: HASH,
    });
    assertRoundTrip(ProcessingResumeParamsSchema, {
      scope: conversation,
      session_id: SESSION,
      summary_for_agent: "cliente confirmó dirección",
      operator_token_hash: HASH,
    });
  });

  test("the pending_inbounds_dropped frame", () => {
    assertRoundTrip(AgentEventSchema, {
      kind: "pending_inbounds_dropped",
      agent_id: "ana",
      scope: conversation,
      dropped: 1,
      at_ms: 1700000000000,
    });
  });

  test("the live transcript_appended frame", () => {
    assertRoundTrip(adminNotifications["nexo/notify/agent_event"].params, transcriptEvent);
    // Single-tenant deployments stamp tenant_id: null.
    assertRoundTrip(AgentEventSchema, { ...transcriptEvent, tenant_id: null });
  });

  test("an audit row", () => {
    assertRoundTrip(AdminAuditRowSchema, auditRow);
    assertRoundTrip(AdminAuditRowSchema, { ...auditRow, result: "ok", error_code: null, tenant_id: "acme" });
  });

  test("control, escalation and resolution states", () => {
    assertRoundTrip(ProcessingControlStateSchema, { state: "agent_active" });
    assertRoundTrip(EscalationStateSchema, { state: "none" });
    assertRoundTrip(EscalationStateSchema, {
      state: "resolved",
      scope: conversation,
      resolved_at_ms: T,
      by: { kind: "operator_dismissed", reason: "duplicate" },
    });
    for (const scope of [
      { kind: "agent_binding", agent_id: "ana", channel: "whatsapp", account_id: "wa.0" },
      { kind: "agent", agent_id: "ana" },
      { kind: "event_stream", agent_id: "ana", subject_pattern: "orders.>" },
      { kind: "batch_queue", agent_id: "ana", queue_name: "imports" },
      { kind: "custom", agent_id: "ana", scope_kind: "render", scope_id: "r-1" },
    ]) {
      assertRoundTrip(ProcessingScopeSchema, scope);
    }
  });

  test("the spec's enumerations", () => {
    assert.deepEqual(
      [...CREDENTIAL_REASON_CODES],
      [
        "ok",
        "unsupported_channel",
        "invalid_payload",
        "invalid_metadata",
        "connectivity_failed",
        "auth_failed",
        "tls_failed",
        "not_probed",
      ],
    );
    assert.deepEqual(
      [...PAIRING_STATES],
      ["pending", "qr_ready", "awaiting_user", "linked", "expired", "cancelled"],
    );
    assert.deepEqual([...OPERATOR_STAMPED_METHODS].sort(), [
      "nexo/admin/escalations/resolve",
      "nexo/admin/processing/intervention",
      "nexo/admin/processing/pause",
      "nexo/admin/processing/resume",
    ]);
    for (const name of OPERATOR_STAMPED_METHODS) {
      assert.ok(isOperatorStampedMethod(name));
      assert.ok(adminMethods[name].params.safeParse(samples[name].params).success);
      assert.ok(
        !adminMethods[name].params.safeParse({
          ...(samples[name].params as object),
          operator_token_hash: undefined,
        }).success,
        `${name} requires operator_token_hash`,
      );
    }
    assert.equal(isOperatorStampedMethod("nexo/admin/escalations/list"), false);
  });
});

describe("admin: ids", () => {
  test("microapp ids start with app:, daemon ids never do", () => {
    assert.equal(ADMIN_ID_PREFIX, "app:");
    assert.equal(isAdminRequestId("app:01HXXX"), true);
    assert.equal(isAdminRequestId("app:"), false);
    assert.equal(isAdminRequestId("01HXXX"), false);
    assert.equal(isAdminRequestId(7), false);
    assert.ok(DaemonRequestIdSchema.safeParse(7).success);
    assert.ok(DaemonRequestIdSchema.safeParse("0190f7a2-5b1c-7e3d-9a4f-1c2b3d4e5f60").success);
    assertRejectedAt(DaemonRequestIdSchema, "app:1", "", "must not start");
  });
});

describe("admin: unknown fields pass through", () => {
  test("at the top level and nested", () => {
    assertRoundTrip(AgentsListResultSchema, {
      agents: [{ id: "ana", active: true, model_provider: "minimax", bindings_count: 2, tenant_id: "acme" }],
      next_cursor: null,
    });
    assertRoundTrip(ProcessingPauseParamsSchema, {
      scope: { ...conversation, thread_id: "t-9" },
      operator_token_hash: HASH,
      ttl_ms: 60000,
    });
    assertRoundTrip(ProcessingAckSchema, { changed: true, correlation_id: CORRELATION, queued: 0 });
  });

  test("every kind this version names is validated, not passed through", () => {
    for (const kind of AGENT_EVENT_KINDS) {
      assert.equal(AgentEventSchema.safeParse({ kind, agent_id: "ana" }).success, false, kind);
    }
  });

  test("agent events of a kind this version does not know are kept whole", () => {
    const future = { kind: "batch_job_completed", agent_id: "ana", job_id: "j-1", rows: 47 };
    assertRoundTrip(AgentEventSchema, future);
    assertRoundTrip(adminMethods["nexo/admin/agent_events/list"].result, {
      events: [future, transcriptEvent],
    });
  });
});

describe("admin: invalid messages are rejected with a useful path", () => {
  test("an agent event of a known kind is checked against that kind", () => {
    assertRejectedAt(AgentEventSchema, { ...transcriptEvent, seq: "7" }, "seq");
    assertRejectedAt(
      adminMethods["nexo/admin/agent_events/read"].result,
      { events: [{ ...transcriptEvent, role: "bot" }] },
      "events.0.role",
    );
    assertRejectedAt(AgentEventSchema, { agent_id: "ana" }, "kind");
  });

  test("a list cursor is the form the daemon writes, nothing else", () => {
    const list = adminMethods["nexo/admin/agent_events/list"].params;
    const notCursors = ["", "42", "1764050000000", "1764050000000:", "a:1", "-1:2", "1:2:3", "1.5:2", " 1:2"];
    for (const before of notCursors)
      assertRejectedAt(list, { agent_id: "ana", before }, "before", "next_before");
    assertRejectedAt(list, { agent_id: "ana", before: 1764050000000 }, "before");
  });

  test("requests outside the admin namespace or without the app: id", () => {
    assertRejectedAt(AdminRequestSchema, { id: "app:1", method: "nexo/dispatch" }, "method", "nexo/admin/");
    assertRejectedAt(AdminRequestSchema, { id: "1", method: "nexo/admin/reload" }, "id", "app:");
  });

  test("operator token hashes must be the 16-hex token_hash", () => {
    assertRejectedAt(
      ProcessingPauseParamsSchema,
      { scope: conversation, operator_token_hash: "..." },
      "operator_token_hash",
      "16",
    );
    assertRejectedAt(
      ProcessingPauseParamsSchema,
      { scope: conversation, operator_token_hash: "ABCDEF0123456789" },
      "operator_token_hash",
    );
  });

  test("scopes and actions are tagged unions", () => {
    assertRejectedAt(ProcessingStateParams(), { scope: { kind: "thread", agent_id: "ana" } }, "scope.kind");
    assertRejectedAt(
      ProcessingStateParams(),
      { scope: { ...conversation, contact_id: "" } },
      "scope.contact_id",
    );
    assertRejectedAt(
      ProcessingInterventionParamsSchema,
      { scope: conversation, action: { kind: "reply", channel: "whatsapp" }, operator_token_hash: HASH },
      "action.account_id",
    );
  });

  test("resume: the spec's three handler-side rejections", () => {
    const base = { scope: conversation, operator_token_hash: HASH };
    assertRejectedAt(
      ProcessingResumeParamsSchema,
      { ...base, summary_for_agent: "done" },
      "session_id",
      "session_id_required_with_summary",
    );
    assertRejectedAt(
      ProcessingResumeParamsSchema,
      { ...base, session_id: SESSION, summary_for_agent: "   " },
      "summary_for_agent",
      "empty_summary",
    );
    assertRejectedAt(
      ProcessingResumeParamsSchema,
      { ...base, session_id: SESSION, summary_for_agent: "x".repeat(PROCESSING_SUMMARY_MAX_LEN + 1) },
      "summary_for_agent",
      "summary_too_long",
    );
    assertRoundTrip(ProcessingResumeParamsSchema, {
      ...base,
      session_id: SESSION,
      summary_for_agent: "x".repeat(PROCESSING_SUMMARY_MAX_LEN),
    });
    const issue = ProcessingResumeParamsSchema.safeParse({ ...base, summary_for_agent: "done" }).error
      ?.issues[0];
    assert.deepEqual(issue?.code === "custom" && issue.params, {
      reason: "session_id_required_with_summary",
    });
  });

  test("escalations: dismissing needs a reason, by is dismissed or takeover", () => {
    const base = { scope: conversation, operator_token_hash: HASH };
    assertRejectedAt(EscalationsResolveParamsSchema, { ...base, by: "dismissed" }, "dismiss_reason");
    assertRejectedAt(EscalationsResolveParamsSchema, { ...base, by: "snoozed" }, "by");
    assertRoundTrip(EscalationsResolveParamsSchema, {
      ...base,
      by: "dismissed",
      dismiss_reason: "duplicate",
    });
  });

  test("email credentials: exactly one secret, complete server metadata", () => {
    const base = {
      channel: "email",
      instance: "ops",
      agent_ids: ["ana"],
      metadata: {
        imap: { host: "imap.example.com", port: 993, tls: "implicit_tls" },
        smtp: { host: "smtp.example.com", port: 587, tls: "starttls" },
      },
    };
    assertRejectedAt(
      CredentialsRegisterParamsSchema,
      { ...base, payload: { address: "ops@example.com", password: "p", xoauth2_token: "t" } },
      "payload.xoauth2_token",
      "exactly one",
    );
    assertRejectedAt(
      CredentialsRegisterParamsSchema,
      { ...base, payload: { address: "ops@example.com" } },
      "payload.password",
      "exactly one",
    );
    assertRejectedAt(
      CredentialsRegisterParamsSchema,
      {
        ...base,
        payload: { address: "ops@example.com", password: "p" },
        metadata: { ...base.metadata, imap: { port: 993, tls: "implicit_tls" } },
      },
      "metadata.imap.host",
    );
    assertRejectedAt(
      CredentialsRegisterParamsSchema,
      {
        ...base,
        payload: { address: "ops@example.com", password: "p" },
        metadata: { ...base.metadata, smtp: { host: "s", port: 70000, tls: "starttls" } },
      },
      "metadata.smtp.port",
    );
    assertRejectedAt(CredentialsRegisterParamsSchema, { channel: "whatsapp", agent_ids: [] }, "payload");
  });

  test("llm providers: one key source, no empty tenant", () => {
    const base = { id: "minimax", base_url: "https://api.minimax.chat/v1" };
    assertRejectedAt(
      LlmProvidersUpsertParamsSchema,
      { ...base, api_key_env: "MINIMAX_API_KEY", api_key_secret_value: "sk-x" },
      "api_key_secret_value",
      "one source",
    );
    assertRejectedAt(LlmProvidersUpsertParamsSchema, { ...base, tenant_id: "" }, "tenant_id");
  });

  test("names that become paths, env vars or addresses", () => {
    assertRejectedAt(SecretsWriteParamsSchema, { name: "../etc/passwd", value: "x" }, "name");
    assertRejectedAt(SecretsWriteParamsSchema, { name: "minimax_key", value: "x" }, "name");
    assertRejectedAt(SecretsWriteParamsSchema, { name: "MINIMAX_KEY", value: "" }, "value");
    assertRejectedAt(SkillsUpsertParamsSchema, { name: "../x", body: "b" }, "name");
    assertRejectedAt(SkillsUpsertParamsSchema, { name: "ok", body: "  \n" }, "body");
    assertRejectedAt(TenantsUpsertParamsSchema, { id: "Acme Corp", display_name: "Acme" }, "id");
    assertRejectedAt(
      WhatsappBotSendParamsSchema,
      { agent_id: "ana", bot_jid: "5730000@s.whatsapp.net", text: "hi" },
      "bot_jid",
      "@bot",
    );
  });

  test("mcp servers need their transport's connection field", () => {
    assertRejectedAt(McpUpsertParamsSchema, { name: "fs", transport: "stdio" }, "command");
    assertRejectedAt(McpUpsertParamsSchema, { name: "remote", transport: "sse" }, "url");
    assertRejectedAt(McpUpsertParamsSchema, { name: "x", transport: "websocket" }, "transport");
  });

  test("pairing states and capability declarations", () => {
    assertRejectedAt(PairingStatusSchema, { challenge_id: "c-1", state: "scanning" }, "state");
    assertRejectedAt(
      AdminCapabilityDeclarationSchema,
      { required: ["agents_crud"], optional: ["agents_crud"] },
      "optional.0",
      "both required and optional",
    );
  });

  test("notifications: token_rotated carries a token hash", () => {
    assertRejectedAt(
      adminNotifications["nexo/notify/token_rotated"].params,
      { old_hash: "short", new: "t" },
      "old_hash",
    );
  });
});

function ProcessingStateParams(): z.ZodType {
  return adminMethods["nexo/admin/processing/state"].params;
}
