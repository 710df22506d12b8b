import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { InboxFullError, type InboxMessage, Store } from "../../src/store/index.js";

const freshPath = () => join(mkdtempSync(join(tmpdir(), "nexo-inbox-")), "nexo.db");

const message = (contact: string, text: string, messageId?: string): InboxMessage => ({
  kind: "chat",
  instance: undefined,
  contact,
  account: undefined,
  senderId: contact,
  messageId,
  text,
});

describe("store inbox", () => {
  it("keeps accepted messages across a reopen of the file, in arrival order, until they are done", () => {
    const path = freshPath();
    const first = Store.open(path);
    const a = first.inbox.accept("k1", message("alice", "one", "m1"));
    const b = first.inbox.accept("k2", message("bob", "two"));
    const c = first.inbox.accept("k3", message("alice", "three"));
    assert.ok(a.accepted && b.accepted && c.accepted);
    first.inbox.done(b.seq);
    assert.equal(first.inbox.pending, 2);
    // No close: the next open reads what the last autocommit left in the WAL, as after a kill.
    const second = Store.open(path);
    assert.equal(second.inbox.pending, 2);
    assert.deepEqual(
      second.inbox.undone().map((m) => [m.contact, m.text, m.messageId]),
      [
        ["alice", "one", "m1"],
        ["alice", "three", undefined],
      ],
    );
    first.close();
    second.close();
  });

  it("a key seen before is a duplicate, whether its message is still waiting or done", () => {
    const store = Store.open(freshPath());
    const a = store.inbox.accept("k", message("alice", "hi"));
    assert.ok(a.accepted);
    assert.deepEqual(store.inbox.accept("k", message("alice", "hi")), {
      accepted: false,
      duplicateOf: a.seq,
    });
    store.inbox.done(a.seq);
    store.inbox.done(a.seq);
    assert.equal(store.inbox.pending, 0, "done twice counts once");
    assert.deepEqual(store.inbox.accept("k", message("alice", "hi")), {
      accepted: false,
      duplicateOf: a.seq,
    });
    store.close();
  });

  it("refuses a new message with InboxFullError at its bound, and takes one again once a slot is done", () => {
    const store = Store.open(freshPath(), { inbox: { maxPending: 2 } });
    const a = store.inbox.accept("a", message("alice", "1"));
    store.inbox.accept("b", message("bob", "2"));
    assert.throws(() => store.inbox.accept("c", message("carol", "3")), InboxFullError);
    // A redelivery at the bound is still recognised, not refused.
    assert.equal(store.inbox.accept("b", message("bob", "2")).accepted, false);
    assert.ok(a.accepted);
    store.inbox.done(a.seq);
    assert.equal(store.inbox.accept("c", message("carol", "3")).accepted, true);
    assert.equal(store.inbox.undone().length, 2);
    store.close();
  });

  it("redacts the text before it is written but keeps the routing fields", () => {
    const store = Store.open(freshPath());
    store.inbox.accept("k", message("+14155550123", "mail me at ana@example.com"));
    const [row] = store.inbox.undone();
    assert.equal(row?.contact, "+14155550123");
    assert.ok(!row?.text.includes("ana@example.com"), row?.text);
    assert.match(row?.text ?? "", /\[REDACTED:email\]/);
    store.close();
  });

  it("sweep deletes done rows past the dedup retention only", () => {
    let nowMs = Date.parse("2026-01-01T00:00:00Z");
    const store = Store.open(freshPath(), { now: () => new Date(nowMs), inbox: { dedupRetentionMs: 1000 } });
    const old = store.inbox.accept("old", message("alice", "1"));
    store.inbox.accept("waiting", message("bob", "2"));
    assert.ok(old.accepted);
    store.inbox.done(old.seq);
    nowMs += 500;
    assert.equal(store.inbox.sweep(), 0);
    nowMs += 1000;
    assert.equal(store.inbox.sweep(), 1);
    assert.equal(
      store.inbox.accept("old", message("alice", "1")).accepted,
      true,
      "forgotten after the sweep",
    );
    assert.equal(store.inbox.undone().length, 2, "waiting messages are never swept");
    store.close();
  });

  it("staged writes of one tick are committed together, and only committed() says they are safe", async () => {
    const path = freshPath();
    const store = Store.open(path);
    const other = Store.open(path);
    const a = store.inbox.stageAccept("a", message("alice", "1"));
    const b = store.inbox.stageAccept("b", message("bob", "2"));
    assert.deepEqual(store.inbox.stageAccept("a", message("alice", "1")), {
      accepted: false,
      duplicateOf: 1,
    });
    assert.ok(a.accepted && b.accepted);
    assert.equal(store.inbox.pending, 2);
    assert.equal(other.inbox.undone().length, 0, "nothing is written before the group commit");
    await store.inbox.committed();
    assert.deepEqual(
      other.inbox.undone().map((m) => m.text),
      ["1", "2"],
    );
    store.inbox.stageReply(a.seq, "kept");
    store.inbox.stageDone(b.seq);
    await store.inbox.committed();
    assert.equal(store.inbox.pending, 1, "the done mark counts once it is committed");
    assert.deepEqual(
      other.inbox.undone().map((m) => [m.text, m.reply]),
      [["1", "kept"]],
    );
    other.close();
    store.close();
  });

  it("a group commit that fails writes nothing, rejects committed() and gives the slots back", async () => {
    const path = freshPath();
    const store = Store.open(path, { busyTimeoutMs: 0, inbox: { maxPending: 1 } });
    // Another connection holds the write lock: the commit meets SQLITE_BUSY at once.
    const locker = new Database(path);
    locker.exec("BEGIN IMMEDIATE");
    const a = store.inbox.stageAccept("a", message("alice", "1"));
    assert.ok(a.accepted);
    assert.throws(() => store.inbox.stageAccept("b", message("bob", "2")), InboxFullError);
    await assert.rejects(store.inbox.committed(), (error: Error) => error.name === "StoreError");
    assert.equal(store.inbox.pending, 0, "the failed accept no longer holds a slot");
    locker.exec("ROLLBACK");
    locker.close();
    assert.equal(store.inbox.undone().length, 0, "nothing of the failed group was written");
    assert.equal(store.inbox.stageAccept("b", message("bob", "2")).accepted, true);
    await store.inbox.committed();
    assert.deepEqual(
      store.inbox.undone().map((m) => m.text),
      ["2"],
    );
    store.close();
  });
});
