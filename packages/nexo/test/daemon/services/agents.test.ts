/**
 * services.agents against a real daemon (the loopback channel and demo tools plugins, a real
 * SQLite store, the config watcher on, as under `nexo start`): reads come from agents.yaml as
 * written; upsert and delete are comment-preserving edits checked against the whole directory and
 * applied by a real hot reload; refusals leave the file byte-for-byte as it was.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { InvalidConfigError, NotFoundError } from "../../../src/daemon/services/index.js";
import { type DaemonDir, EXAMPLE_PLUGINS, startFromDir } from "../../helpers/daemon-dir.js";
import { endpoint, say } from "../../helpers/loopback.js";

const AGENTS = `# Agents of the test deployment.
agents:
  # The front desk: answers the loopback channel.
  - id: ana
    description: front desk # shown to operators
    model: { provider: scripted, model: nexo-scripted-demo }
    system_prompt: "first prompt"
    inbound_bindings: [{ plugin: loopback }]
    approval: { allow: [info, demo_weather] }

  # Kept for later; not routed to.
  - id: zed
    active: false
    model: { provider: scripted, model: nexo-scripted-demo }
`;

const PLUGINS = `plugins:
  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}
  - dir: ${join(EXAMPLE_PLUGINS, "demo-tools")}
    grants: { memory_agents: [zed] } # the demo plugin may read zed's memory
`;

describe("services.agents", () => {
  let env: DaemonDir;
  before(async () => {
    env = await startFromDir({ "agents.yaml": AGENTS, "plugins.yaml": PLUGINS }, { watch: true });
  });
  after(() => env.daemon.stop("test over"));

  it("lists the agents as written, sorted, with filters", async () => {
    const { agents } = env.daemon.services;
    assert.deepEqual(
      (await agents.list()).map((a) => a.id),
      ["ana", "zed"],
    );
    assert.deepEqual(
      (await agents.list({ activeOnly: true })).map((a) => a.id),
      ["ana"],
    );
    assert.deepEqual(
      (await agents.list({ channel: "loopback" })).map((a) => a.id),
      ["ana"],
    );
    assert.deepEqual(await agents.list({ tenantId: "acme" }), []);
    const ana = await agents.get("ana");
    assert.equal(ana.description, "front desk");
    assert.deepEqual(ana.model, { provider: "scripted", model: "nexo-scripted-demo" });
    await assert.rejects(agents.get("nobody"), (error: unknown) => {
      assert.ok(error instanceof NotFoundError);
      assert.equal(error.kind, "not_found");
      assert.equal(error.subject, "agent");
      assert.equal(error.id, "nobody");
      return true;
    });
  });

  it("upsert changes only the line it concerns, keeps comments and key order, and is live at once", async () => {
    const { agents } = env.daemon.services;
    const before = env.read("agents.yaml");
    const result = await agents.upsert({ id: "ana", system_prompt: "second prompt" });
    assert.equal(result.created, false);
    assert.deepEqual(result.reload?.agents, { added: [], removed: [], changed: ["ana"] });
    assert.equal(result.agent.system_prompt, "second prompt");

    const afterText = env.read("agents.yaml");
    const beforeLines = before.split("\n");
    const afterLines = afterText.split("\n");
    assert.equal(afterLines.length, beforeLines.length);
    const changed = afterLines.flatMap((line, i) => (line === beforeLines[i] ? [] : [i]));
    assert.deepEqual(changed, [beforeLines.findIndex((l) => l.includes("system_prompt"))]);
    assert.match(afterLines[changed[0]!]!, /^ {4}system_prompt: "?second prompt"?$/);

    // The running daemon already uses it, and still answers on its channel.
    assert.equal(env.daemon.spec.agents.find((a) => a.id === "ana")?.systemPrompt, "second prompt");
    assert.match(await say(await endpoint(env.stateDir), "alice", "hello"), /demo model/i);
  });

  it("upsert of a new agent appends a block-style entry and starts routing to it", async () => {
    const { agents } = env.daemon.services;
    const before = env.read("agents.yaml");
    const result = await agents.upsert({
      id: "bob",
      model: { provider: "scripted", model: "nexo-scripted-demo" },
      inbound_bindings: [{ plugin: "loopback", instance: "b" }],
    });
    assert.equal(result.created, true);
    assert.deepEqual(result.reload?.agents.added, ["bob"]);
    const text = env.read("agents.yaml");
    assert.ok(text.startsWith(before), "every line before the new entry is untouched");
    assert.equal(
      text.slice(before.length),
      "  - id: bob\n    model:\n      provider: scripted\n      model: nexo-scripted-demo\n    inbound_bindings:\n      - plugin: loopback\n        instance: b\n",
    );
    assert.ok(env.daemon.summary().agents.includes("bob"));
    assert.equal((await agents.get("bob")).inbound_bindings?.[0]?.instance, "b");
  });

  it("refuses an upsert that would make the directory invalid, with every problem located, and writes nothing", async () => {
    const { agents } = env.daemon.services;
    const before = env.read("agents.yaml");
    const running = JSON.stringify(env.daemon.spec.agents);

    const unknownProvider = await agents.upsert({ id: "ana", model: { provider: "nope", model: "x" } }).then(
      () => assert.fail("accepted"),
      (e: unknown) => e,
    );
    assert.ok(unknownProvider instanceof InvalidConfigError);
    assert.equal(unknownProvider.kind, "invalid_config");
    const [issue] = unknownProvider.issues;
    assert.ok(issue?.file?.endsWith("agents.yaml"));
    assert.equal(issue?.keyPath, "agents[0].model.provider");
    assert.equal(typeof issue?.line, "number");
    assert.match(issue?.message ?? "", /unknown provider "nope"/);

    const noModel = await agents.upsert({ id: "cleo", system_prompt: "hi" }).then(
      () => assert.fail("accepted"),
      (e: unknown) => e,
    );
    assert.ok(noModel instanceof InvalidConfigError);
    assert.deepEqual(
      noModel.issues.map((i) => [i.keyPath, i.message]),
      [["agents[3].model", "missing (expected object)"]],
    );

    const badId = await agents.upsert({ id: "Not An Id", model: { provider: "scripted", model: "m" } }).then(
      () => assert.fail("accepted"),
      (e: unknown) => e,
    );
    assert.ok(badId instanceof InvalidConfigError);
    assert.equal(badId.issues[0]?.keyPath, "agents[3].id");

    assert.equal(env.read("agents.yaml"), before, "the file is byte-for-byte as it was");
    assert.equal(JSON.stringify(env.daemon.spec.agents), running, "the running config is unchanged");
  });

  it("delete removes the block and the agent; an agent another file still names is refused", async () => {
    const { agents } = env.daemon.services;
    const refused = await agents.delete("zed").then(
      () => assert.fail("accepted"),
      (e: unknown) => e,
    );
    assert.ok(refused instanceof InvalidConfigError);
    assert.ok(refused.issues[0]?.file?.endsWith("plugins.yaml"));
    assert.equal(refused.issues[0]?.keyPath, "plugins[1].grants.memory_agents[0]");
    assert.match(refused.issues[0]?.message ?? "", /unknown agent "zed"/);

    const before = env.read("agents.yaml");
    const removed = await agents.delete("bob");
    assert.equal(removed.removed, true);
    assert.deepEqual(removed.reload?.agents.removed, ["bob"]);
    assert.equal(env.read("agents.yaml"), before.slice(0, before.indexOf("  - id: bob")));
    assert.equal(env.daemon.summary().agents.includes("bob"), false);
    await assert.rejects(agents.get("bob"), NotFoundError);

    const again = await agents.delete("bob");
    assert.deepEqual(again, { removed: false, reload: undefined });
  });
});
