/**
 * Operator takeover over a real daemon: the loopback channel plugin, the scripted model, and probe
 * microapps the daemon itself runs from extensions.yaml (`ops` granted operator_intervention and
 * the agent-event firehose, `viewer` only audit_read). A paused conversation's messages are held
 * in the store and the agent stays silent; the operator's reply goes out through the channel and
 * onto the transcript; resume writes what was held in order (and the operator's summary) where
 * the agent's next turn reads it; the hold is bounded with an event; all of it survives a restart.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sessionKeyOf } from "../../../src/daemon/processing/scope.js";
import { type DaemonDir, restartFromDir, startFromDir } from "../../helpers/daemon-dir.js";
import { endpoint, say } from "../../helpers/loopback.js";
import {
  call,
  events,
  files,
  keyOf,
  lastAudit,
  OPERATOR,
  ok,
  post,
  replies,
  scopeOf,
  until,
} from "../../helpers/takeover.js";

describe("processing/* over a real daemon", () => {
  let run: DaemonDir;
  let url: string;
  before(async () => {
    run = await startFromDir(files());
    url = await endpoint(run.stateDir);
  });
  after(() => run?.daemon.stop("test over"));

  it("every method is refused without operator_intervention, and audited as denied", async () => {
    const params = {
      "nexo/admin/processing/pause": { scope: scopeOf("alice"), operator_token_hash: OPERATOR },
      "nexo/admin/processing/resume": { scope: scopeOf("alice"), operator_token_hash: OPERATOR },
      "nexo/admin/processing/intervention": {
        scope: scopeOf("alice"),
        operator_token_hash: OPERATOR,
        action: {
          kind: "reply",
          channel: "loopback",
          account_id: "default",
          to: "alice",
          body: "x",
          msg_kind: "text",
        },
      },
      "nexo/admin/processing/state": { scope: scopeOf("alice") },
    };
    for (const [method, p] of Object.entries(params)) {
      const reply = await call(run, "viewer", method, p);
      assert.equal(reply.error?.code, -32004, JSON.stringify(reply));
      assert.deepEqual(reply.error?.data, {
        capability: "operator_intervention",
        microapp_id: "viewer",
        method,
      });
      const row = lastAudit(run, "viewer");
      assert.equal(row?.method, method);
      assert.equal(row?.result, "denied");
    }
  });

  it("pause holds the conversation's messages, the agent is silent; the operator's reply goes out and onto the transcript; resume replays in order", async () => {
    assert.match(await say(url, "alice", "hello"), /scripted/);
    const session = run.daemon.store.sessions.list().find((s) => s.contact === "alice");
    assert.ok(session);

    const paused = ok(
      await call(run, "ops", "nexo/admin/processing/pause", {
        scope: scopeOf("alice"),
        reason: "checking the order",
        operator_token_hash: OPERATOR,
      }),
    );
    assert.equal(paused.changed, true);
    assert.equal(typeof paused.correlation_id, "string");
    assert.equal(lastAudit(run, "ops")?.result, "ok");
    // Idempotent: a second pause changes nothing and emits nothing.
    assert.equal(
      ok(
        await call(run, "ops", "nexo/admin/processing/pause", {
          scope: scopeOf("alice"),
          operator_token_hash: OPERATOR,
        }),
      ).changed,
      false,
    );
    const state = ok(await call(run, "ops", "nexo/admin/processing/state", { scope: scopeOf("alice") }))
      .state as Record<string, unknown>;
    assert.equal(state.state, "paused_by_operator");
    assert.equal(state.reason, "checking the order");
    assert.equal(state.operator_token_hash, OPERATOR);
    // Another conversation of the same agent is not paused.
    assert.deepEqual(
      ok(await call(run, "ops", "nexo/admin/processing/state", { scope: scopeOf("bob") })).state,
      { state: "agent_active" },
    );

    const entriesBefore = run.daemon.store.transcripts.count(session.id);
    for (const text of ["first while paused", "second while paused", "my card is 4111 1111 1111 1111"])
      await post(url, "alice", text);
    await until(
      "three held messages",
      () => run.daemon.store.processing.pending(keyOf("alice")).length === 3,
    );
    const held = run.daemon.store.processing.pending(keyOf("alice"));
    assert.deepEqual(
      held.slice(0, 2).map((h) => h.body),
      ["first while paused", "second while paused"],
    );
    assert.doesNotMatch(held[2]!.body, /4111/, "held bodies are redacted");
    assert.deepEqual(
      await replies(url, "alice", 1500),
      [],
      "the agent does not answer a paused conversation",
    );
    assert.equal(run.daemon.store.transcripts.count(session.id), entriesBefore, "no turn ran");

    const intervened = ok(
      await call(run, "ops", "nexo/admin/processing/intervention", {
        scope: scopeOf("alice"),
        operator_token_hash: OPERATOR,
        action: {
          kind: "reply",
          channel: "loopback",
          account_id: "default",
          to: "alice",
          body: "A human here: your order left today.",
          msg_kind: "text",
        },
      }),
    );
    assert.equal(intervened.transcript_stamped, true);
    assert.deepEqual(await replies(url, "alice", 20_000), ["A human here: your order left today."]);
    const stamped = run.daemon.store.transcripts.entries(session.id).at(-1)!;
    assert.equal(stamped.role, "assistant");
    assert.equal(stamped.text, "A human here: your order left today.");
    assert.equal(stamped.sourcePlugin, "intervention:loopback");
    assert.equal(stamped.senderId, `operator:${OPERATOR}`);
    assert.ok(stamped.messageId);

    const resumed = ok(
      await call(run, "ops", "nexo/admin/processing/resume", {
        scope: scopeOf("alice"),
        operator_token_hash: OPERATOR,
        session_id: session.id,
        summary_for_agent: "  Order 77 shipped; confirm the address next.  ",
      }),
    );
    assert.equal(resumed.changed, true);
    assert.equal(resumed.drained_pending, 3);
    assert.equal(resumed.transcript_stamped, true);
    assert.deepEqual(run.daemon.store.processing.pending(keyOf("alice")), []);
    const tail = run.daemon.store.transcripts.entries(session.id).slice(-4);
    assert.deepEqual(
      tail.map((e) => [e.role, e.sourcePlugin]),
      [
        ["user", "loopback"],
        ["user", "loopback"],
        ["user", "loopback"],
        ["system", "intervention:summary"],
      ],
    );
    assert.equal(tail[0]!.text, "first while paused");
    assert.equal(tail[1]!.text, "second while paused");
    assert.equal(tail[0]!.createdAt, new Date(held[0]!.receivedAtMs).toISOString(), "the original time");
    assert.equal(tail[3]!.text, "[operator_summary] Order 77 shipped; confirm the address next.");
    assert.deepEqual(
      ok(await call(run, "ops", "nexo/admin/processing/state", { scope: scopeOf("alice") })).state,
      { state: "agent_active" },
    );
    // A second resume changes nothing.
    const again = ok(
      await call(run, "ops", "nexo/admin/processing/resume", {
        scope: scopeOf("alice"),
        operator_token_hash: OPERATOR,
      }),
    );
    assert.equal(again.changed, false);
    assert.equal(again.drained_pending, undefined);

    // The agent answers again, and its next turn reads what was held and the summary.
    assert.match(await say(url, "alice", "are you back?"), /scripted/);
    const live = run.daemon.sessions.open({
      agentId: "ana",
      channel: "loopback",
      account: undefined,
      contact: "alice",
    });
    const texts = live.history.map((m) => m.content.map((b) => (b.type === "text" ? b.text : "")).join(""));
    const summaryAt = texts.indexOf("[operator_summary] Order 77 shipped; confirm the address next.");
    assert.ok(summaryAt > 0, "the summary is in the model's history");
    assert.equal(live.history[summaryAt]!.role, "user");
    assert.ok(texts.indexOf("second while paused") < summaryAt);
    assert.ok(texts.indexOf("A human here: your order left today.") > 0);
    assert.ok(texts.indexOf("are you back?") > summaryAt);

    // Each real transition was an agent event; the idempotent retries were not.
    const changes = events(run, scopeOf("alice"), "processing_state_changed");
    assert.deepEqual(
      changes.map((e) => [
        (e.prev_state as { state: string }).state,
        (e.new_state as { state: string }).state,
      ]),
      [
        ["agent_active", "paused_by_operator"],
        ["paused_by_operator", "agent_active"],
      ],
    );
    assert.deepEqual(changes[0]!.scope, scopeOf("alice"));
    assert.equal(changes[1]!.seq, (changes[0]!.seq as number) + 1, "one stream per scope, in order");
  });

  it("refuses an intervention on an active conversation (-32004 not_paused), outside the scope, or of a kind not served", async () => {
    const reply = {
      kind: "reply",
      channel: "loopback",
      account_id: "default",
      to: "carol",
      body: "hi",
      msg_kind: "text",
    };
    const notPaused = await call(run, "ops", "nexo/admin/processing/intervention", {
      scope: scopeOf("carol"),
      operator_token_hash: OPERATOR,
      action: reply,
    });
    assert.equal(notPaused.error?.code, -32004);
    assert.equal(notPaused.error?.message, "not_paused");
    assert.equal(lastAudit(run, "ops")?.result, "error");

    ok(
      await call(run, "ops", "nexo/admin/processing/pause", {
        scope: scopeOf("carol"),
        operator_token_hash: OPERATOR,
      }),
    );
    const outside = await call(run, "ops", "nexo/admin/processing/intervention", {
      scope: scopeOf("carol"),
      operator_token_hash: OPERATOR,
      action: { ...reply, to: "mallory" },
    });
    assert.equal(outside.error?.code, -32602);
    assert.equal(outside.error?.data?.reason, "action_outside_scope");
    const skip = await call(run, "ops", "nexo/admin/processing/intervention", {
      scope: scopeOf("carol"),
      operator_token_hash: OPERATOR,
      action: { kind: "skip_item", item_id: "1", reason: "x" },
    });
    assert.equal(skip.error?.code, -32601);
    assert.match(skip.error?.message ?? "", /not_implemented/);
    // Every scope kind but a conversation is valid wire, answered -32601 not_implemented by each
    // method, audited as an error.
    for (const scope of [
      { kind: "agent", agent_id: "ana" },
      { kind: "agent_binding", agent_id: "ana", channel: "loopback", account_id: "default" },
      { kind: "event_stream", agent_id: "ana", subject_pattern: "orders.>" },
      { kind: "batch_queue", agent_id: "ana", queue_name: "nightly" },
      { kind: "custom", agent_id: "ana", scope_kind: "ticket", scope_id: "77" },
    ]) {
      for (const [method, params] of [
        ["nexo/admin/processing/pause", { scope, operator_token_hash: OPERATOR }],
        ["nexo/admin/processing/resume", { scope, operator_token_hash: OPERATOR }],
        ["nexo/admin/processing/intervention", { scope, operator_token_hash: OPERATOR, action: reply }],
        ["nexo/admin/processing/state", { scope }],
      ] as const) {
        const refused = await call(run, "ops", method, params);
        assert.equal(refused.error?.code, -32601, `${method} ${scope.kind}: ${JSON.stringify(refused)}`);
        assert.match(refused.error?.message ?? "", new RegExp(`not_implemented: scope kind "${scope.kind}"`));
        assert.equal(lastAudit(run, "ops")?.error_code, -32601);
      }
    }
    // Summary rules are checked before the state flips: carol stays paused.
    const noSession = await call(run, "ops", "nexo/admin/processing/resume", {
      scope: scopeOf("carol"),
      operator_token_hash: OPERATOR,
      summary_for_agent: "done",
    });
    assert.equal(noSession.error?.code, -32602);
    const unknownSession = await call(run, "ops", "nexo/admin/processing/resume", {
      scope: scopeOf("carol"),
      operator_token_hash: OPERATOR,
      session_id: "no-such-session",
      summary_for_agent: "done",
    });
    assert.equal(unknownSession.error?.code, -32602);
    assert.equal(unknownSession.error?.data?.reason, "unknown_session");
    const badHash = await call(run, "ops", "nexo/admin/processing/pause", {
      scope: scopeOf("carol"),
      operator_token_hash: "not hex",
    });
    assert.equal(badHash.error?.code, -32602);
    assert.equal(
      (
        ok(await call(run, "ops", "nexo/admin/processing/state", { scope: scopeOf("carol") })).state as {
          state: string;
        }
      ).state,
      "paused_by_operator",
    );
  });

  it("intervention and resume reload only the taken-over conversation's cached session, not the others'", async () => {
    for (const contact of ["dana", "erin"]) assert.match(await say(url, contact, "hello"), /scripted/);
    const cached = (contact: string) => run.daemon.sessions.open(sessionKeyOf(scopeOf(contact) as never));
    const dana = cached("dana");
    const erin = cached("erin");
    assert.equal(cached("dana"), dana, "a conversation's session is cached between messages");
    ok(
      await call(run, "ops", "nexo/admin/processing/pause", {
        scope: scopeOf("dana"),
        operator_token_hash: OPERATOR,
      }),
    );
    ok(
      await call(run, "ops", "nexo/admin/processing/intervention", {
        scope: scopeOf("dana"),
        operator_token_hash: OPERATOR,
        action: {
          kind: "reply",
          channel: "loopback",
          account_id: "default",
          to: "dana",
          body: "a human here",
          msg_kind: "text",
        },
      }),
    );
    assert.equal(cached("erin"), erin, "another conversation keeps its session");
    const afterIntervention = cached("dana");
    assert.notEqual(afterIntervention, dana, "the taken-over conversation reads its transcript again");
    assert.match(JSON.stringify(afterIntervention.history.at(-1)), /a human here/);
    ok(
      await call(run, "ops", "nexo/admin/processing/resume", {
        scope: scopeOf("dana"),
        operator_token_hash: OPERATOR,
      }),
    );
    assert.equal(cached("erin"), erin, "resume leaves the other conversation's session too");
    assert.notEqual(cached("dana"), afterIntervention);
  });
});

describe("the hold of a paused conversation: bounded, and across a restart", () => {
  let run: DaemonDir;
  after(() => run?.daemon.stop("test over"));

  it("evicts the oldest beyond the cap with an event; pause, hold and resume survive a daemon restart", async () => {
    const env = { NEXO_PROCESSING_PENDING_QUEUE_CAP: "2" };
    run = await startFromDir(files(), { env });
    let url = await endpoint(run.stateDir);
    assert.match(await say(url, "dana", "hello"), /scripted/);
    ok(
      await call(run, "ops", "nexo/admin/processing/pause", {
        scope: scopeOf("dana"),
        operator_token_hash: OPERATOR,
      }),
    );
    for (const text of ["one", "two", "three"]) await post(url, "dana", text);
    await until("the third message held", () =>
      run.daemon.store.processing.pending(keyOf("dana")).some((h) => h.body === "three"),
    );
    assert.deepEqual(
      run.daemon.store.processing.pending(keyOf("dana")).map((h) => h.body),
      ["two", "three"],
    );
    const dropped = events(run, scopeOf("dana"), "pending_inbounds_dropped");
    assert.equal(dropped.length, 1);
    assert.equal(dropped[0]!.dropped, 1);
    assert.deepEqual(dropped[0]!.scope, scopeOf("dana"));

    // A restart: same config and state directories, a new process's worth of daemon.
    await run.daemon.stop("restart");
    run = await restartFromDir(run, { env });
    url = await endpoint(run.stateDir);
    const state = ok(await call(run, "ops", "nexo/admin/processing/state", { scope: scopeOf("dana") }))
      .state as { state: string };
    assert.equal(state.state, "paused_by_operator", "the pause survived the restart");
    await post(url, "dana", "four");
    await until("the fourth message held", () =>
      run.daemon.store.processing.pending(keyOf("dana")).some((h) => h.body === "four"),
    );
    assert.deepEqual(await replies(url, "dana", 1500), [], "still silent after the restart");
    assert.deepEqual(
      run.daemon.store.processing.pending(keyOf("dana")).map((h) => h.body),
      ["three", "four"],
    );

    const resumed = ok(
      await call(run, "ops", "nexo/admin/processing/resume", {
        scope: scopeOf("dana"),
        operator_token_hash: OPERATOR,
      }),
    );
    assert.equal(resumed.drained_pending, 2);
    assert.equal(resumed.transcript_stamped, undefined, "no summary: nothing to report");
    const session = run.daemon.store.sessions.list().find((s) => s.contact === "dana")!;
    assert.deepEqual(
      run.daemon.store.transcripts
        .entries(session.id)
        .slice(-2)
        .map((e) => [e.role, e.text]),
      [
        ["user", "three"],
        ["user", "four"],
      ],
    );
    assert.match(await say(url, "dana", "hello again"), /scripted/);
  });
});
