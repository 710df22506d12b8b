import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApprovalPolicy } from "../../src/engine/approvals.js";
import type { TurnEvent } from "../../src/engine/events.js";
import { AgentSession } from "../../src/engine/session.js";
import { type HubEvent, ThreadHub } from "../../src/engine/thread-hub.js";
import type { ProviderEvent } from "../../src/engine/types.js";
import { collect, PlaybackProvider, SimpleToolHost, type Step, tool, toolCalls } from "../helpers/engine.js";

const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** A model answer of `n` words, one text delta each, `delayMs` apart. */
function words(n: number, delayMs = 0): Step {
  const events: ProviderEvent[] = Array.from({ length: n }, (_, i) => ({
    type: "text_delta",
    text: `w${i} `,
  }));
  events.push(
    { type: "usage", usage: { inputTokens: 10, outputTokens: n } },
    { type: "stop", reason: "end_turn" },
  );
  return () => (delayMs ? { events, delayMs } : events);
}

const shout = tool("Shout", "info", async (args, ctx) => {
  for (let i = 0; i < 5; i++) ctx.onOutput?.(`line ${i}\n`);
  return { output: `shouted ${String(args.text)}` };
});

function session(steps: Step[]) {
  return new AgentSession({
    agentId: "a1",
    provider: new PlaybackProvider(steps),
    model: "m",
    maxTokens: 100,
    maxTurns: 8,
    tools: new SimpleToolHost([shout]),
    workspace: "/tmp",
    policy: new ApprovalPolicy({ mode: "yolo" }),
  });
}

/** The events with consecutive deltas of one item joined (what a merged stream may deliver). */
function joined(events: readonly TurnEvent[]): TurnEvent[] {
  const out: TurnEvent[] = [];
  for (const event of events) {
    const last = out.at(-1);
    if (
      last &&
      (event.type === "text_delta" ||
        event.type === "reasoning_delta" ||
        event.type === "tool_output_delta") &&
      last.type === event.type &&
      ("itemId" in last ? last.itemId === (event as { itemId: string }).itemId : true) &&
      ("callId" in last ? last.callId === (event as { callId: string }).callId : true)
    ) {
      out[out.length - 1] = { ...last, text: last.text + event.text } as TurnEvent;
    } else {
      out.push(event);
    }
  }
  return out;
}

