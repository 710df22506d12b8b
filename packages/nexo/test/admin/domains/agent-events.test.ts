/**
 * `nexo/admin/agent_events/*` and the live firehose over real microapp child processes and a real
 * SQLite store: backfill granted and denied (with audit rows), live frames only with a subscribe
 * capability and with the very seq backfill returns, a microapp that stopped reading told it lagged
 * and resyncing from the log, and events kept across a restart.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { AgentEventFirehose } from "../../../src/admin/agent-event-firehose.js";
import type { Store } from "../../../src/store/index.js";
import { type AdminRig, adminRig } from "../../fixtures/microapps/admin-harness.js";
import { cleanupMicroapps } from "../../fixtures/microapps/harness.js";

let rig: AdminRig | undefined;
let firehose: AgentEventFirehose | undefined;
afterEach(async () => {
  firehose?.close();
  firehose = undefined;
  await rig?.stop();
  rig = undefined;
  await cleanupMicroapps();
});

const LIST = "nexo/admin/agent_events/list";
const READ = "nexo/admin/agent_events/read";
const SEARCH = "nexo/admin/agent_events/search";
const services = (store: Store) => ({ agentEvents: store.agentEvents, transcripts: store.transcripts });

type Event = { kind: string; seq: number; session_id: string; body?: string; agent_id: string };
type Note = { method: string; params: Record<string, unknown> };

async function notesOf(r: AdminRig, id: string): Promise<Note[]> {
  const reply = await r.manager
    .host(id)!
    .callTool({ tool: `${id}_notes`, args: {}, binding_context: { agent_id: "t" } });
  return reply.output as Note[];
}

/** Polls the microapp's received notifications until `done` holds (generous: the machine is loaded). */
async function notesUntil(r: AdminRig, id: string, done: (notes: Note[]) => boolean): Promise<Note[]> {
  let notes: Note[] = [];
  for (let i = 0; i < 300; i++) {
    notes = await notesOf(r, id);
    if (done(notes)) return notes;
    await sleep(50);
  }
  return notes;
}

const scope = {
  kind: "conversation",
  agent_id: "ana",
  channel: "whatsapp",
  account_id: "acme",
  contact_id: "wa.55",
};

