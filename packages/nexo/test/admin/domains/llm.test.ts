/** `nexo/admin/llm/complete` through a provider the daemon resolved (the offline scripted model). */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { ScriptedProvider } from "../../../src/engine/providers/scripted.js";
import { SCRIPTED_INTRO } from "../../../src/engine/providers/scripted-rules.js";
import { type AdminRig, adminRig } from "../../fixtures/microapps/admin-harness.js";
import { cleanupMicroapps } from "../../fixtures/microapps/harness.js";

let rig: AdminRig | undefined;
afterEach(async () => {
  await rig?.stop();
  rig = undefined;
  await cleanupMicroapps();
});

const COMPLETE = "nexo/admin/llm/complete";

async function adminRigSystemOnly() {
  await rig?.stop();
  const scripted = new ScriptedProvider();
  rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read", "llm_complete"] }], {
    services: () => ({ providers: { get: () => scripted } }),
  });
  return rig.call("probe", COMPLETE, {
    provider: "scripted",
    model: "m",
    messages: [{ role: "system", content: "x" }],
  });
}

describe("llm/complete", () => {
  it("runs the completion on the named provider and reports content, model and usage", async () => {
    const scripted = new ScriptedProvider();
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read", "llm_complete"] }], {
      services: () => ({ providers: { get: (id) => (id === "scripted" ? scripted : undefined) } }),
    });
    const reply = await rig.call("probe", COMPLETE, {
      provider: "scripted",
      model: "nexo-scripted-demo",
      system_prompt: "Be brief.",
      messages: [{ role: "user", content: "hello there" }],
    });
    const result = reply.result as { content: string; model: string; usage: Record<string, number> };
    assert.match(result.content, new RegExp(SCRIPTED_INTRO.slice(0, 20)));
    assert.equal(result.model, "nexo-scripted-demo");
    assert.ok((result.usage.completion_tokens ?? 0) > 0);
    assert.equal(
      result.usage.total_tokens,
      (result.usage.prompt_tokens ?? 0) + (result.usage.completion_tokens ?? 0),
    );
  });

  it("an unknown provider, an unknown role and only system messages are invalid params", async () => {
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read", "llm_complete"] }], {
      services: () => ({ providers: { get: () => undefined } }),
    });
    const unknown = await rig.call("probe", COMPLETE, {
      provider: "nope",
      model: "m",
      messages: [{ role: "user", content: "x" }],
    });
    assert.equal(unknown.error?.code, -32602);
    assert.match(unknown.error?.message ?? "", /no LLM provider named "nope"/);
    const role = await rig.call("probe", COMPLETE, {
      provider: "nope",
      model: "m",
      messages: [{ role: "wizard", content: "x" }],
    });
    assert.equal(role.error?.code, -32602);
    assert.match(role.error?.message ?? "", /role/);
    const onlySystem = await adminRigSystemOnly();
    assert.equal(onlySystem.error?.code, -32602);
    assert.match(onlySystem.error?.message ?? "", /only system messages/);
  });
});
