/**
 * The microapp manager with real processes: the capability boot diff (a microapp missing a
 * required grant is refused, never spawned, while the others run), tools and hooks offered to the
 * engine's registries, agents/updated with a tools/list refresh, notifications by capability, a
 * new extensions.yaml applied, and an operator's restart of a microapp that gave up.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { afterEach, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { HookRunner } from "../../../src/engine/hooks.js";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import type { MicroappDefinition } from "../../../src/extensions/microapps/definition.js";
import { MicroappManager } from "../../../src/extensions/microapps/manager.js";
import { ProcessGroupRegistry } from "../../../src/extensions/reaper.js";
import { cleanupMicroapps, fixtureDefinition, tempDir } from "../../fixtures/microapps/harness.js";
import { childPidsWithMarker, recordingLogger } from "../../fixtures/processes.js";

const managers: MicroappManager[] = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.stop("test over");
  await cleanupMicroapps();
});

async function as(
  id: string,
  fixture: "probe" | "py-hello",
  grants: string[],
  config?: unknown,
): Promise<MicroappDefinition> {
  const definition = await fixtureDefinition(fixture, {
    capabilities_grant: grants,
    ...(config ? { config } : {}),
  });
  return { ...definition, id };
}

function manager(
  definitions: MicroappDefinition[],
  extra: { tools?: ToolRegistry; hooks?: HookRunner } = {},
) {
  const logger = recordingLogger();
  const made = new MicroappManager({
    definitions,
    stateRoot: tempDir("nexo-microapps-"),
    env: { PATH: process.env.PATH },
    registries: extra,
    restart: { initialDelayMs: 50, maxDelayMs: 200, jitter: 0 },
    logger,
    processGroups: new ProcessGroupRegistry(),
  });
  managers.push(made);
  return { manager: made, logs: logger.entries };
}

async function notes(m: MicroappManager, id: string): Promise<Array<{ method: string; params: unknown }>> {
  const reply = await m
    .host(id)!
    .callTool({ tool: `${id}_notes`, args: {}, binding_context: { agent_id: "t" } });
  return reply.output as Array<{ method: string; params: unknown }>;
}

describe("microapp manager: the capability boot diff", () => {
  it("refuses a microapp missing a required capability — never spawned, logged with each missing one — and runs the others", async () => {
    const marker = "probe/main.mjs";
    const before = childPidsWithMarker(marker).length;
    const { manager: m, logs } = manager([
      await as("probe", "probe", ["memory_query"]),
      await as("py-hello", "py-hello", ["audit_read", "agents_crud", "no_such_cap"]),
    ]);
    const status = await m.start();
    const probe = status.find((s) => s.id === "probe")!;
    assert.equal(probe.state, "refused");
    assert.equal(probe.pid, undefined);
    assert.equal(probe.lastError?.code, "microapp_refused");
    assert.match(
      probe.lastError?.message ?? "",
      /microapp probe is refused: its plugin.toml requires audit_read/,
    );
    assert.equal(m.host("probe"), undefined);
    assert.equal(childPidsWithMarker(marker).length, before, "the refused microapp was never spawned");
    const refusal = logs.find((entry) => entry.level === "error" && entry.fields.microapp === "probe");
    assert.deepEqual(refusal?.fields.missing, ["audit_read"]);

    const py = status.find((s) => s.id === "py-hello")!;
    assert.equal(py.state, "running");
    assert.ok(py.warnings.some((w) => /optional capability memory_query is not granted/.test(w)));
    assert.ok(
      py.warnings.some((w) =>
        /agents_crud is granted but py-hello's plugin.toml does not declare it; allowed/.test(w),
      ),
    );
    assert.ok(
      py.warnings.some((w) => /no_such_cap is granted but this nexo knows no such capability/.test(w)),
    );
  });
});

describe("microapp manager: tools, hooks and notifications", () => {
  it("offers the tools to the registry and the hooks to the runner; a deny blocks, -32601 abstains", async () => {
    const tools = new ToolRegistry();
    const hooks = new HookRunner();
    const { manager: m } = manager(
      [
        await as("probe", "probe", ["audit_read"]),
        await as("quiet", "probe", ["audit_read"], { hook_vote: "unknown" }),
      ],
      { tools, hooks },
    );
    await m.start();
    assert.equal(tools.get("probe_echo")?.source, "microapp");
    assert.ok(tools.has("quiet_echo"));
    const ctx = { agentId: "ana", sessionId: "s1" };
    const allowed = await hooks.run("before_message", { text: "hello" }, ctx);
    assert.equal(allowed.decision, "continue");
    const blocked = await hooks.run("before_message", { text: "this is forbidden" }, ctx);
    assert.deepEqual(
      { decision: blocked.decision, reason: blocked.reason, by: blocked.by },
      {
        decision: "block",
        reason: "the probe forbids it",
        by: "microapp:probe:before_message",
      },
    );
    await m.stop();
    assert.equal(tools.has("probe_echo"), false, "stopping removes the tools");
    assert.equal(hooks.has("before_message"), false);
  });

  it("agents/updated reaches every running microapp and tools/list is asked again", async () => {
    const tools = new ToolRegistry();
    const { manager: m } = manager([await as("probe", "probe", ["audit_read"], { unstable: true })], {
      tools,
    });
    await m.start();
    let refreshed = 0;
    m.host("probe")!.on("tools", () => refreshed++);
    await m.agentsUpdated(["ana", "carlos"]);
    assert.deepEqual(await notes(m, "probe"), [
      { method: "agents/updated", params: { agent_ids: ["ana", "carlos"] } },
    ]);
    assert.equal(refreshed, 1, "the reordered catalogue was adopted");
    assert.ok(tools.has("probe_echo"));
  });

  it("a notification reaches only the microapps holding one of its capabilities", async () => {
    const { manager: m } = manager([
      await as("probe", "probe", ["audit_read", "transcripts_subscribe"]),
      await as("other", "probe", ["audit_read"]),
    ]);
    await m.start();
    const params = { session_id: "s1", role: "user", body: "hola", ts_ms: 1 };
    assert.deepEqual(m.notify("nexo/notify/transcript_appended", params), ["probe"]);
    assert.deepEqual(m.notify("agents/updated", { agent_ids: [] }).sort(), ["other", "probe"]);
    for (let i = 0; i < 50 && (await notes(m, "probe")).length < 2; i++) await sleep(20);
    assert.deepEqual(
      (await notes(m, "probe")).map((n) => n.method),
      ["nexo/notify/transcript_appended", "agents/updated"],
    );
    assert.deepEqual(
      (await notes(m, "other")).map((n) => n.method),
      ["agents/updated"],
    );
  });
});

describe("microapp manager: a new extensions.yaml", () => {
  it("stops the removed, starts the added, restarts the changed and keeps the rest", async () => {
    const keep = await as("keep", "probe", ["audit_read"]);
    const change = await as("change", "probe", ["audit_read"]);
    const drop = await as("drop", "probe", ["audit_read"]);
    const { manager: m } = manager([keep, change, drop]);
    await m.start();
    const keepPid = m.host("keep")!.session!.pid;
    const changePid = m.host("change")!.session!.pid;
    const report = await m.update([
      keep,
      { ...change, entry: { ...change.entry, timeout_secs: 5 } },
      await as("added", "py-hello", []),
    ]);
    assert.deepEqual(report, { added: ["added"], removed: ["drop"], restarted: ["change"] });
    assert.equal(m.host("keep")!.session!.pid, keepPid);
    assert.notEqual(m.host("change")!.session!.pid, changePid);
    assert.equal(m.host("change")!.timeoutMs, 5000);
    assert.equal(m.host("drop"), undefined);
    assert.equal(m.host("added")?.state, "running");
    assert.deepEqual(
      m.status().map((s) => s.id),
      ["keep", "change", "added"],
    );
  });
});

describe("microapp manager: an operator's restart", () => {
  it("starts a microapp that gave up again, on a fresh budget, with its tools offered again", async () => {
    const tools = new ToolRegistry();
    const m = new MicroappManager({
      definitions: [await as("probe", "probe", ["audit_read"])],
      stateRoot: tempDir("nexo-microapps-"),
      env: { PATH: process.env.PATH },
      registries: { tools },
      // The first crash is final: the host gives up at once.
      restart: { respawn: false },
      logger: recordingLogger(),
      processGroups: new ProcessGroupRegistry(),
    });
    managers.push(m);
    await m.start();
    const host = m.host("probe")!;
    const first = host.status().pid;
    const failed = once(host, "failed");
    await host
      .callTool({ tool: "probe_crash", args: {}, binding_context: { agent_id: "ana" } })
      .catch(() => undefined);
    await failed;
    assert.equal(m.status()[0]?.state, "failed");
    assert.equal(tools.has("probe_echo"), false, "a microapp that gave up has its tools withdrawn");

    const after = await m.restart("probe");
    assert.equal(after?.state, "running", JSON.stringify(after));
    assert.ok(after?.pid !== undefined && after.pid !== first);
    assert.equal(after?.restarts, 1, "the restart counts on the same process line");
    assert.ok(tools.has("probe_echo"), "its tools are offered again");
    assert.equal(await m.restart("nothere"), undefined);
  });
});
