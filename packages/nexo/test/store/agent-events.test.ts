/**
 * The agent event log on a real SQLite file: transcript appends become transcript_appended events
 * in the same write (redacted, seq per session, published after commit, none for a failed write),
 * other kinds are appended with their own per-stream seq, a transcript rollback never reuses a seq,
 * reads are exclusive of since_seq, lists newest first and pages back from a position without
 * repeating or skipping an event (fast-check over colliding timestamps), and everything survives a
 * reopen.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import fc from "fast-check";
import {
  type AgentEventPosition,
  agentEventsListSql,
  isStoreError,
  Store,
  type StoredAgentEvent,
  scopeStreamId,
} from "../../src/store/index.js";

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), "nexo-store-events-"));
});
after(() => rmSync(root, { recursive: true, force: true }));

const scope = {
  kind: "conversation",
  agent_id: "ana",
  channel: "whatsapp",
  account_id: "acme",
  contact_id: "+573001112233",
};

describe("agent event log", () => {
  it("turns each transcript append into a redacted transcript_appended event with a per-session seq", () => {
    const store = Store.open(join(root, "appends.db"));
    const heard: StoredAgentEvent[] = [];
    store.agentEvents.subscribe((event) => heard.push(event));
    const a = store.sessions.create({ agentId: "ana", tenantId: "acme", channel: "whatsapp" });
    const b = store.sessions.create({ agentId: "ana" });
    store.transcripts.append(a.id, {
      role: "user",
      content: "call me at +57 300 111 2233",
      sourcePlugin: "whatsapp",
      senderId: "wa.55",
    });
    store.transcripts.appendMany(a.id, [
      { role: "assistant", content: "sure" },
      { role: "user", content: "thanks" },
    ]);
    store.transcripts.append(b.id, { role: "user", content: "other session" });

    const events = store.agentEvents.read(a.id);
    assert.deepEqual(
      events.map((e) => e.seq),
      [1, 2, 3],
    );
    const first = events[0]!;
    assert.equal(first.kind, "transcript_appended");
    assert.equal(first.agent_id, "ana");
    assert.equal(first.tenant_id, "acme");
    assert.equal(first.source_plugin, "whatsapp");
    assert.equal(first.sender_id, "wa.55");
    assert.match(String(first.body), /\[REDACTED:phone\]/);
    assert.doesNotMatch(String(first.body), /111/);
    assert.equal(events[1]!.source_plugin, "internal");
    assert.equal(store.agentEvents.read(b.id)[0]!.seq, 1, "seq counts per session");
    // Live listeners heard exactly what was stored, in order.
    assert.deepEqual(
      heard.filter((e) => e.session_id === a.id),
      events,
    );
    store.close();
  });

  it("announces nothing and stores nothing for a failed append", () => {
    const store = Store.open(join(root, "failed.db"));
    const heard: StoredAgentEvent[] = [];
    store.agentEvents.subscribe((event) => heard.push(event));
    assert.throws(
      () => store.transcripts.append("no-such-session", { role: "user", content: "x" }),
      isStoreError,
    );
    assert.equal(heard.length, 0);
    assert.deepEqual(store.agentEvents.read("no-such-session"), []);
    store.close();
  });

  it("appends other kinds on their own stream, redacting text but keeping the scope ids", () => {
    const store = Store.open(join(root, "kinds.db"));
    const stream = scopeStreamId(scope);
    const first = store.agentEvents.append({
      kind: "escalation_requested",
      agentId: "ana",
      sessionId: stream,
      atMs: 1000,
      fields: {
        scope,
        summary: "customer key sk-ant-abcdefghijklmnopqrstuvwxyz0123456789",
        reason: "other",
        urgency: "high",
        requested_at_ms: 1000,
        seq: 99,
      },
    });
    const second = store.agentEvents.append({
      kind: "processing_state_changed",
      agentId: "ana",
      sessionId: stream,
      atMs: 2000,
      fields: {
        scope,
        prev_state: { state: "agent_active" },
        new_state: { state: "agent_active" },
        at_ms: 2000,
      },
    });
    assert.equal(first.seq, 1, "a caller cannot forge the seq");
    assert.equal(second.seq, 2);
    assert.deepEqual(first.scope, scope);
    assert.doesNotMatch(String(first.summary), /abcdefghijklmnop/);
    assert.deepEqual(
      store.agentEvents.read(stream, { sinceSeq: 1 }).map((e) => e.kind),
      ["processing_state_changed"],
    );
    assert.deepEqual(
      store.agentEvents.page({ agentId: "ana" }).events.map((e) => e.seq),
      [2, 1],
      "newest first",
    );
    assert.deepEqual(
      store.agentEvents.page({ agentId: "ana", kind: "escalation_requested" }).events.length,
      1,
    );
    assert.deepEqual(store.agentEvents.page({ agentId: "ana", sinceMs: 1500 }).events.length, 1);
    assert.deepEqual(store.agentEvents.page({ agentId: "ana", tenantId: "other" }).events, []);
    const dropped = store.agentEvents.appendScopeEvent(
      "pending_inbounds_dropped",
      scope,
      { dropped: 2, at_ms: 3000 },
      { atMs: 3000 },
    );
    assert.equal(dropped.session_id, stream, "scope events share the scope's stream");
    assert.equal(dropped.seq, 3);
    assert.deepEqual(dropped.scope, scope);
    assert.throws(() => store.agentEvents.read(stream, { sinceSeq: -1 }), isStoreError);
    assert.throws(
      () => store.agentEvents.append({ kind: "", agentId: "ana", sessionId: stream, fields: {} }),
      isStoreError,
    );
    store.close();
  });

  it("never reuses a seq after a transcript rollback and keeps events across a reopen", () => {
    const path = join(root, "durable.db");
    let store = Store.open(path);
    const session = store.sessions.create({ agentId: "ana" });
    store.transcripts.appendMany(session.id, [
      { role: "user", content: "one" },
      { role: "assistant", content: "two" },
    ]);
    store.transcripts.truncate(session.id, 1);
    store.transcripts.append(session.id, { role: "assistant", content: "two again" });
    store.close();

    store = Store.open(path);
    const events = store.agentEvents.read(session.id);
    assert.deepEqual(
      events.map((e) => [e.seq, e.body]),
      [
        [1, "one"],
        [2, "two"],
        [3, "two again"],
      ],
    );
    assert.equal(store.agentEvents.lastSeq(session.id), 3);
    store.transcripts.append(session.id, { role: "user", content: "after reopen" });
    assert.equal(store.agentEvents.lastSeq(session.id), 4);
    store.close();
  });
});

describe("agent event log: nested transactions and retention", () => {
  it("a transcript append nested in store.transaction is heard only after the outer commit, by a reader that sees it", () => {
    const path = join(root, "nested.db");
    const store = Store.open(path);
    const reader = Store.open(path);
    const session = store.sessions.create({ agentId: "ana" });
    const seenByReader: boolean[] = [];
    store.agentEvents.subscribe((event) => {
      // Another connection, as a microapp's agent_events/read would be served: the row must be there.
      seenByReader.push(reader.agentEvents.read(event.session_id).some((e) => e.seq === event.seq));
    });
    let heardInside = 0;
    store.agentEvents.subscribe(() => heardInside++);
    store.transaction(() => {
      store.transcripts.append(session.id, { role: "user", content: "one" });
      store.transcripts.append(session.id, { role: "user", content: "two" });
      assert.equal(heardInside, 0, "nothing is heard before the outer transaction commits");
    });
    assert.equal(heardInside, 2);
    assert.deepEqual(seenByReader, [true, true], "each event was readable when it was heard");

    // A rolled-back outer transaction: its events never reach anyone, and the next commit does not
    // carry them along.
    assert.throws(() =>
      store.transaction(() => {
        store.transcripts.append(session.id, { role: "user", content: "rolled back" });
        throw new Error("abort");
      }),
    );
    assert.equal(heardInside, 2);
    store.transcripts.append(session.id, { role: "user", content: "three" });
    assert.equal(heardInside, 3);
    assert.equal(store.agentEvents.read(session.id).at(-1)?.seq, 3, "the rolled-back line took no seq");
    reader.close();
    store.close();
  });

  it("prune deletes events older than the cutoff in batches, keeps each stream's newest, and seqs go on", () => {
    const store = Store.open(join(root, "prune.db"));
    const old = Date.now() - 40 * 86_400_000;
    for (let i = 0; i < 5; i++)
      store.agentEvents.append({
        kind: "note",
        agentId: "ana",
        sessionId: "s-old",
        atMs: old + i,
        fields: {},
      });
    store.agentEvents.append({ kind: "note", agentId: "ana", sessionId: "s-mixed", atMs: old, fields: {} });
    store.agentEvents.append({ kind: "note", agentId: "ana", sessionId: "s-mixed", fields: {} });
    const cutoff = Date.now() - 30 * 86_400_000;
    assert.equal(store.agentEvents.prune(cutoff, 2), 2, "at most one batch per call");
    assert.equal(store.agentEvents.prune(cutoff), 3);
    assert.equal(store.agentEvents.prune(cutoff), 0);
    assert.deepEqual(
      store.agentEvents.read("s-old").map((e) => e.seq),
      [5],
      "a stream's newest event stays, however old",
    );
    assert.deepEqual(
      store.agentEvents.read("s-mixed").map((e) => e.seq),
      [2],
    );
    const next = store.agentEvents.append({ kind: "note", agentId: "ana", sessionId: "s-old", fields: {} });
    assert.equal(next.seq, 6, "a seq is never reused");
    assert.throws(
      () => store.agentEvents.prune(Number.NaN),
      (error) => isStoreError(error),
    );
    store.close();
  });
});

describe("agent event log: paging back through an agent's list", () => {
  it("pages newest first from each page's end: every event once, ties on the millisecond settled by the row id", () => {
    const store = Store.open(join(root, "pages.db"));
    let run = 0;
    // Few distinct milliseconds, so most events share one with others; live events arrive between
    // the pages (as they do while an operator reads back) and never disturb the older pages.
    const event = fc.record({
      atMs: fc.integer({ min: 0, max: 6 }),
      kind: fc.constantFrom("transcript_appended", "processing_state_changed"),
      stream: fc.constantFrom("s1", "s2", "s3"),
      tenant: fc.constantFrom("acme", undefined),
    });
    fc.assert(
      fc.property(
        fc.array(event, { maxLength: 40 }),
        fc.integer({ min: 1, max: 7 }),
        fc.record({
          kind: fc.option(fc.constantFrom("transcript_appended", "processing_state_changed"), {
            nil: undefined,
          }),
          tenantId: fc.option(fc.constant("acme"), { nil: undefined }),
          sinceMs: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
        }),
        fc.array(fc.nat({ max: 3 }), { maxLength: 10 }),
        (events, pageSize, filter, liveBetweenPages) => {
          run++;
          const agentId = `agent-${run}`;
          const other = `other-${run}`;
          const appended = events.map((e, order) => ({
            order,
            e,
            stored: store.agentEvents.append({
              kind: e.kind,
              agentId: order % 5 === 4 ? other : agentId,
              sessionId: `${e.stream}-${run}`,
              atMs: e.atMs,
              ...(e.tenant === undefined ? {} : { tenantId: e.tenant }),
              fields: {},
            }),
          }));
          const expected = appended
            .filter(({ stored }) => stored.agent_id === agentId)
            .filter(({ e }) => filter.kind === undefined || e.kind === filter.kind)
            .filter(({ e }) => filter.tenantId === undefined || e.tenant === filter.tenantId)
            .filter(({ e }) => filter.sinceMs === undefined || e.atMs >= filter.sinceMs)
            .sort((a, b) => b.e.atMs - a.e.atMs || b.order - a.order)
            .map(({ stored }) => `${stored.session_id}#${stored.seq}`);

          const seen: string[] = [];
          let before: AgentEventPosition | undefined;
          for (let page = 0; ; page++) {
            const got = store.agentEvents.page({
              agentId,
              limit: pageSize,
              ...filter,
              ...(before ? { before } : {}),
            });
            assert.ok(got.events.length <= pageSize);
            seen.push(...got.events.map((e) => `${e.session_id}#${e.seq}`));
            // A live event at the newest millisecond (or later) lands above every page already read.
            for (let i = 0; i < (liveBetweenPages[page] ?? 0); i++)
              store.agentEvents.append({
                kind: "transcript_appended",
                agentId,
                sessionId: `live-${run}`,
                atMs: 6 + i,
                fields: {},
              });
            if (got.next === undefined) break;
            assert.equal(got.events.length, pageSize, "only a full page says another may follow");
            before = got.next;
          }
          assert.deepEqual(seen, expected);
        },
      ),
      { numRuns: 200 },
    );
    store.close();
  });

  it("walks the agent index for a page from a position, with no sort; refuses a position that is not one", () => {
    const path = join(root, "plan.db");
    const store = Store.open(path);
    const reader = new Database(path, { readonly: true });
    for (const filter of [
      {},
      { before: { atMs: 1, id: 1 } },
      { before: { atMs: 1, id: 1 }, kind: "x", tenantId: "t" },
    ]) {
      const sql = agentEventsListSql(filter);
      const plan = reader.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({
        agent_id: "a",
        since_ms: 0,
        kind: "x",
        tenant_id: "t",
        before_at_ms: 1,
        before_id: 1,
        limit: 2,
      }) as Array<{
        detail: string;
      }>;
      const details = plan.map((row) => row.detail).join(" | ");
      assert.match(details, /USING INDEX agent_events_by_agent \(agent_id=\? AND at_ms>\?/, details);
      assert.doesNotMatch(details, /TEMP B-TREE|SCAN agent_events/, details);
    }
    reader.close();
    for (const before of [
      { atMs: -1, id: 1 },
      { atMs: 1, id: 1.5 },
      { atMs: 2 ** 53, id: 1 },
    ])
      assert.throws(
        () => store.agentEvents.page({ agentId: "ana", before }),
        (e) => isStoreError(e, "invalid_argument"),
      );
    store.close();
  });
});