describe("agent_events/list, read, search", () => {
  it("answers with transcripts_read and refuses without it, auditing both", async () => {
    rig = await adminRig(
      [
        { id: "reader", fixture: "probe", grants: ["audit_read", "transcripts_read"] },
        { id: "nosy", fixture: "probe", grants: ["audit_read"] },
      ],
      { services },
    );
    const session = rig.store.sessions.create({ agentId: "ana", channel: "whatsapp" });
    const other = rig.store.sessions.create({ agentId: "carlos" });
    rig.store.transcripts.append(session.id, {
      role: "user",
      content: "my card is 4111 1111 1111 1111, ship the blue kettle",
      sourcePlugin: "whatsapp",
      senderId: "wa.55",
    });
    rig.store.transcripts.append(session.id, { role: "assistant", content: "the kettle ships tomorrow" });
    rig.store.transcripts.append(other.id, { role: "user", content: "kettle for carlos" });
    rig.store.agentEvents.appendScopeEvent("processing_state_changed", scope, {
      prev_state: { state: "agent_active" },
      new_state: {
        state: "paused_by_operator",
        scope,
        paused_at_ms: Date.now(),
        operator_token_hash: "0123456789abcdef",
      },
      at_ms: Date.now(),
    });

    const read = (await rig.call("reader", READ, { agent_id: "ana", session_id: session.id })).result as {
      events: Event[];
    };
    assert.deepEqual(
      read.events.map((e) => [e.kind, e.seq]),
      [
        ["transcript_appended", 1],
        ["transcript_appended", 2],
      ],
    );
    assert.match(read.events[0]!.body!, /\[REDACTED:card\]/);
    assert.doesNotMatch(JSON.stringify(read.events), /4111/);
    const after1 = (await rig.call("reader", READ, { agent_id: "ana", session_id: session.id, since_seq: 1 }))
      .result as { events: Event[] };
    assert.deepEqual(
      after1.events.map((e) => e.seq),
      [2],
      "since_seq is exclusive",
    );
    const unknown = await rig.call("reader", READ, { agent_id: "ana", session_id: "no-such-session" });
    assert.deepEqual(unknown.result, { events: [] }, "unknown scope is empty, not an error");
    const foreign = await rig.call("reader", READ, { agent_id: "ana", session_id: other.id });
    assert.deepEqual(foreign.result, { events: [] }, "another agent's session reads as empty");

    const list = (await rig.call("reader", LIST, { agent_id: "ana" })).result as { events: Event[] };
    assert.deepEqual(
      list.events.map((e) => e.kind),
      ["processing_state_changed", "transcript_appended", "transcript_appended"],
    );
    const onlyPauses = (await rig.call("reader", LIST, { agent_id: "ana", kind: "processing_state_changed" }))
      .result as { events: Event[] };
    assert.equal(onlyPauses.events.length, 1);
    assert.equal(onlyPauses.events[0]!.session_id, "conversation:ana/whatsapp/acme/wa.55");
    const cross = await rig.call("reader", LIST, { agent_id: "ana", tenant_id: "globex" });
    assert.deepEqual(cross.result, { events: [] }, "a cross-tenant list is empty");

    const search = (await rig.call("reader", SEARCH, { agent_id: "ana", query: "kettle" })).result as {
      hits: Array<{ session_id: string; role: string; source_plugin: string; snippet: string }>;
    };
    assert.equal(search.hits.length, 2, "carlos's line is not ana's");
    assert.ok(search.hits.every((hit) => hit.session_id === session.id && /«kettle»/.test(hit.snippet)));
    assert.deepEqual(search.hits.map((h) => h.source_plugin).sort(), ["internal", "whatsapp"]);
    const card = (await rig.call("reader", SEARCH, { agent_id: "ana", query: "4111" })).result as {
      hits: unknown[];
    };
    assert.deepEqual(card.hits, [], "the redacted number is not searchable");
    const wrongKind = await rig.call("reader", SEARCH, {
      agent_id: "ana",
      query: "kettle",
      kind: "escalation_requested",
    });
    assert.deepEqual(wrongKind.result, { hits: [] });

    for (const method of [LIST, READ, SEARCH]) {
      const denied = await rig.call("nosy", method, {
        agent_id: "ana",
        session_id: session.id,
        query: "kettle",
      });
      assert.equal(denied.error?.code, -32004, method);
      assert.equal(denied.error?.data?.capability, "transcripts_read");
    }
    const rows = rig.store.audit
      .tail({ limit: 100 })
      .entries.filter((row) => row.method.includes("agent_events"));
    assert.equal(rows.filter((row) => row.microapp_id === "nosy" && row.result === "denied").length, 3);
    assert.ok(rows.filter((row) => row.microapp_id === "reader" && row.result === "ok").length >= 3);
    assert.ok(rows.every((row) => row.capability === "transcripts_read"));
  });
});

