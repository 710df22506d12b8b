/**
 * The Python example, run as the real `main.py` process and driven over its stdio by the scripted
 * daemon of the SDK's tests (the daemon's side of the contract, the admin RPC behind a capability
 * gate): the catalogue, notes kept per account, admin calls granted and refused, daemon frames
 * that arrive while it waits for an answer, the hook, and every way of stopping.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MethodNotFoundError, MicroappInternalError } from "@nexo/wire";
import { microapp } from "@nexo/wire/schemas";
import { ScriptedDaemon } from "../../../../packages/sdk/test/helpers/scripted-daemon.js";

const MAIN = fileURLToPath(new URL("../main.py", import.meta.url));

const daemons: ScriptedDaemon[] = [];
afterEach(async () => {
  for (const daemon of daemons.splice(0)) await daemon.dispose();
});

async function started(grants: string[] = ["agents_crud"]): Promise<ScriptedDaemon> {
  const daemon = new ScriptedDaemon({ command: [MAIN], extensionId: "python-notes", grants });
  daemons.push(daemon);
  await daemon.initialize({ config: { blocked_words: ["password"] } });
  return daemon;
}

describe("python-notes", () => {
  test("initialize: the catalogue carries the one prefix, and the before_message hook", async () => {
    const daemon = new ScriptedDaemon({ command: [MAIN], extensionId: "python-notes" });
    daemons.push(daemon);
    const result = microapp.MicroappInitializeResultSchema.parse(await daemon.initialize());
    assert.deepEqual(
      result.tools.map((t) => t.name),
      [
        "python_notes_add",
        "python_notes_list",
        "python_notes_agents",
        "python_notes_create_agent",
        "python_notes_publish",
      ],
    );
    assert.deepEqual(
      microapp.microappToolCatalogSchema("python-notes").safeParse(result.tools).success,
      true,
    );
    assert.deepEqual(result.hooks, ["before_message"]);
    assert.deepEqual(await daemon.host.peer.request("tools/list", {}), { tools: result.tools });
  });

  test("notes are kept per account (binding_context.account_id) in state_dir", async () => {
    const daemon = await started();
    assert.deepEqual(await daemon.callTool("python_notes_add", { text: "buy milk" }), {
      output: { saved: "buy milk", count: 1 },
    });
    await daemon.callTool("python_notes_add", { text: "call Ana" });
    const other = { binding_context: { agent_id: "ana", account_id: "globex" } };
    await daemon.callTool("python_notes_add", { text: "globex only" }, other);
    assert.deepEqual(await daemon.callTool("python_notes_list"), {
      output: { notes: ["buy milk", "call Ana"] },
    });
    assert.deepEqual(await daemon.callTool("python_notes_list", {}, other), {
      output: { notes: ["globex only"] },
    });
    assert.deepEqual(await daemon.callTool("python_notes_add", { text: " " }), {
      error: "text must be a non-empty string",
    });
  });

  test("admin calls: granted ones answer; a refused one is a tool error the agent can read", async () => {
    const daemon = await started(["agents_crud"]);
    daemon.serve("nexo/admin/agents/list", () => ({
      agents: [{ id: "ana", active: true, model_provider: "scripted", bindings_count: 0 }],
    }));
    daemon.serve("nexo/admin/agents/upsert", (params) => ({
      id: params.id,
      model: params.model!,
      active: true,
      allowed_tools: [],
      inbound_bindings: [],
      system_prompt: params.system_prompt ?? "",
    }));
    assert.deepEqual(await daemon.callTool("python_notes_agents"), { output: { agents: ["ana"] } });
    assert.deepEqual(await daemon.callTool("python_notes_create_agent", { id: "carlos" }), {
      output: { created: "carlos", model: { provider: "scripted", model: "scripted" } },
    });
    assert.deepEqual(await daemon.callTool("python_notes_publish", { text: "be brief" }), {
      error: "not allowed: the operator has not granted skills_crud",
    });
    assert.deepEqual(
      daemon.calls.map((c) => [c.method, c.outcome]),
      [
        ["nexo/admin/agents/list", "served"],
        ["nexo/admin/agents/upsert", "served"],
        ["nexo/admin/skills/upsert", "denied"],
      ],
    );
    for (const call of daemon.calls) assert.match(String(call.id), /^app:[0-9a-f-]{36}$/);
  });

  test("daemon frames arriving while it waits for an admin answer are served afterwards, in order", async () => {
    const daemon = await started(["agents_crud"]);
    let listed: Promise<unknown> | undefined;
    daemon.serve("nexo/admin/agents/list", async () => {
      await daemon.notify("agents/updated", { agent_ids: ["ana", "bob"] });
      listed = daemon.host.peer.request("tools/list", {});
      return { agents: [] };
    });
    assert.deepEqual(await daemon.callTool("python_notes_agents"), { output: { agents: [] } });
    const tools = (await listed) as { tools: unknown[] };
    assert.equal(tools.tools.length, 5);
    await daemon.host.stderrMatch(/\[INFO\] python-notes: agents now: ana, bob/);
  });

  test("before_message: a configured word denies with a reason, anything else abstains", async () => {
    const daemon = await started();
    assert.deepEqual(await daemon.hook("before_message", { text: "my Password is 123", agent_id: "ana" }), {
      vote: "deny",
      reason: "the message mentions 'password'",
    });
    assert.deepEqual(await daemon.hook("before_message", { text: "hello" }), { vote: "abstain" });
  });

  test("unknown methods are -32601; a bug in a handler is -32099 and the microapp keeps serving", async () => {
    const daemon = await started();
    await assert.rejects(daemon.host.peer.request("tools/describe", {}), MethodNotFoundError);
    await assert.rejects(daemon.host.peer.request("tools/call", { args: {} }), MicroappInternalError);
    await daemon.host.stderrMatch(/\[ERROR\] python-notes: tools\/call failed: KeyError\('tool'\)/);
    assert.deepEqual(await daemon.callTool("python_notes_list"), { output: { notes: [] } });
  });

  test("shutdown is answered {ok:true} and the process exits 0; so does stdin closing", async () => {
    const daemon = await started();
    assert.deepEqual(await daemon.shutdown(), { ok: true });
    assert.deepEqual(await daemon.host.waitExit(), { code: 0, signal: null });
    daemon.host.assertFramesIntact();
    const other = await started();
    other.host.child.stdin.end();
    assert.deepEqual(await other.host.waitExit(), { code: 0, signal: null });
  });
});