describe("thread hub", () => {
  test("a second subscriber on a running turn receives every event once while a stalled one cannot slow the turn", async () => {
    const s = session([() => toolCalls({ id: "c1", name: "Shout", input: { text: "hi" } }), words(400, 1)]);
    const stalled = s.hub.subscribe();
    const first: TurnEvent[] = [];
    // Subscribed before the turn starts (its id chosen beforehand), so it sees `turn_start` too.
    const firstReader = collect(s.hub.subscribe({ turnId: "turn-1" }), (e) => first.push(e));
    const handle = s.startTurn("go", { turnId: "turn-1" });
    // Join mid-turn: once the answer has started streaming.
    for (let waited = 0; !first.some((e) => e.type === "text_delta"); waited++) {
      assert.ok(waited < 10_000 && !first.some((e) => e.type === "turn_end"), JSON.stringify(first));
      await new Promise((r) => setTimeout(r, 1));
    }
    const second = collect(s.hub.subscribe({ turnId: handle.turnId, replay: true }));

    const outcome = await handle.done;
    assert.equal(outcome.reason, "completed");
    // The stalled reader read nothing, yet the turn ran to its end.
    assert.ok(stalled.queued > 0 && !stalled.lagged, "the stalled reader holds what it has not read");

    const all = await firstReader;
    const late = await second;
    assert.equal(all.at(-1)?.type, "turn_end");
    assert.equal(late.at(-1)?.type, "turn_end");
    // Every event once: the late reader's stream (its replay merged, then live) is the full turn.
    assert.deepEqual(joined(late), joined(all));
    assert.equal(late.filter((e) => e.type === "turn_start").length, 1);
    assert.equal(late.filter((e) => e.type === "tool_result").length, 1);
    const text = (events: TurnEvent[]) => events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
    const output = late
      .filter((e) => e.type === "tool_output_delta")
      .map((e) => e.text)
      .join("");
    assert.equal(output, "line 0\nline 1\nline 2\nline 3\nline 4\n");
    const result = late.find((e) => e.type === "tool_result");
    assert.ok(result && typeof result.durationMs === "number" && result.durationMs >= 0);
    assert.deepEqual(late.find((e) => e.type === "tool_requested")?.source, { kind: "builtin" });
    assert.equal(text(late), Array.from({ length: 400 }, (_, i) => `w${i} `).join(""));

    // The stalled reader gets everything too once it reads, each event once: its queue merged the
    // deltas instead of growing with them.
    assert.ok(stalled.queued < all.length, `${stalled.queued} queued for ${all.length} events`);
    const held: TurnEvent[] = [];
    for await (const event of stalled) {
      assert.notEqual(event.type, "lagged");
      held.push(event as TurnEvent);
      if (event.type === "turn_end") break;
    }
    assert.deepEqual(joined(held), joined(all));
    assert.equal(s.hub.subscriberCount, 0);
  });

  test("a reader that leaves does not cancel the turn", async () => {
    const s = session([words(50, 1)]);
    const events = s.runTurn("hi")[Symbol.asyncIterator]();
    const firstEvent = await events.next();
    assert.equal((firstEvent.value as HubEvent).type, "turn_start");
    await events.return?.();
    const outcome = await s.idle();
    assert.equal(outcome?.reason, "completed");
    assert.equal(s.history.at(-1)?.role, "assistant");
  });

  test("overflow policy: deltas merge while behind; past the bound the reader gets `lagged` and its stream ends", async () => {
    const hub = new ThreadHub();
    const merging = hub.subscribe({ maxQueuedEvents: 4 });
    const strict = hub.subscribe({ maxQueuedEvents: 4 });
    hub.publish({ type: "turn_start", turnId: "t", input: { content: [] } });
    hub.publish({ type: "message_start", turnId: "t", itemId: "msg-1" });
    for (let i = 0; i < 1000; i++)
      hub.publish({ type: "text_delta", turnId: "t", itemId: "msg-1", text: "x" });
    // 1000 deltas of one item are one queued event: nobody is detached.
    assert.equal(merging.queued, 3);
    assert.equal(merging.lagged, false);
    strict.close();
    for (let i = 0; i < 3; i++) hub.publish({ type: "info", turnId: "t", message: `notice ${i}` });
    assert.equal(merging.lagged, true, "five events waiting is past the bound of four");
    assert.equal(hub.subscriberCount, 0);
    const got: HubEvent[] = [];
    for await (const event of merging) got.push(event);
    assert.deepEqual(got, [{ type: "lagged", dropped: 5 }]);
  });

  test("overflow policy: a byte bound detaches a reader behind on one huge item", async () => {
    const hub = new ThreadHub();
    const reader = hub.subscribe({ maxQueuedBytes: 10_000 });
    for (let i = 0; i < 100; i++)
      hub.publish({ type: "tool_output_delta", turnId: "t", callId: "c", text: "y".repeat(200) });
    assert.equal(reader.lagged, true);
  });

  test("replay: a reader arriving mid-turn gets the turn so far, merged; between turns there is nothing to replay", async () => {
    const hub = new ThreadHub();
    hub.publish({ type: "turn_start", turnId: "t1", input: { content: [{ type: "text", text: "q" }] } });
    hub.publish({ type: "message_start", turnId: "t1", itemId: "msg-1" });
    hub.publish({ type: "text_delta", turnId: "t1", itemId: "msg-1", text: "a" });
    hub.publish({ type: "text_delta", turnId: "t1", itemId: "msg-1", text: "b" });
    const late = hub.subscribe({ replay: true, turnId: "t1" });
    hub.publish({ type: "text_delta", turnId: "t1", itemId: "msg-1", text: "c" });
    hub.publish({ type: "turn_end", turnId: "t1", reason: "completed", usage });
    const got: HubEvent[] = [];
    for await (const event of late) got.push(event);
    assert.deepEqual(
      got.map((e) => (e.type === "text_delta" ? `delta:${e.text}` : e.type)),
      ["turn_start", "message_start", "delta:abc", "turn_end"],
    );
    assert.equal(hub.current(), undefined);
    // Merging in the log never changed what an earlier reader was handed.
    const first = hub.subscribe({ replay: true });
    hub.publish({ type: "turn_start", turnId: "t2", input: { content: [] } });
    assert.equal(hub.current()?.turnId, "t2");
    first.close();
  });
});
