/**
 * `skills/*` through the real `nexo app-server --config DIR`: the config directory's skills store
 * (the one agents load by name), read as stored, viewed as the prompt section an agent gets,
 * uninstalled unless an agent still lists it; the family's errors.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, test } from "node:test";
import type { AppServerProcess } from "../../../helpers/appserver-client.js";
import { configDir, managedServer } from "./management-helpers.js";

const processes: AppServerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop();
});

const GUIDE = "---\ndisplay_name: Style guide\ndescription: how we write\n---\nWrite short sentences.\n";

function skillsDir() {
  const config = configDir({
    "agents.yaml":
      "agents:\n  - id: helper\n    model: { provider: scripted, model: s }\n    skills: [guide]\n",
  });
  for (const [name, text] of [
    ["guide", GUIDE],
    ["notes", "---\ndescription: scratch\n---\nKeep notes.\n"],
    ["broken", "---\ndescription: [unclosed\n---\nbody\n"],
  ] as const) {
    mkdirSync(join(config.dir, "skills", name), { recursive: true });
    writeFileSync(join(config.dir, "skills", name, "SKILL.md"), text);
  }
  return config;
}

type SkillInfo = { name: string; available: boolean; unavailableReason: string | null; path: string };

describe("AppServer skills/*", () => {
  test("list, read and view the store", async () => {
    const config = skillsDir();
    const { server, capabilities } = await managedServer(config, processes);
    assert.equal(capabilities.skillsManagement, true);
    const { skills } = await server.request<{ skills: SkillInfo[] }>("skills/list", {});
    assert.deepEqual(
      skills.map((s) => [s.name, s.available]),
      [
        ["broken", false],
        ["guide", true],
        ["notes", true],
      ],
    );
    assert.ok(skills[0]!.unavailableReason);
    assert.equal(skills[1]!.path, join(config.dir, "skills", "guide", "SKILL.md"));
    const usable = await server.request<{ skills: SkillInfo[] }>("skills/list", {
      includeUnavailable: false,
    });
    assert.deepEqual(
      usable.skills.map((s) => s.name),
      ["guide", "notes"],
    );

    const read = await server.request<{ content: string; metadata: Record<string, unknown> }>("skills/read", {
      name: "guide",
    });
    assert.equal(read.content, GUIDE);
    assert.equal(read.metadata.description, "how we write");
    const view = await server.request<{ content: string }>("skills/view", { name: "guide" });
    assert.match(view.content, /^# Skills/);
    assert.match(view.content, /## Style guide\n\nhow we write\n\nWrite short sentences\./);
  });

  test("uninstall removes an unused skill and refuses one an agent lists", async () => {
    const config = skillsDir();
    const { server } = await managedServer(config, processes);
    const used = await server.call("skills/uninstall", { name: "guide" });
    assert.equal(used.error?.code, -32602);
    assert.match(used.error?.data?.detail ?? "", /helper/);
    assert.ok(existsSync(join(config.dir, "skills", "guide", "SKILL.md")));

    const removed = await server.request<{ uninstalled: boolean; removedSourcePath: string }>(
      "skills/uninstall",
      {
        name: "notes",
      },
    );
    assert.equal(removed.uninstalled, true);
    assert.equal(removed.removedSourcePath, join(config.dir, "skills", "notes", "SKILL.md"));
    assert.ok(!existsSync(removed.removedSourcePath));
    const changed = await server.waitFor((m) => m.method === "workspace/configChanged");
    assert.deepEqual(changed.params?.regions, ["skills"]);
  });

  test("setEnabled adds the skill to the workspace agent's skills: list or removes it, comments kept", async () => {
    const config = skillsDir();
    config.write(
      "agents.yaml",
      "agents:\n  - id: helper # the only one\n    model: { provider: scripted, model: s }\n    skills: [guide] # house style\n",
    );
    const { server } = await managedServer(config, processes);
    const listed = await server.request<{ skills: Array<SkillInfo & { enabled: boolean }> }>(
      "skills/list",
      {},
    );
    assert.deepEqual(
      listed.skills.map((s) => [s.name, s.enabled]),
      [
        ["broken", false],
        ["guide", true],
        ["notes", false],
      ],
    );
    const on = await server.request<{ skill: { name: string; enabled: boolean } }>("skills/setEnabled", {
      name: "notes",
      enabled: true,
    });
    assert.deepEqual([on.skill.name, on.skill.enabled], ["notes", true]);
    assert.match(config.read("agents.yaml"), /skills: \[ guide, notes \] # house style/);
    assert.match(config.read("agents.yaml"), /- id: helper # the only one/);
    const changed = await server.waitFor((m) => m.method === "workspace/configChanged");
    assert.deepEqual(changed.params?.regions, ["skills"]);
    const off = await server.request<{ skill: { enabled: boolean } }>("skills/setEnabled", {
      name: "guide",
      enabled: false,
    });
    assert.equal(off.skill.enabled, false);
    assert.match(config.read("agents.yaml"), /skills: \[ notes \] # house style/);
    // Off twice is still off; the file is not touched again.
    const before = config.read("agents.yaml");
    await server.request("skills/setEnabled", { name: "guide", enabled: false });
    assert.equal(config.read("agents.yaml"), before);
  });

  test("errors: unknown -32040, bad name or broken file -32602, no workspace agent -32602, restoreOriginal -32601", async () => {
    const config = skillsDir();
    const { server } = await managedServer(config, processes);
    assert.equal((await server.call("skills/read", { name: "ghost" })).error?.code, -32040);
    assert.equal((await server.call("skills/uninstall", { name: "ghost" })).error?.code, -32040);
    assert.equal(
      (await server.call("skills/setEnabled", { name: "ghost", enabled: true })).error?.code,
      -32040,
    );
    assert.equal((await server.call("skills/view", { name: "../agents" })).error?.code, -32602);
    assert.equal((await server.call("skills/read", { name: "broken" })).error?.code, -32602);
    assert.equal(
      (await server.call("skills/setEnabled", { name: "broken", enabled: true })).error?.code,
      -32602,
    );
    const restore = await server.call("skills/restoreOriginal", { name: "guide" });
    assert.equal(restore.error?.code, -32601);
    assert.match(restore.error?.data?.detail ?? "", /no workspace variants/);

    config.write(
      "agents.yaml",
      "agents:\n  - id: a\n    model: { provider: scripted, model: s }\n  - id: b\n    model: { provider: scripted, model: s }\n",
    );
    const { server: two } = await managedServer(config, processes);
    const ambiguous = await two.call("skills/setEnabled", { name: "guide", enabled: true });
    assert.equal(ambiguous.error?.code, -32602);
    assert.match(ambiguous.error?.data?.detail ?? "", /exactly one agent/);
  });
});
