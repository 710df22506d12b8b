import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import { openConnection } from "../../src/store/db.js";
import { isStoreError, MIGRATIONS, type Migration, migrate, Store } from "../../src/store/index.js";

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), "nexo-store-migrations-"));
});
after(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
const freshPath = () => join(root, `db-${++counter}`, "nexo.db");
/** The versions from `first` to the newest: what opening an older database applies. */
const versionsFrom = (first: number) => MIGRATIONS.filter((m) => m.version >= first).map((m) => m.version);

function rawRows(path: string, sql: string): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

describe("opening a store", () => {
  it("creates the file owner-only, in WAL mode, with every migration applied in order", () => {
    const path = freshPath();
    const store = Store.open(path);
    assert.deepEqual(store.migration, {
      from: 0,
      to: MIGRATIONS.length,
      applied: MIGRATIONS.map((m) => m.version),
    });
    assert.equal(store.schemaVersion, MIGRATIONS.length);
    store.close();

    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(path, "..")).mode & 0o777, 0o700);
    assert.deepEqual(
      rawRows(path, "SELECT version, name FROM schema_migrations ORDER BY version"),
      MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
    );
    assert.deepEqual(rawRows(path, "PRAGMA journal_mode"), [{ journal_mode: "wal" }]);
  });

  it("announces each migration before it runs, as progress for long upgrades (issue 14.14)", () => {
    const path = freshPath();
    const steps: Array<{ version: number; index: number; total: number; name: string }> = [];
    Store.open(path, { onMigration: (step) => steps.push(step) }).close();
    assert.deepEqual(
      steps,
      MIGRATIONS.map((m, i) => ({
        version: m.version,
        name: m.name,
        index: i + 1,
        total: MIGRATIONS.length,
      })),
    );
    const again: unknown[] = [];
    Store.open(path, { onMigration: (step) => again.push(step) }).close();
    assert.deepEqual(again, [], "an up-to-date database announces nothing");
  });

  it("is idempotent: reopening applies nothing and keeps the data", () => {
    const path = freshPath();
    const first = Store.open(path);
    first.sessions.create({ id: "s1", agentId: "kate", title: "kept" });
    first.transcripts.append("s1", { role: "user", content: "remember the blue kettle" });
    first.memory.remember({ agentId: "kate", content: "likes the blue kettle" });
    first.close();

    const second = Store.open(path);
    assert.deepEqual(second.migration, { from: MIGRATIONS.length, to: MIGRATIONS.length, applied: [] });
    assert.equal(second.sessions.get("s1")?.title, "kept");
    assert.equal(second.transcripts.search("kettle").length, 1);
    assert.equal(second.memory.recallRanked("kate", "kettle").length, 1);
    second.close();
    assert.equal(rawRows(path, "SELECT * FROM schema_migrations").length, MIGRATIONS.length);
  });

  it("configures its connection: WAL, foreign keys, busy timeout, synchronous=NORMAL", () => {
    const db = openConnection(freshPath(), { busyTimeoutMs: 1234 });
    assert.equal(db.pragma("journal_mode", { simple: true }), "wal");
    assert.equal(db.pragma("foreign_keys", { simple: true }), 1);
    assert.equal(db.pragma("busy_timeout", { simple: true }), 1234);
    assert.equal(db.pragma("synchronous", { simple: true }), 1); // 1 = NORMAL
    db.close();
  });

  it("refuses a transcript entry for a session that does not exist", () => {
    const store = Store.open(freshPath());
    assert.throws(
      () => store.transcripts.append("missing", { role: "user", content: "x" }),
      (e) => isStoreError(e, "not_found"),
    );
    store.close();
  });

  it("refuses an empty path and a negative busy timeout with typed errors", () => {
    assert.throws(
      () => Store.open(""),
      (e) => isStoreError(e, "invalid_argument"),
    );
    assert.throws(
      () => Store.open(freshPath(), { busyTimeoutMs: -1 }),
      (e) => isStoreError(e, "invalid_argument"),
    );
  });

  it("works in memory for tests", () => {
    const store = Store.inMemory();
    assert.equal(store.path, ":memory:");
    assert.equal(store.schemaVersion, MIGRATIONS.length);
    store.close();
    assert.equal(store.isOpen, false);
  });
});