describe("agent_events/search filters (nexo additions): channel, role and time before ranking, paged", () => {
  it("narrows by the conversation's channel (instances too), role and time, and pages with next_offset", async () => {
    rig = await adminRig([{ id: "reader", fixture: "probe", grants: ["audit_read", "transcripts_read"] }], {
      services,
    });
    const T0 = Date.parse("2026-11-01T10:00:00.000Z");
    const { sessions, transcripts } = rig.store;
    const bot = sessions.create({ agentId: "ana", channel: "telegram.bot1", contact: "t1" });
    const look = sessions.create({ agentId: "ana", channel: "telegram_x", contact: "t2" });
    const loop = sessions.create({ agentId: "ana", channel: "loopback", contact: "alice" });
    transcripts.append(bot.id, { role: "user", content: "kettle from telegram", createdAt: new Date(T0) });
    transcripts.append(look.id, { role: "user", content: "kettle elsewhere", createdAt: new Date(T0) });
    for (let i = 0; i < 7; i++)
      transcripts.append(loop.id, {
        role: i % 2 === 0 ? "user" : "assistant",
        content: `kettle line ${i}`,
        createdAt: new Date(T0 + (i + 1) * 60_000),
      });

    type Hits = { hits: Array<{ session_id: string; role: string; channel?: string; snippet: string }> } & {
      next_offset?: number;
    };
    const search = async (params: Record<string, unknown>) => {
      const reply = await rig!.call("reader", SEARCH, { agent_id: "ana", query: "kettle", ...params });
      assert.equal(reply.error, undefined, JSON.stringify(reply.error));
      return reply.result as Hits;
    };

    const telegram = await search({ channel: "telegram" });
    assert.deepEqual(
      telegram.hits.map((h) => [h.session_id, h.channel]),
      [[bot.id, "telegram.bot1"]],
      "telegram matches its instances, not telegram_x",
    );
    assert.equal((await search({ channel: "telegram.bot1" })).hits.length, 1);
    assert.equal((await search({ channel: "telegram.bot2" })).hits.length, 0);
    assert.equal((await search({ channel: "telegram_x" })).hits[0]?.session_id, look.id);

    const users = await search({ channel: "loopback", role: "user" });
    assert.equal(users.hits.length, 4);
    assert.ok(users.hits.every((h) => h.role === "user" && h.channel === "loopback"));
    assert.deepEqual((await search({ role: "tool" })).hits, []);

    const window = await search({ since_ms: T0 + 3 * 60_000, until_ms: T0 + 6 * 60_000 });
    assert.deepEqual(window.hits.map((h) => h.snippet.replace(/[«»]/g, "")).sort(), [
      "kettle line 2",
      "kettle line 3",
      "kettle line 4",
    ]);

    // Pages of 3 over the 7 loopback lines: 3 + 3 + 1, each line once, next_offset until the last.
    const first = await search({ channel: "loopback", limit: 3 });
    assert.equal(first.next_offset, 3);
    const second = await search({ channel: "loopback", limit: 3, offset: first.next_offset });
    assert.equal(second.next_offset, 6);
    const third = await search({ channel: "loopback", limit: 3, offset: second.next_offset });
    assert.equal(third.next_offset, undefined);
    const seen = [...first.hits, ...second.hits, ...third.hits].map((h) => h.snippet);
    assert.equal(seen.length, 7);
    assert.equal(new Set(seen).size, 7, "no line on two pages");

    const backwards = await rig.call("reader", SEARCH, {
      agent_id: "ana",
      query: "kettle",
      since_ms: T0 + 60_000,
      until_ms: T0,
    });
    assert.equal(backwards.error?.code, -32602, JSON.stringify(backwards));
    assert.match(backwards.error?.message ?? "", /since_ms must be before until_ms/);
  });
});

