import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import { isStoreError, Store } from "../../src/store/index.js";
import { withoutLocalDateMethods } from "../helpers/local-date-methods.js";

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), "nexo-store-sessions-"));
});
after(() => rmSync(root, { recursive: true, force: true }));

/** A store whose clock advances one second per reading, so ordering by time is deterministic. */
function clockedStore(path = ":memory:"): Store {
  let t = Date.parse("2026-01-01T00:00:00Z");
  const now = () => {
    t += 1000;
    return new Date(t);
  };
  return Store.open(path, { now });
}

describe("sessions", () => {
  it("creates with a generated UUIDv7 id or a chosen one, and refuses a taken id", () => {
    const store = clockedStore();
    const generated = store.sessions.create({ agentId: "kate" });
    assert.match(generated.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const chosen = store.sessions.create({
      id: "my-conv-123",
      agentId: "kate",
      tenantId: "acme",
      channel: "telegram",
      account: "bot1",
      contact: "42",
      title: "Hello",
      metadata: { lang: "es" },
      createdAt: "2026-01-01T10:00:00+00:00",
    });
    assert.deepEqual(store.sessions.get("my-conv-123"), chosen);
    assert.deepEqual(chosen, {
      id: "my-conv-123",
      agentId: "kate",
      tenantId: "acme",
      channel: "telegram",
      account: "bot1",
      contact: "42",
      title: "Hello",
      approvalMode: "default",
      alwaysAllow: [],
      readableFiles: [],
      metadata: { lang: "es" },
      createdAt: "2026-01-01T10:00:00.000Z",
      updatedAt: "2026-01-01T10:00:00.000Z",
    });
    assert.throws(
      () => store.sessions.create({ id: "my-conv-123", agentId: "other" }),
      (e) => isStoreError(e, "conflict") && e.message.includes("my-conv-123"),
    );
    assert.equal(store.sessions.get("nope"), undefined);
    assert.throws(
      () => store.sessions.require("nope"),
      (e) => isStoreError(e, "not_found"),
    );
    store.close();
  });

  it("validates its input with typed errors", () => {
    const store = clockedStore();
    const bad: Array<() => unknown> = [
      () => store.sessions.create({ agentId: "" }),
      () => store.sessions.create({ id: " ", agentId: "kate" }),
      () => store.sessions.create({ agentId: "kate", approvalMode: "sometimes" as never }),
      () => store.sessions.create({ agentId: "kate", metadata: [] as never }),
      () => store.sessions.create({ agentId: "kate", metadata: { n: 1n } }),
      () => store.sessions.create({ agentId: "kate", createdAt: "yesterday" }),
      () => store.sessions.list({ limit: 0 }),
      () => store.sessions.list({ offset: -1 }),
    ];
    for (const call of bad) assert.throws(call, (e) => isStoreError(e, "invalid_argument"));
    store.close();
  });

  it("finds the most recently active session by (agent, channel, account, contact)", () => {
    const store = clockedStore();
    const key = {
      agentId: "kate",
      channel: "whatsapp",
      account: "main",
      contact: "5491122334455@s.whatsapp.net",
    };
    const older = store.sessions.create({ ...key });
    const newer = store.sessions.create({ ...key });
    store.sessions.create({ ...key, contact: "someone-else" });
    store.sessions.create({ ...key, agentId: "other" });
    assert.equal(store.sessions.findByKey(key)?.id, newer.id);
    store.transcripts.append(older.id, { role: "user", content: "back again" });
    assert.equal(store.sessions.findByKey(key)?.id, older.id);
    // Absent parts of the key match sessions that have none, not any value.
    const cli = store.sessions.create({ agentId: "kate" });
    assert.equal(store.sessions.findByKey({ agentId: "kate" })?.id, cli.id);
    assert.equal(store.sessions.findByKey({ agentId: "kate", channel: "whatsapp" }), undefined);
    // Routing keys are exact identifiers, stored as given.
    assert.equal(store.sessions.get(older.id)?.contact, "5491122334455@s.whatsapp.net");
    store.close();
  });

  it("lists newest activity first and resolves `latest`, per agent and tenant", () => {
    const store = clockedStore();
    const a = store.sessions.create({ id: "a", agentId: "kate", tenantId: "t1" });
    const b = store.sessions.create({ id: "b", agentId: "kate", tenantId: "t2" });
    const c = store.sessions.create({ id: "c", agentId: "ops", tenantId: "t1" });
    assert.deepEqual(
      store.sessions.list().map((s) => s.id),
      [c.id, b.id, a.id],
    );
    store.transcripts.append("a", { role: "user", content: "hi" });
    assert.equal(store.sessions.latest()?.id, "a");
    assert.equal(store.sessions.latest({ agentId: "ops" })?.id, "c");
    assert.equal(store.sessions.latest({ tenantId: "t2" })?.id, "b");
    assert.equal(store.sessions.latest({ agentId: "nobody" }), undefined);
    assert.deepEqual(
      store.sessions.list({ limit: 1, offset: 1 }).map((s) => s.id),
      ["c"],
    );
    assert.deepEqual(
      store.sessions.list({ agentId: "kate" }).map((s) => s.id),
      ["a", "b"],
    );
    store.close();
  });

  it("keeps approval state: mode and what was approved for always", () => {
    const store = clockedStore();
    const s = store.sessions.create({ agentId: "kate", approvalMode: "auto_edit" });
    assert.equal(s.approvalMode, "auto_edit");
    const echo = { kind: "program", tool: "Bash", program: "echo" } as const;
    store.sessions.allowAlways(s.id, echo);
    store.sessions.allowAlways(s.id, { ...echo });
    const updated = store.sessions.allowAlways(s.id, { kind: "category", category: "edit" });
    assert.deepEqual(updated.alwaysAllow, [echo, { kind: "category", category: "edit" }]);
    assert.equal(store.sessions.update(s.id, { approvalMode: "yolo" }).approvalMode, "yolo");
    for (const bad of ["exec", { kind: "everything" }, { kind: "program", tool: "Bash" }]) {
      assert.throws(
        () => store.sessions.update(s.id, { alwaysAllow: [bad as never] }),
        (e) => isStoreError(e, "invalid_argument"),
      );
    }
    assert.throws(
      () => store.sessions.update(s.id, { approvalMode: "reckless" as never }),
      (e) => isStoreError(e, "invalid_argument"),
    );
    const attached = store.sessions.update(s.id, {
      readableFiles: ["/cache/a.png", "/cache/a.png", "/x y/b.txt"],
    });
    assert.deepEqual(attached.readableFiles, ["/cache/a.png", "/x y/b.txt"]);
    for (const bad of ["relative/path", "/nul\0byte", 42]) {
      assert.throws(
        () => store.sessions.update(s.id, { readableFiles: [bad as never] }),
        (e) => isStoreError(e, "invalid_argument"),
      );
    }
    // Each names the offending element the way every schema failure reads (the wire's formatter).
    assert.throws(
      () => store.sessions.update(s.id, { readableFiles: ["/ok", 42 as never] }),
      /^StoreError: readableFiles\[1\]: /,
    );
    assert.throws(
      () => store.sessions.update(s.id, { alwaysAllow: [echo, { kind: "program", tool: 7 } as never] }),
      /^StoreError: alwaysAllow\[1\]/,
    );
    assert.throws(
      () => store.sessions.update("missing", { title: "x" }),
      (e) => isStoreError(e, "not_found"),
    );
    assert.ok(store.sessions.require(s.id).updatedAt > s.updatedAt);
    store.close();
  });

  it("deletes a session with its transcript and its search index entries", () => {
    const store = clockedStore();
    store.sessions.create({ id: "gone", agentId: "kate" });
    store.sessions.create({ id: "kept", agentId: "kate" });
    store.transcripts.append("gone", { role: "user", content: "the purple elephant" });
    store.transcripts.append("kept", { role: "user", content: "the purple giraffe" });
    assert.equal(store.transcripts.search("purple").length, 2);
    assert.equal(store.sessions.delete("gone"), true);
    assert.equal(store.sessions.delete("gone"), false);
    assert.deepEqual(store.transcripts.entries("gone"), []);
    assert.deepEqual(
      store.transcripts.search("purple").map((h) => h.entry.sessionId),
      ["kept"],
    );
    assert.deepEqual(store.transcripts.search("elephant"), []);
    store.close();
  });

  it("redacts titles and metadata before they reach the file", () => {
    const path = join(root, "redacted-sessions.db");
    const store = Store.open(path);
    const s = store.sessions.create({
      agentId: "kate",
      title: "Call with ana@example.org",
      metadata: { note: "card 4111 1111 1111 1111", auth: { api_key: "letterslettersletters" } },
    });
    assert.equal(s.title, "Call with [REDACTED:email]");
    assert.deepEqual(s.metadata, { note: "card [REDACTED:card]", auth: { api_key: "[REDACTED:api_key]" } });
    store.sessions.update(s.id, { title: "now +44 20 7946 0958" });
    store.checkpoint();
    store.close();

    const raw = readFileSync(path).toString("latin1");
    for (const secret of ["ana@example.org", "4111 1111 1111 1111", "letterslettersletters", "7946 0958"]) {
      assert.ok(!raw.includes(secret), `${secret} is on disk`);
    }
    const db = new Database(path, { readonly: true });
    assert.deepEqual(db.prepare("SELECT title FROM sessions").all(), [{ title: "now [REDACTED:phone]" }]);
    db.close();
  });
  it("finds every child of a session by its parent, beyond the newest 1,000 sessions", () => {
    const path = join(root, "children.db");
    const store = clockedStore(path);
    const parent = store.sessions.create({ agentId: "kate" });
    const early = store.sessions.create({ agentId: "kate", parentId: parent.id });
    // 1,200 later sessions push the child out of any newest-1,000 window.
    const many = Array.from({ length: 1200 }, () => store.sessions.create({ agentId: "kate" }));
    const late = store.sessions.create({ agentId: "kate", parentId: parent.id });
    store.sessions.create({ agentId: "kate", parentId: many[0]!.id });
    assert.ok(!store.sessions.list({ agentId: "kate", limit: 1000 }).some((s) => s.id === early.id));
    assert.deepEqual(
      store.sessions.children(parent.id).map((s) => s.id),
      [late.id, early.id],
    );
    assert.deepEqual(store.sessions.children(late.id), []);
    const reader = new Database(path, { readonly: true });
    const plan = reader
      .prepare("EXPLAIN QUERY PLAN SELECT * FROM sessions WHERE parent_id = ? ORDER BY updated_at DESC")
      .all("x") as Array<{ detail: string }>;
    reader.close();
    assert.ok(
      plan.some((row) => row.detail.includes("sessions_by_parent")),
      JSON.stringify(plan),
    );
    assert.throws(
      () => store.sessions.create({ agentId: "kate", parentId: "no-such-session" }),
      (e) => isStoreError(e, "not_found"),
    );
    // Deleting the parent leaves its children, unlinked.
    store.sessions.delete(parent.id);
    assert.ok(store.sessions.get(early.id));
    assert.deepEqual(store.sessions.children(parent.id), []);
    store.close();
  });
});

describe("timestamps", () => {
  it("a new store file is migrated and written without the Date methods that reach ICU's time-zone data", () => {
    const path = join(root, "stamps.db");
    withoutLocalDateMethods(() => {
      const store = Store.open(path);
      const session = store.sessions.create({
        agentId: "kate",
        createdAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
      });
      store.sessions.update(session.id, { title: "renamed" });
      store.transcripts.append(session.id, { role: "user", content: "hello" });
      store.close();
    });
    const db = new Database(path, { readonly: true });
    const row = db.prepare("SELECT created_at, updated_at FROM sessions").get() as {
      created_at: string;
      updated_at: string;
    };
    const applied = db.prepare("SELECT applied_at FROM schema_migrations").all() as { applied_at: string }[];
    db.close();
    assert.equal(row.created_at, "2026-01-02T03:04:05.006Z");
    assert.equal(new Date(row.updated_at).toISOString(), row.updated_at);
    assert.ok(applied.length > 0);
    for (const { applied_at } of applied) assert.equal(new Date(applied_at).toISOString(), applied_at);
  });
});
