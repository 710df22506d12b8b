/**
 * `nexo/admin/skills/*` over a real daemon: the config directory's skills store, the global and a
 * tenant's namespace, an upsert reaching the prompt of the agent that lists the skill (hot reload),
 * a delete refused while an agent would be left without it, names that would escape refused.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  assertDenied,
  type DaemonAdmin,
  daemonAdmin,
  errorOf,
  resultOf,
} from "../../helpers/admin-daemon.js";

const AGENTS = `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    skills: [tone]
`;

const TONE = `---
display_name: Tone
description: How to sound
---
Be brief.
`;

describe("admin skills/*", () => {
  let admin: DaemonAdmin;
  const prompt = () => admin.env.daemon.spec.agents.find((agent) => agent.id === "ana")?.systemPrompt ?? "";
  before(async () => {
    admin = await daemonAdmin(
      { "agents.yaml": AGENTS, "skills/tone/SKILL.md": TONE, "tenants.yaml": "tenants:\n  - id: acme\n" },
      ["skills_crud"],
    );
  });
  after(() => admin?.stop());

  it("are refused without skills_crud", async () => {
    for (const [method, params] of [
      ["nexo/admin/skills/list", {}],
      ["nexo/admin/skills/get", { name: "tone" }],
      ["nexo/admin/skills/upsert", { name: "tone", body: "x" }],
      ["nexo/admin/skills/delete", { name: "tone" }],
    ] as const) {
      assertDenied(admin, await admin.viewer(method, params), method, "skills_crud");
    }
  });

  it("list and get: the store as written; an absent skill is null", async () => {
    const { skills } = resultOf<{ skills: { name: string; display_name: string; updated_at: string }[] }>(
      await admin.ops("nexo/admin/skills/list", {}),
    );
    assert.deepEqual(
      skills.map((s) => [s.name, s.display_name]),
      [["tone", "Tone"]],
    );
    assert.ok(!Number.isNaN(Date.parse(skills[0]?.updated_at ?? "")));
    const { skill } = resultOf<{ skill: { body: string; description: string } }>(
      await admin.ops("nexo/admin/skills/get", { name: "tone" }),
    );
    assert.equal(skill.body.trim(), "Be brief.");
    assert.equal(skill.description, "How to sound");
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/skills/get", { name: "nope" })), { skill: null });
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/skills/list", { prefix: "x" })), { skills: [] });
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/skills/list", { tenant_id: "acme" })), {
      skills: [],
    });
  });

  it("upsert: writes SKILL.md and the agent's prompt has the new text at once", async () => {
    assert.match(prompt(), /Be brief\./);
    const answer = resultOf<{ created: boolean; skill: { body: string; max_chars: number } }>(
      await admin.ops("nexo/admin/skills/upsert", {
        name: "tone",
        display_name: "Tone",
        body: "Be warm and brief.",
        max_chars: 400,
      }),
    );
    assert.equal(answer.created, false);
    assert.equal(answer.skill.max_chars, 400);
    assert.match(admin.env.read("skills/tone/SKILL.md"), /Be warm and brief\./);
    assert.match(prompt(), /Be warm and brief\./);

    const tenant = resultOf<{ created: boolean }>(
      await admin.ops("nexo/admin/skills/upsert", { name: "tone", tenant_id: "acme", body: "Formal." }),
    );
    assert.equal(tenant.created, true);
    assert.ok(existsSync(join(admin.env.dir, "skills", "_tenants", "acme", "tone", "SKILL.md")));
  });

  it("upsert: a name or tenant that could escape the store, or a blank body, is -32602", async () => {
    for (const params of [
      { name: "../etc", body: "x" },
      { name: "Tone", body: "x" },
      { name: "ok", body: "   " },
      { name: "ok", body: "x", tenant_id: "../up" },
      { body: "x" },
    ]) {
      errorOf(await admin.ops("nexo/admin/skills/upsert", params), -32602);
    }
    errorOf(await admin.ops("nexo/admin/skills/get", { name: "../etc" }), -32602);
    assert.ok(!existsSync(join(admin.env.dir, "etc")));
  });

  it("delete: refused while an agent would be left without it; otherwise removed", async () => {
    const refused = errorOf(await admin.ops("nexo/admin/skills/delete", { name: "tone" }), -32602);
    assert.deepEqual(refused.data, { reason: "in_use", skill: "tone", agents: ["ana"] });
    assert.ok(existsSync(join(admin.env.dir, "skills", "tone", "SKILL.md")));
    assert.deepEqual(
      resultOf(await admin.ops("nexo/admin/skills/delete", { name: "tone", tenant_id: "acme" })),
      {
        deleted: true,
      },
    );
    assert.deepEqual(
      resultOf(await admin.ops("nexo/admin/skills/delete", { name: "tone", tenant_id: "acme" })),
      {
        deleted: false,
      },
    );
  });
});