describe("agent_events/list paged back with before (a nexo addition)", () => {
  it("pages newest first with next_before until the oldest, same-millisecond events each once; a bad cursor is -32602", async () => {
    rig = await adminRig([{ id: "reader", fixture: "probe", grants: ["audit_read", "transcripts_read"] }], {
      services,
    });
    const T0 = Date.now() - 60_000;
    const session = rig.store.sessions.create({ agentId: "ana", channel: "loopback" });
    // Seven lines, three of them in the same millisecond: a page boundary falls among them.
    const times = [T0, T0 + 1, T0 + 1, T0 + 1, T0 + 2, T0 + 3, T0 + 4];
    for (const [i, at] of times.entries())
      rig.store.transcripts.append(session.id, {
        role: "user",
        content: `line ${i}`,
        createdAt: new Date(at),
      });
    type Page = { events: Event[]; next_before?: string };
    const list = async (params: Record<string, unknown>) => {
      const reply = await rig!.call("reader", LIST, { agent_id: "ana", ...params });
      assert.equal(reply.error, undefined, JSON.stringify(reply.error));
      return reply.result as Page;
    };

    const whole = await list({});
    assert.deepEqual(
      whole.events.map((e) => e.seq),
      [7, 6, 5, 4, 3, 2, 1],
      "without before: the list as it always was",
    );
    assert.equal(whole.next_before, undefined, "nothing older");

    const bodies: string[] = [];
    const cursors: string[] = [];
    let page = await list({ limit: 2 });
    for (;;) {
      bodies.push(...page.events.map((e) => String(e.body)));
      if (page.next_before === undefined) break;
      cursors.push(page.next_before);
      page = await list({ limit: 2, before: page.next_before });
    }
    assert.deepEqual(bodies, ["line 6", "line 5", "line 4", "line 3", "line 2", "line 1", "line 0"]);
    assert.equal(cursors.length, 3, "pages of 2, 2, 2, 1");
    // Newer events arriving meanwhile do not move a page already named by its cursor.
    rig.store.transcripts.append(session.id, { role: "assistant", content: "a late reply" });
    assert.deepEqual(
      (await list({ limit: 2, before: cursors[1] })).events.map((e) => e.body),
      ["line 2", "line 1"],
    );
    // The other filters apply to every page, as to the first.
    assert.deepEqual((await list({ before: cursors[0], kind: "processing_state_changed" })).events, []);

    for (const before of ["", "12", "12:x", "-1:2", "1:2:3", "99999999999999999:1", "9999999999999999:1"]) {
      const bad = await rig.call("reader", LIST, { agent_id: "ana", before });
      assert.equal(bad.error?.code, -32602, `${before}: ${JSON.stringify(bad)}`);
      assert.match(bad.error?.message ?? "", /before/);
    }
    const rows = rig.store.audit.tail({ limit: 100 }).entries.filter((row) => row.method === LIST);
    assert.ok(
      rows.some((row) => row.result !== "ok"),
      "refused cursors are audited too",
    );
  });
});