describe("migrate", () => {
  const log: string[] = [];
  const tracked = (version: number, name: string): Migration => ({
    version,
    name,
    up: (db) => {
      log.push(name);
      db.exec(`CREATE TABLE t${version} (x INTEGER)`);
    },
  });

  it("applies pending migrations in order, each once", () => {
    const db = new Database(":memory:");
    log.length = 0;
    const list = [tracked(1, "one"), tracked(2, "two"), tracked(3, "three")];
    assert.deepEqual(migrate(db, list.slice(0, 2)), { from: 0, to: 2, applied: [1, 2] });
    assert.deepEqual(migrate(db, list), { from: 2, to: 3, applied: [3] });
    assert.deepEqual(migrate(db, list), { from: 3, to: 3, applied: [] });
    assert.deepEqual(log, ["one", "two", "three"]);
    db.close();
  });

  it("rolls a failing migration back completely and leaves earlier ones applied", () => {
    const db = new Database(":memory:");
    const failing: Migration = {
      version: 2,
      name: "broken",
      up: "CREATE TABLE half (x INTEGER); INSERT INTO nowhere VALUES (1);",
    };
    assert.throws(
      () => migrate(db, [tracked(1, "one"), failing]),
      (e) => isStoreError(e, "migration_failed") && /migration 2 \(broken\)/.test(e.message),
    );
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
    assert.deepEqual(tables, [{ name: "schema_migrations" }, { name: "t1" }]);
    assert.deepEqual(migrate(db, [tracked(1, "one")]), { from: 1, to: 1, applied: [] });
    db.close();
  });

  it("refuses a database newer than the code, naming both versions", () => {
    const path = freshPath();
    Store.open(path, {
      migrations: [...MIGRATIONS, { version: MIGRATIONS.length + 1, name: "future", up: "" }],
    }).close();
    assert.throws(
      () => Store.open(path),
      (e) =>
        isStoreError(e, "schema_too_new") &&
        e.message.includes(`version ${MIGRATIONS.length + 1} (future)`) &&
        e.message.includes(`up to ${MIGRATIONS.length}`),
    );
  });

  it("refuses a database whose history disagrees with the code", () => {
    const db = new Database(":memory:");
    migrate(db, [tracked(1, "one")]);
    assert.throws(
      () => migrate(db, [tracked(1, "uno")]),
      (e) => isStoreError(e, "schema_mismatch"),
    );
    db.close();
  });

  it("refuses a migration list with gaps, disorder or empty names", () => {
    const db = new Database(":memory:");
    for (const list of [
      [tracked(2, "two")],
      [tracked(1, "one"), tracked(3, "three")],
      [tracked(2, "two"), tracked(1, "one")],
      [{ version: 1, name: " ", up: "" }],
    ]) {
      assert.throws(
        () => migrate(db, list),
        (e) => isStoreError(e, "invalid_argument"),
      );
    }
    db.close();
  });

  it("a second store opening a file that is already migrated applies nothing", () => {
    const path = freshPath();
    const stores = [Store.open(path), Store.open(path)];
    assert.deepEqual(stores[1]!.migration.applied, []);
    for (const store of stores) store.close();
    assert.equal(rawRows(path, "SELECT * FROM schema_migrations").length, MIGRATIONS.length);
  });
});

describe("upgrading a database written by an earlier nexo", () => {
  it("4 (approval grants): stored 'always' categories become category grants, meaning what they meant", () => {
    const path = freshPath();
    const old = openConnection(path);
    migrate(old, MIGRATIONS.slice(0, 3));
    const insert = old.prepare(
      `INSERT INTO sessions (id, agent_id, always_allow, created_at, updated_at)
       VALUES (?, 'kate', ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
    );
    insert.run("granted", '["edit","exec"]');
    insert.run("none", "[]");
    old.close();

    const store = Store.open(path);
    assert.deepEqual(store.migration.applied, versionsFrom(4));
    assert.deepEqual(store.sessions.require("granted").alwaysAllow, [
      { kind: "category", category: "edit" },
      { kind: "category", category: "exec" },
    ]);
    assert.deepEqual(store.sessions.require("none").alwaysAllow, []);
    store.close();
  });

  it("6 (transcript turn ids): earlier entries keep their content with no turn; new ones record theirs", () => {
    const path = freshPath();
    const old = openConnection(path);
    migrate(old, MIGRATIONS.slice(0, 5));
    old.exec(`INSERT INTO sessions (id, agent_id, created_at, updated_at)
              VALUES ('s', 'kate', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`);
    old.exec(`INSERT INTO transcript_entries (session_id, seq, role, content, text, agent_id, created_at)
              VALUES ('s', 1, 'user', '[{"type":"text","text":"from before"}]', 'from before', 'kate',
                      '2026-01-01T00:00:00.000Z')`);
    old.close();

    const store = Store.open(path);
    assert.deepEqual(store.migration.applied, versionsFrom(6));
    store.transcripts.append("s", { role: "assistant", content: "after", turnId: "t-2" });
    assert.deepEqual(
      store.transcripts.entries("s").map((e) => [e.text, e.turnId]),
      [
        ["from before", null],
        ["after", "t-2"],
      ],
    );
    store.close();
  });

  it("13 (session parents): a child thread linked only in its metadata is found by its parent", () => {
    const path = freshPath();
    const old = openConnection(path);
    migrate(old, MIGRATIONS.slice(0, 12));
    const insert = old.prepare(
      `INSERT INTO sessions (id, agent_id, metadata, created_at, updated_at)
       VALUES (?, 'kate', ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
    );
    const linked = (parent: string) =>
      JSON.stringify({ appserver: { subAgent: { parentThreadId: parent } } });
    insert.run("parent", "{}");
    insert.run("child", linked("parent"));
    insert.run("orphan", linked("gone"));
    old.close();

    const store = Store.open(path);
    assert.deepEqual(store.migration.applied, versionsFrom(13));
    assert.deepEqual(
      store.sessions.children("parent").map((s) => s.id),
      ["child"],
    );
    assert.deepEqual(store.sessions.children("gone"), []);
    store.close();
  });

  it("a stored value this nexo cannot read is reported as corrupt, not passed on", () => {
    const path = freshPath();
    Store.open(path).close();
    const db = new Database(path);
    db.prepare(
      `INSERT INTO sessions (id, agent_id, always_allow, created_at, updated_at)
       VALUES ('odd', 'kate', '[{"kind":"everything"}]', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
    ).run();
    db.close();
    const store = Store.open(path);
    assert.throws(
      () => store.sessions.get("odd"),
      (e) => isStoreError(e, "corrupt") && /odd: always_allow/.test((e as Error).message),
    );
    store.close();
  });
});
