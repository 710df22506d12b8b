/**
 * services.skills against a real daemon, the loopback channel plugin and the mock LLM server: the
 * skills an agent lists in agents.yaml are in the system prompt the model receives (checked in the
 * mock's recorded requests), a changed skill is in the very next request, a tenant's own copy
 * shadows the global one, deleting a skill an agent still loads is refused, and agents.yaml naming
 * an unknown skill is refused with its location.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import { InvalidConfigError, SkillInUseError } from "../../../src/daemon/services/index.js";
import { type DaemonDir, EXAMPLE_PLUGINS, startFromDir } from "../../helpers/daemon-dir.js";
import { endpoint, say } from "../../helpers/loopback.js";

/** The system prompt of the mock's last request (Anthropic's wire: `system` as text or blocks). */
function lastSystemPrompt(mock: MockLlmServer): string {
  const body = mock.requests().at(-1)?.body as { system?: string | Array<{ text: string }> } | undefined;
  const system = body?.system;
  if (typeof system === "string") return system;
  return (system ?? []).map((block) => block.text).join("\n");
}

describe("services.skills", () => {
  const mock = new MockLlmServer();
  let env: DaemonDir;
  before(async () => {
    await mock.start();
    env = await startFromDir({
      "llm.yaml": `providers:\n  mock:\n    type: anthropic\n    base_url: ${mock.url}\n    api_key: sk-test\n`,
      "tenants.yaml": "tenants:\n  - id: acme\n",
      "agents.yaml": `agents:
  - id: ana
    model: { provider: mock, model: claude-test }
    system_prompt: You are Ana.
    skills: [tone]
    inbound_bindings: [{ plugin: loopback }]
  - id: acme-bot
    tenant_id: acme
    model: { provider: mock, model: claude-test }
    skills: [tone]
`,
      "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n`,
      "skills/tone/SKILL.md": "---\ndisplay_name: Tone of voice\n---\nAlways sound cheerful.\n",
    });
  });
  after(async () => {
    await env.daemon.stop("test over");
    await mock.close();
  });

  it("an agent's skills are in the system prompt the model receives", async () => {
    mock.reset([{ text: "hello!" }]);
    assert.equal(await say(await endpoint(env.stateDir), "alice", "hi"), "hello!");
    const system = lastSystemPrompt(mock);
    assert.match(system, /^You are Ana\./);
    assert.match(system, /## Tone of voice\n\nAlways sound cheerful\./);
  });

  it("a changed skill is in the next request", async () => {
    const result = await env.daemon.services.skills.upsert({
      name: "tone",
      content: { displayName: "Tone of voice", body: "Always sound solemn." },
    });
    assert.equal(result.created, false);
    assert.ok(result.reload !== undefined, "the change was applied by a reload");
    mock.reset([{ text: "indeed." }]);
    assert.equal(await say(await endpoint(env.stateDir), "alice", "hi again"), "indeed.");
    const system = lastSystemPrompt(mock);
    assert.match(system, /Always sound solemn\./);
    assert.doesNotMatch(system, /cheerful/);
  });

  it("lists and reads the namespaces", async () => {
    const { skills } = env.daemon.services;
    await skills.upsert({ name: "tone", tenantId: "acme", content: { body: "Acme's own tone." } });
    assert.deepEqual(
      (await skills.list()).map((s) => s.name),
      ["tone"],
    );
    assert.equal((await skills.get("tone", "acme"))?.body, "Acme's own tone.\n");
    const ana = env.daemon.spec.agents.find((agent) => agent.id === "ana");
    const acme = env.daemon.spec.agents.find((agent) => agent.id === "acme-bot");
    assert.match(ana?.systemPrompt ?? "", /solemn/);
    assert.match(acme?.systemPrompt ?? "", /Acme's own tone\./, "the tenant's copy shadows the global one");
  });

  it("refuses to delete a skill an agent would be left without, and deletes a shadowing copy", async () => {
    const { skills } = env.daemon.services;
    const refused = await skills.delete("tone").then(
      () => assert.fail("accepted"),
      (e: unknown) => e,
    );
    assert.ok(refused instanceof SkillInUseError);
    assert.deepEqual(refused.agents, ["ana"], "acme-bot has its tenant's own copy");
    assert.equal(refused.kind, "conflict");
    assert.equal((await skills.get("tone"))?.body, "Always sound solemn.\n");

    const removed = await skills.delete("tone", "acme");
    assert.equal(removed.removed, true);
    const acme = env.daemon.spec.agents.find((agent) => agent.id === "acme-bot");
    assert.match(acme?.systemPrompt ?? "", /solemn/, "the global copy took over");
    assert.deepEqual(await skills.delete("tone", "acme"), { removed: false, reload: undefined });
  });

  it("agents.yaml naming an unknown skill is refused at its place, and nothing is written", async () => {
    const before = env.read("agents.yaml");
    const error = await env.daemon.services.agents.upsert({ id: "ana", skills: ["tone", "nope"] }).then(
      () => assert.fail("accepted"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof InvalidConfigError);
    assert.equal(error.issues[0]?.keyPath, "agents[0].skills[1]");
    assert.match(error.issues[0]?.message ?? "", /unknown skill "nope" \(no skills\/nope\/SKILL\.md\)/);
    assert.equal(env.read("agents.yaml"), before);
  });
});
