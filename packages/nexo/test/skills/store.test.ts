/**
 * The skills store on a real directory: the layout (global and tenant namespaces), the front matter
 * round trip, a tenant's copy shadowing the global one at resolution, names that could escape the
 * root refused before any file is touched, writes that refuse to go through a symlink, deletes that
 * leave an operator's other files alone, and a broken SKILL.md listed with its problem.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, it } from "node:test";
import { SkillFileError, SkillNameError, SkillPathError, SkillStore } from "../../src/skills/index.js";

describe("SkillStore", () => {
  let root: string;
  let store: SkillStore;
  beforeEach(() => {
    root = join(mkdtempSync(join(tmpdir(), "nexo-skills-")), "skills");
    store = new SkillStore(root);
  });

  it("writes a global skill as skills/<name>/SKILL.md with its front matter, and reads it back", async () => {
    const { skill, created } = await store.upsert("tone", {
      displayName: "Tone of voice",
      description: "How to sound",
      maxChars: 500,
      requires: { bins: ["jq"], mode: "warn" },
      body: "Be warm and brief.",
    });
    assert.equal(created, true);
    assert.equal(skill.path, join(root, "tone", "SKILL.md"));
    assert.equal(
      readFileSync(skill.path, "utf8"),
      "---\ndisplay_name: Tone of voice\ndescription: How to sound\nmax_chars: 500\nrequires:\n  bins:\n    - jq\n  mode: warn\n---\nBe warm and brief.\n",
    );
    const read = await store.get("tone");
    assert.deepEqual(
      {
        displayName: read?.displayName,
        description: read?.description,
        maxChars: read?.maxChars,
        requires: read?.requires,
        body: read?.body,
        tenantId: read?.tenantId,
      },
      {
        displayName: "Tone of voice",
        description: "How to sound",
        maxChars: 500,
        requires: { bins: ["jq"], mode: "warn" },
        body: "Be warm and brief.\n",
        tenantId: undefined,
      },
    );
    assert.ok(read?.updatedAt instanceof Date);
    const again = await store.upsert("tone", { body: "Be formal." });
    assert.equal(again.created, false);
    assert.equal(readFileSync(skill.path, "utf8"), "Be formal.\n", "no front matter when nothing goes in it");
  });

  it("keeps tenants apart and lets a tenant's copy shadow the global one", async () => {
    await store.upsert("greet", { body: "Say hello." });
    await store.upsert("greet", { body: "Say hola." }, "acme");
    await store.upsert("billing", { body: "Acme billing." }, "acme");
    assert.ok(existsSync(join(root, "_tenants", "acme", "greet", "SKILL.md")));
    assert.deepEqual(
      (await store.list()).map((s) => s.name),
      ["greet"],
    );
    assert.deepEqual(
      (await store.list({ tenantId: "acme" })).map((s) => s.name),
      ["billing", "greet"],
    );
    assert.equal((await store.resolve("greet", "acme"))?.body, "Say hola.\n");
    assert.equal((await store.resolve("greet", "other"))?.body, "Say hello.\n");
    assert.equal((await store.resolve("greet"))?.body, "Say hello.\n");
    assert.equal(await store.resolve("billing"), undefined, "a tenant's skill is not global");
    assert.deepEqual(
      (await store.list({ tenantId: "acme", prefix: "bi" })).map((s) => s.name),
      ["billing"],
    );
  });

  it("refuses names and tenant ids that are not the admin RPC's, before touching the disk", async () => {
    for (const name of ["../etc", "a/b", "Tone", "-x", "_tenants", ".hidden", "", "x".repeat(65)]) {
      await assert.rejects(store.upsert(name, { body: "x" }), SkillNameError, name);
      await assert.rejects(store.get(name), SkillNameError);
      await assert.rejects(store.delete(name), SkillNameError);
    }
    await assert.rejects(store.upsert("ok", { body: "x" }, "../acme"), (e: unknown) => {
      assert.ok(e instanceof SkillNameError);
      assert.equal(e.field, "tenant_id");
      return true;
    });
    assert.equal(existsSync(root), false, "nothing was created");
  });

  it("never writes through a symlink below the root", async () => {
    const outside = mkdtempSync(join(tmpdir(), "nexo-skills-outside-"));
    mkdirSync(root, { recursive: true });
    symlinkSync(outside, join(root, "evil"));
    await assert.rejects(store.upsert("evil", { body: "x" }), SkillPathError);
    await assert.rejects(store.delete("evil"), SkillPathError);
    symlinkSync(outside, join(root, "_tenants"));
    await assert.rejects(store.upsert("ok", { body: "x" }, "acme"), SkillPathError);
    assert.equal(existsSync(join(outside, "SKILL.md")), false);
    assert.equal(existsSync(join(outside, "acme")), false);
  });

  it("a symlink put where SKILL.md goes is replaced, not followed", async () => {
    const outside = join(mkdtempSync(join(tmpdir(), "nexo-skills-target-")), "victim");
    writeFileSync(outside, "precious\n");
    mkdirSync(join(root, "tone"), { recursive: true });
    symlinkSync(outside, join(root, "tone", "SKILL.md"));
    await store.upsert("tone", { body: "new" });
    assert.equal(readFileSync(outside, "utf8"), "precious\n");
    assert.equal(readFileSync(join(root, "tone", "SKILL.md"), "utf8"), "new\n");
  });

  it("deletes SKILL.md and its directory, but leaves the operator's other files", async () => {
    await store.upsert("alone", { body: "x" });
    await store.upsert("kit", { body: "x" });
    writeFileSync(join(root, "kit", "helper.sh"), "echo hi\n");
    assert.equal(await store.delete("alone"), true);
    assert.equal(existsSync(join(root, "alone")), false);
    assert.equal(await store.delete("kit"), true);
    assert.equal(existsSync(join(root, "kit", "helper.sh")), true);
    assert.equal(await store.get("kit"), undefined);
    assert.equal(await store.delete("kit"), false, "idempotent");
    assert.equal(await store.delete("never"), false);
  });

  it("lists a broken SKILL.md with its problem and refuses to get it", async () => {
    mkdirSync(join(root, "broken"), { recursive: true });
    writeFileSync(join(root, "broken", "SKILL.md"), "---\nmax_chars: lots\n---\nbody\n");
    mkdirSync(join(root, "not-a-skill"), { recursive: true });
    await store.upsert("fine", { body: "ok" });
    const list = await store.list();
    assert.deepEqual(
      list.map((s) => [s.name, s.problem === undefined ? "ok" : "problem"]),
      [
        ["broken", "problem"],
        ["fine", "ok"],
      ],
    );
    assert.match(list[0]?.problem ?? "", /max_chars/);
    await assert.rejects(store.get("broken"), SkillFileError);
  });

  it("a SKILL.md written by hand for another tool keeps working (unknown keys, no front matter)", async () => {
    mkdirSync(join(root, "pdf"), { recursive: true });
    writeFileSync(
      join(root, "pdf", "SKILL.md"),
      "---\nname: pdf\ndescription: PDFs\nlicense: MIT\n---\n# PDF\nUse it.\n",
    );
    mkdirSync(join(root, "plain"), { recursive: true });
    writeFileSync(join(root, "plain", "SKILL.md"), "Just text.\n");
    assert.equal((await store.get("pdf"))?.description, "PDFs");
    assert.equal((await store.get("pdf"))?.body, "# PDF\nUse it.\n");
    assert.equal((await store.get("plain"))?.body, "Just text.\n");
  });
});