describe("agent event firehose", () => {
  it("pushes live only to subscribers, by capability, with the seq backfill returns", async () => {
    rig = await adminRig(
      [
        {
          id: "subscriber",
          fixture: "probe",
          grants: ["audit_read", "transcripts_read", "transcripts_subscribe"],
        },
        { id: "auditor", fixture: "probe", grants: ["audit_read", "agent_events_subscribe_all"] },
        { id: "reader", fixture: "probe", grants: ["audit_read", "transcripts_read"] },
      ],
      { services },
    );
    const started = rig;
    firehose = new AgentEventFirehose({
      events: rig.store.agentEvents,
      outlets: () => started.manager.outlets(),
      logger: { warn() {} },
    });
    const session = rig.store.sessions.create({ agentId: "ana" });
    rig.store.transcripts.append(session.id, { role: "user", content: "hello" });
    rig.store.transcripts.append(session.id, { role: "assistant", content: "hi there" });
    rig.store.agentEvents.appendScopeEvent("processing_state_changed", scope, {
      prev_state: { state: "agent_active" },
      new_state: { state: "agent_active" },
      at_ms: 1,
    });
    rig.store.agentEvents.appendScopeEvent("escalation_requested", scope, {
      summary: "needs a human",
      reason: "other",
      urgency: "high",
      requested_at_ms: 2,
    });

    const firehoseOf = (notes: Note[]) =>
      notes.filter((n) => n.method === "nexo/notify/agent_event").map((n) => n.params);
    const auditor = firehoseOf(await notesUntil(rig, "auditor", (n) => firehoseOf(n).length >= 4));
    assert.deepEqual(
      auditor.map((e) => e.kind),
      ["transcript_appended", "transcript_appended", "processing_state_changed", "escalation_requested"],
    );
    const subscriberNotes = await notesUntil(rig, "subscriber", (n) => n.length >= 5);
    assert.deepEqual(
      firehoseOf(subscriberNotes).map((e) => e.kind),
      ["transcript_appended", "transcript_appended", "processing_state_changed"],
      "no escalations without subscribe_all",
    );
    assert.deepEqual(
      subscriberNotes
        .filter((n) => n.method === "nexo/notify/transcript_appended")
        .map((n) => [n.params.role, n.params.body]),
      [
        ["user", "hello"],
        ["assistant", "hi there"],
      ],
    );
    await sleep(300);
    assert.deepEqual(await notesOf(rig, "reader"), [], "transcripts_read alone subscribes to nothing");

    const backfill = (await rig.call("subscriber", READ, { agent_id: "ana", session_id: session.id }))
      .result as { events: unknown[] };
    assert.deepEqual(
      firehoseOf(subscriberNotes).slice(0, 2),
      backfill.events,
      "live and backfill are the same events, same seq",
    );
  });

  it("tells a microapp that stopped reading that it lagged, and read since_seq fills the gap", async () => {
    rig = await adminRig(
      [
        {
          id: "slowpoke",
          fixture: "probe",
          grants: ["audit_read", "transcripts_read", "transcripts_subscribe"],
        },
      ],
      { services },
    );
    const started = rig;
    const warnings: unknown[] = [];
    firehose = new AgentEventFirehose({
      events: rig.store.agentEvents,
      outlets: () => started.manager.outlets(),
      capacity: 4,
      logger: { warn: (...args: unknown[]) => void warnings.push(args) },
    });
    const session = rig.store.sessions.create({ agentId: "ana" });
    const host = rig.manager.host("slowpoke")!;
    const blocked = host.callTool({
      tool: "slowpoke_block",
      args: { ms: 3000 },
      binding_context: { agent_id: "t" },
    });
    await sleep(300);
    // Far more than a pipe holds: the microapp's queue overflows while it reads nothing.
    const TOTAL = 60;
    for (let i = 1; i <= TOTAL; i++)
      rig.store.transcripts.append(session.id, { role: "user", content: `line ${i} ${"x".repeat(8000)}` });
    await blocked;

    const notes = await notesUntil(rig, "slowpoke", (n) =>
      n.some((note) => note.method === "nexo/notify/agent_events_lagged"),
    );
    const lagged = notes.find((n) => n.method === "nexo/notify/agent_events_lagged");
    assert.ok(lagged, "told it lagged");
    const stream = (
      lagged.params.streams as Array<{ agent_id: string; session_id: string; since_seq: number }>
    )[0]!;
    assert.equal(stream.session_id, session.id);
    assert.ok((lagged.params.dropped as number) > 0);
    assert.ok(warnings.length > 0, "the daemon logs the lag");

    const live = notes
      .filter((n) => n.method === "nexo/notify/agent_event")
      .map((n) => n.params.seq as number);
    const resync = (
      await rig.call("slowpoke", READ, {
        agent_id: stream.agent_id,
        session_id: stream.session_id,
        since_seq: stream.since_seq,
        limit: 1000,
      })
    ).result as { events: Event[] };
    const seen = new Set([...live, ...resync.events.map((e) => e.seq)]);
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      Array.from({ length: TOTAL }, (_, i) => i + 1),
      "nothing missing after the resync",
    );
    assert.ok(live.length < TOTAL, "some frames really were dropped");
  });

  it("keeps the events across a restart, with the same seqs, and carries on counting", async () => {
    rig = await adminRig([{ id: "reader", fixture: "probe", grants: ["audit_read", "transcripts_read"] }], {
      services,
    });
    const stateDir = rig.stateDir;
    const session = rig.store.sessions.create({ agentId: "ana" });
    rig.store.transcripts.append(session.id, { role: "user", content: "before the restart" });
    const before = (await rig.call("reader", READ, { agent_id: "ana", session_id: session.id })).result;
    await rig.stop();
    rig = await adminRig([{ id: "reader", fixture: "probe", grants: ["audit_read", "transcripts_read"] }], {
      services,
      stateDir,
    });
    const after = (await rig.call("reader", READ, { agent_id: "ana", session_id: session.id })).result;
    assert.deepEqual(after, before);
    rig.store.transcripts.append(session.id, { role: "assistant", content: "after the restart" });
    const more = (await rig.call("reader", READ, { agent_id: "ana", session_id: session.id, since_seq: 1 }))
      .result as { events: Event[] };
    assert.deepEqual(
      more.events.map((e) => [e.seq, e.body]),
      [[2, "after the restart"]],
    );
  });
});
