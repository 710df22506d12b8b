/**
 * Escalations over a real daemon: the agent calls the built-in `escalate` tool in a loopback
 * conversation (the scripted model calls a tool the message names) under the default approval
 * policy — agents.yaml allows nothing, and a channel refuses every approval — so `escalate` runs
 * only because it never waits for one; the escalation is stored and
 * pushed as an agent event, operators list it and resolve it (dismissed with a reason, or taken
 * over), and pausing a conversation with a pending escalation resolves it as a takeover.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type DaemonDir, startFromDir } from "../../helpers/daemon-dir.js";
import { endpoint, say } from "../../helpers/loopback.js";
import { call, events, files, lastAudit, OPERATOR, ok, scopeOf } from "../../helpers/takeover.js";

interface Entry {
  agent_id: string;
  scope: Record<string, unknown>;
  state: Record<string, unknown>;
}

describe("escalations/* over a real daemon", () => {
  let run: DaemonDir;
  let url: string;
  before(async () => {
    run = await startFromDir(files());
    url = await endpoint(run.stateDir);
  });
  after(() => run?.daemon.stop("test over"));

  const list = async (params?: unknown) =>
    ok(await call(run, "ops", "nexo/admin/escalations/list", params)).entries as Entry[];

  it("list needs escalations_read and resolve escalations_resolve; both denials are audited", async () => {
    for (const [method, capability, params] of [
      ["nexo/admin/escalations/list", "escalations_read", {}],
      [
        "nexo/admin/escalations/resolve",
        "escalations_resolve",
        { scope: scopeOf("x"), by: "takeover", operator_token_hash: OPERATOR },
      ],
    ] as const) {
      const reply = await call(run, "viewer", method, params);
      assert.equal(reply.error?.code, -32004, JSON.stringify(reply));
      assert.deepEqual(reply.error?.data, { capability, microapp_id: "viewer", method });
      assert.equal(lastAudit(run, "viewer")?.result, "denied");
      assert.equal(lastAudit(run, "viewer")?.method, method);
    }
  });

  it("the agent escalates with the escalate tool; operators list it and dismiss it", async () => {
    const answer = await say(url, "erin", "escalate about the refund I was promised");
    assert.match(answer, /operator has been notified/);
    const pending = await list();
    assert.equal(pending.length, 1);
    const [entry] = pending;
    assert.equal(entry!.agent_id, "ana");
    assert.deepEqual(entry!.scope, scopeOf("erin"));
    assert.equal(entry!.state.state, "pending");
    assert.equal(entry!.state.summary, "the refund I was promised");
    assert.equal(entry!.state.reason, "needs_human_judgment");
    assert.equal(entry!.state.urgency, "normal");
    assert.equal(lastAudit(run, "ops")?.result, "ok");
    const requested = events(run, scopeOf("erin"), "escalation_requested");
    assert.equal(requested.length, 1);
    assert.deepEqual(requested[0]!.scope, scopeOf("erin"));

    // A second escalate while one is pending keeps the first.
    assert.match(await say(url, "erin", "escalate about it again"), /already pending/);
    assert.equal((await list()).length, 1);

    const missingReason = await call(run, "ops", "nexo/admin/escalations/resolve", {
      scope: scopeOf("erin"),
      by: "dismissed",
      operator_token_hash: OPERATOR,
    });
    assert.equal(missingReason.error?.code, -32602);
    const dismissed = ok(
      await call(run, "ops", "nexo/admin/escalations/resolve", {
        scope: scopeOf("erin"),
        by: "dismissed",
        dismiss_reason: "refund already issued",
        operator_token_hash: OPERATOR,
      }),
    );
    assert.equal(dismissed.changed, true);
    assert.equal(typeof dismissed.correlation_id, "string");
    assert.deepEqual(await list(), []);
    const resolved = await list({ filter: "resolved" });
    assert.deepEqual(resolved[0]!.state.by, { kind: "operator_dismissed", reason: "refund already issued" });
    const again = ok(
      await call(run, "ops", "nexo/admin/escalations/resolve", {
        scope: scopeOf("erin"),
        by: "takeover",
        operator_token_hash: OPERATOR,
      }),
    );
    assert.equal(again.changed, false, "nothing pending any more");
    const resolvedEvents = events(run, scopeOf("erin"), "escalation_resolved");
    assert.equal(resolvedEvents.length, 1);
    assert.deepEqual(resolvedEvents[0]!.by, { kind: "operator_dismissed", reason: "refund already issued" });
  });

  it("resolve by takeover; a pause auto-resolves the pending escalation; filters and limits", async () => {
    assert.match(await say(url, "finn", "escalate about a broken parcel"), /operator has been notified/);
    assert.equal(
      ok(
        await call(run, "ops", "nexo/admin/escalations/resolve", {
          scope: scopeOf("finn"),
          by: "takeover",
          operator_token_hash: OPERATOR,
        }),
      ).changed,
      true,
    );

    assert.match(await say(url, "gus", "escalate about a wrong invoice"), /operator has been notified/);
    assert.equal((await list({ agent_id: "ana" })).length, 1);
    ok(
      await call(run, "ops", "nexo/admin/processing/pause", {
        scope: scopeOf("gus"),
        operator_token_hash: OPERATOR,
      }),
    );
    assert.deepEqual(await list(), [], "the pause resolved it");
    const all = await list({ filter: "all" });
    assert.deepEqual(
      all.map((e) => [e.scope.contact_id, e.state.by]),
      [
        ["gus", { kind: "operator_takeover" }],
        ["finn", { kind: "operator_takeover" }],
        ["erin", { kind: "operator_dismissed", reason: "refund already issued" }],
      ],
      "newest first",
    );
    assert.equal((await list({ filter: "all", limit: 2 })).length, 2);
    assert.deepEqual(await list({ filter: "all", agent_id: "nobody" }), []);
    assert.deepEqual(await list({ filter: "all", scope_kind: "agent" }), []);
    assert.deepEqual(await list({ filter: "all", tenant_id: "acme" }), [], "another tenant sees nothing");
    ok(
      await call(run, "ops", "nexo/admin/processing/resume", {
        scope: scopeOf("gus"),
        operator_token_hash: OPERATOR,
      }),
    );
  });
});
