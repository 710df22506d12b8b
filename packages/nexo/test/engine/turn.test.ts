import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { LlmAuthenticationError, LlmContextOverflowError, LlmRateLimitedError } from "@nexo/wire";
import { ApprovalPolicy } from "../../src/engine/approvals.js";
import { SUMMARY_PREFIX } from "../../src/engine/compaction.js";
import type { TurnEvent } from "../../src/engine/events.js";
import { HookRunner } from "../../src/engine/hooks.js";
import { AgentSession, SessionBusyError } from "../../src/engine/session.js";
import type { SessionConfig } from "../../src/engine/session-types.js";
import { createEscalateTool, type EscalationArgs } from "../../src/engine/tools/escalate.js";
import type { ChatMessage, HookVote } from "../../src/engine/types.js";
import {
  collect,
  PlaybackProvider,
  SimpleToolHost,
  type Step,
  text,
  tool,
  toolCalls,
  types,
} from "../helpers/engine.js";

const echo = tool("Echo", "info", async (args) => ({ output: `echo:${String(args.v)}` }));
const write = tool("Write", "edit", async (args) => ({ output: `wrote ${String(args.file_path)}` }));
const run = tool("Bash", "exec", async (args, ctx) => {
  // A well-behaved long tool: finishes after `ms` unless cancelled.
  await sleep(Number(args.ms ?? 0), undefined, { signal: ctx.signal });
  return { output: "done" };
});

function session(steps: Step[], extra: Partial<SessionConfig> = {}) {
  const provider = new PlaybackProvider(steps, extra.contextWindow);
  const s = new AgentSession({
    agentId: "a1",
    provider,
    model: "m",
    maxTokens: 100,
    maxTurns: 8,
    tools: new SimpleToolHost([echo, write, run]),
    workspace: "/tmp",
    ...extra,
  });
  return { s, provider };
}

/** Every tool_use in the history has exactly one tool_result right after it. */
function assertConsistent(history: ChatMessage[]) {
  for (let i = 0; i < history.length; i++) {
    const uses = history[i]!.content.filter((b) => b.type === "tool_use").map(
      (b) => (b as { id: string }).id,
    );
    if (uses.length === 0) continue;
    const next = history[i + 1];
    assert.ok(next, `tool calls at ${i} have no results`);
    const results = next.content
      .filter((b) => b.type === "tool_result")
      .map((b) => (b as { toolUseId: string }).toolUseId);
    assert.deepEqual(results.sort(), uses.sort(), `results at ${i + 1} do not match the calls`);
  }
}

describe("turn loop", () => {
  test("each model call's reasoning and text are items of their own; argument fragments name the call", async () => {
    const { s } = session(
      [
        () => [
          { type: "thinking_delta", text: "let me " },
          { type: "thinking_delta", text: "think", signature: "sig" },
          { type: "text_delta", text: "Checking." },
          { type: "tool_call_delta", index: 0, id: "c1", name: "Echo", delta: '{"v":' },
          { type: "tool_call_delta", index: 0, delta: "1}" },
          { type: "tool_call", id: "c1", name: "Echo", input: { v: 1 }, index: 0 },
          { type: "stop", reason: "tool_use" },
        ],
        () => text("Done."),
      ],
      { policy: new ApprovalPolicy({ mode: "yolo" }) },
    );
    const events = await collect(s.runTurn("go"));
    const items = events
      .filter((e) => "itemId" in e)
      .map((e) => `${e.type}:${(e as { itemId: string }).itemId}`);
    assert.deepEqual(items, [
      "reasoning_start:reasoning-1",
      "reasoning_delta:reasoning-1",
      "reasoning_delta:reasoning-1",
      "reasoning_end:reasoning-1",
      "message_start:msg-2",
      "text_delta:msg-2",
      "message_end:msg-2",
      "message_start:msg-3",
      "text_delta:msg-3",
      "message_end:msg-3",
    ]);
    const reasoningEnd = events.find((e) => e.type === "reasoning_end");
    assert.equal(reasoningEnd?.type === "reasoning_end" && reasoningEnd.text, "let me think");
    const args = events.filter((e) => e.type === "tool_args_delta");
    assert.deepEqual(
      args.map((e) => [e.callId, e.name, e.delta]),
      [
        ["c1", "Echo", '{"v":'],
        ["c1", "Echo", "1}"],
      ],
    );
    const requested = events.find((e) => e.type === "tool_requested");
    assert.equal(requested?.type === "tool_requested" && requested.callId, "c1");
    // The first call's text item ends before its tool calls run.
    assert.ok(
      events.findIndex((e) => e.type === "message_end") <
        events.findIndex((e) => e.type === "tool_requested"),
    );
  });

  test("a text turn streams deltas, reports usage and ends completed with the reply", async () => {
    const { s } = session([() => [{ type: "text_delta", text: "Hel" }, ...text("lo")]]);
    const events = await collect(s.runTurn("hi"));
    assert.deepEqual(types(events), [
      "turn_start",
      "message_start",
      "text_delta",
      "text_delta",
      "message_end",
      "step_usage",
      "usage",
      "turn_end",
    ]);
    const start = events[0] as Extract<TurnEvent, { type: "turn_start" }>;
    assert.deepEqual(start.input, { content: [{ type: "text", text: "hi" }] });
    const item = events.filter((e) => "itemId" in e).map((e) => (e as { itemId: string }).itemId);
    assert.equal(new Set(item).size, 1, "one message item for the model call");
    assert.equal((events[4] as { text: string }).text, "Hello", "message_end carries the whole text");
    const end = events.at(-1) as Extract<TurnEvent, { type: "turn_end" }>;
    assert.equal(end.reason, "completed");
    assert.equal(end.reply, "Hello");
    assert.deepEqual(end.usage, {
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    assert.equal(s.history.length, 2);
  });

  test("parallel tool calls run concurrently, results return in call order and reach the model", async () => {
    const order: string[] = [];
    const slow = tool("Slow", "info", async (args) => {
      order.push(`start ${args.n}`);
      await sleep(Number(args.ms));
      order.push(`end ${args.n}`);
      return { output: `slow ${args.n}` };
    });
    const { s, provider } = session(
      [
        () =>
          toolCalls(
            { id: "c1", name: "Slow", input: { n: 1, ms: 60 } },
            { id: "c2", name: "Slow", input: { n: 2, ms: 10 } },
          ),
        () => text("both done"),
      ],
      { tools: new SimpleToolHost([slow]), policy: new ApprovalPolicy({ mode: "yolo" }) },
    );
    const events = await collect(s.runTurn("go"));
    assert.deepEqual(order, ["start 1", "start 2", "end 2", "end 1"]);
    const results = events.filter((e) => e.type === "tool_result") as Array<
      Extract<TurnEvent, { type: "tool_result" }>
    >;
    assert.deepEqual(
      results.map((r) => r.callId),
      ["c2", "c1"],
    );
    const sent = provider.requests[1]!.messages.at(-1)!;
    assert.deepEqual(sent.content, [
      { type: "tool_result", toolUseId: "c1", content: "slow 1" },
      { type: "tool_result", toolUseId: "c2", content: "slow 2" },
    ]);
    assertConsistent(s.history);
  });

  test("approval: approve once, deny with reason (the reason reaches the model), and always grants the category", async () => {
    const { s, provider } = session([
      () =>
        toolCalls(
          { id: "w1", name: "Write", input: { file_path: "a" } },
          { id: "w2", name: "Write", input: { file_path: "b" } },
        ),
      () => text("ok"),
      () => toolCalls({ id: "w3", name: "Write", input: { file_path: "c" } }),
      () => text("ok again"),
    ]);
    const first = await collect(s.runTurn("write two"), (e) => {
      if (e.type === "tool_requested") {
        assert.equal(e.needsApproval, true);
        assert.equal(e.category, "edit");
        // Both are pending at once; answer them out of order.
        if (e.callId === "w2") {
          assert.deepEqual(
            s.approvals.ids.sort(),
            ["w1", "w2"].filter((id) => s.approvals.has(id)),
          );
          queueMicrotask(() => {
            assert.ok(s.deny("w2", "not that file"));
            assert.ok(s.approve("w1", "always"));
          });
        }
      }
    });
    const cancelled = first.find((e) => e.type === "tool_cancelled") as Extract<
      TurnEvent,
      { type: "tool_cancelled" }
    >;
    assert.equal(cancelled.callId, "w2");
    assert.equal(cancelled.reason, "not that file");
    const toModel = provider.requests[1]!.messages.at(-1)!.content;
    assert.deepEqual(toModel[1], {
      type: "tool_result",
      toolUseId: "w2",
      content: "The user denied this tool call. Reason: not that file",
      isError: true,
    });
    // "always" granted the edit category: the next Write runs without asking.
    const second = await collect(s.runTurn("write another"));
    const req = second.find((e) => e.type === "tool_requested") as Extract<
      TurnEvent,
      { type: "tool_requested" }
    >;
    assert.equal(req.needsApproval, false);
    assert.ok(second.some((e) => e.type === "tool_result"));
    assertConsistent(s.history);
  });

  test("escalate never waits for approval under the default policy, even where nobody can approve", async () => {
    const raised: EscalationArgs[] = [];
    const escalate = createEscalateTool((_ctx, args) => {
      raised.push(args);
      return { created: true, requestedAtMs: Date.now() };
    });
    // A channel session: the default policy, nothing allowed, approvals refused (nobody to ask).
    const { s } = session(
      [
        () =>
          toolCalls(
            { id: "e1", name: "escalate", input: { summary: "refund" } },
            { id: "w1", name: "Write", input: { file_path: "a" } },
          ),
        () => text("a human will follow up"),
      ],
      {
        tools: new SimpleToolHost([escalate, write]),
        policy: new ApprovalPolicy({ mode: "default" }),
        approvalsUnavailable: "nobody can approve on a channel",
      },
    );
    const events = await collect(s.runTurn("I want a human"));
    const requested = events.filter((e) => e.type === "tool_requested") as Array<
      Extract<TurnEvent, { type: "tool_requested" }>
    >;
    assert.deepEqual(
      requested.map((e) => [e.callId, e.needsApproval]),
      [
        ["e1", false],
        ["w1", true],
      ],
    );
    assert.deepEqual(raised, [{ summary: "refund", reason: "needs_human_judgment", urgency: "normal" }]);
    const results = events.filter((e) => e.type === "tool_result") as Array<
      Extract<TurnEvent, { type: "tool_result" }>
    >;
    assert.deepEqual(
      results.map((e) => [e.callId, e.status]),
      [["e1", "success"]],
    );
    // The Write beside it still needed approval and was refused.
    const cancelled = events.find((e) => e.type === "tool_cancelled") as Extract<
      TurnEvent,
      { type: "tool_cancelled" }
    >;
    assert.equal(cancelled.callId, "w1");
    assertConsistent(s.history);
  });

  test("an unknown tool gets an error result and the turn continues", async () => {
    const { s, provider } = session(
      [() => toolCalls({ id: "u1", name: "Nope", input: {} }), () => text("sorry")],
      {
        policy: new ApprovalPolicy({ mode: "yolo" }),
      },
    );
    const events = await collect(s.runTurn("x"));
    const result = events.find((e) => e.type === "tool_result") as Extract<
      TurnEvent,
      { type: "tool_result" }
    >;
    assert.equal(result.status, "error");
    assert.match(result.output, /Unknown tool "Nope"/);
    assert.equal((events.at(-1) as { reason: string }).reason, "completed");
    assert.equal(provider.requests.length, 2);
  });

  test("stop mid-stream ends the turn cancelled and keeps what was shown", async () => {
    const { s } = session([
      () => ({
        events: [
          { type: "text_delta", text: "one " },
          { type: "text_delta", text: "two " },
          ...text("three"),
        ],
        delayMs: 40,
      }),
    ]);
    const events = await collect(s.runTurn("talk"), (e) => {
      if (e.type === "text_delta") s.cancel();
    });
    assert.equal((events.at(-1) as { reason: string }).reason, "cancelled");
    assert.deepEqual(s.history.at(-1), { role: "assistant", content: [{ type: "text", text: "one " }] });
    assert.equal(s.busy, false);
  });

  test("stop while approvals are pending cancels each, and while a tool runs cancels it", async () => {
    const { s } = session(
      [
        () =>
          toolCalls({ id: "p1", name: "Write", input: {} }, { id: "p2", name: "Bash", input: { ms: 5000 } }),
      ],
      { policy: new ApprovalPolicy({ allowList: ["exec"] }) },
    );
    const started = Date.now();
    const events = await collect(s.runTurn("x"), (e) => {
      if (e.type === "tool_running" && e.callId === "p2") setTimeout(() => s.cancel(), 20);
    });
    assert.ok(Date.now() - started < 2000, "cancellation did not wait for the tool");
    const cancelled = events
      .filter((e) => e.type === "tool_cancelled")
      .map((e) => (e as { callId: string }).callId);
    assert.deepEqual(cancelled.sort(), ["p1", "p2"]);
    assert.equal((events.at(-1) as { reason: string }).reason, "cancelled");
    assertConsistent(s.history);
  });

  test("a tool that ignores its signal cannot hold a cancelled turn", async () => {
    const stubborn = tool("Stubborn", "info", () => new Promise(() => {}));
    const { s } = session([() => toolCalls({ id: "s1", name: "Stubborn", input: {} })], {
      tools: new SimpleToolHost([stubborn]),
      policy: new ApprovalPolicy({ mode: "yolo" }),
    });
    const events = await collect(s.runTurn("x"), (e) => {
      if (e.type === "tool_running") setTimeout(() => s.cancel(), 10);
    });
    assert.ok(events.some((e) => e.type === "tool_cancelled"));
    assertConsistent(s.history);
  });

  test("max_turns stops a tool loop with an info event", async () => {
    const loop = () => toolCalls({ id: `l${Math.random()}`, name: "Echo", input: { v: 1 } });
    const { s, provider } = session([loop, loop, loop, loop], {
      maxTurns: 2,
      policy: new ApprovalPolicy({ mode: "yolo" }),
    });
    const events = await collect(s.runTurn("loop"));
    assert.equal(provider.requests.length, 2);
    assert.equal((events.at(-1) as { reason: string }).reason, "max_turns");
    assert.ok(events.some((e) => e.type === "info" && /max_turns/.test(e.message)));
    assertConsistent(s.history);
  });

  test("a provider error mid-turn is reported with retryable, and the next turn works", async () => {
    const { s } = session([
      () => new LlmRateLimitedError("slow down", { retry_after_secs: 3 }),
      () => new LlmAuthenticationError("bad key"),
      () => text("fine now"),
    ]);
    const e1 = await collect(s.runTurn("one"));
    const err1 = e1.find((e) => e.type === "error") as Extract<TurnEvent, { type: "error" }>;
    assert.equal(err1.failure, "provider");
    assert.equal(err1.retryable, true);
    assert.match(err1.message, /retry after 3 s/);
    const e2 = await collect(s.runTurn("two"));
    const err2 = e2.find((e) => e.type === "error") as Extract<TurnEvent, { type: "error" }>;
    assert.equal(err2.retryable, false);
    const e3 = await collect(s.runTurn("three"));
    assert.equal((e3.at(-1) as { reason: string; reply: string }).reply, "fine now");
  });

  test("a second turn while one runs is refused", async () => {
    const { s } = session([() => ({ events: text("slow"), delayMs: 30 })]);
    const stream = s.runTurn("a");
    assert.throws(() => s.runTurn("b"), SessionBusyError);
    await collect(stream);
  });

  test("compaction summarises old turns before the window is exceeded, keeping recent ones", async () => {
    const long = "x".repeat(400);
    let summaries = 0;
    const answer: Step = (req) => {
      if (/compress conversations/.test(String(req.system))) {
        summaries++;
        return text("the user asked long questions");
      }
      return text(`answer ${long}`);
    };
    const { s, provider } = session(
      Array.from({ length: 20 }, () => answer),
      { contextWindow: 700 },
    );
    const compactions: Array<Extract<TurnEvent, { type: "compaction" }>> = [];
    for (let i = 0; i < 6; i++) {
      const events = await collect(s.runTurn(`question ${i} ${long}`));
      for (const e of events) if (e.type === "compaction") compactions.push(e);
      assert.equal((events.at(-1) as { reason: string }).reason, "completed");
    }
    assert.ok(summaries >= 1, "the summariser was never called");
    assert.ok(compactions.length >= 1);
    for (const c of compactions) {
      assert.equal(c.trigger, "threshold");
      assert.ok(c.removedMessages > 0);
      assert.ok(c.tokensAfter < c.tokensBefore, JSON.stringify(c));
    }
    const last = provider.requests.at(-1)!;
    const first = last.messages[0]!.content[0] as { text: string };
    assert.ok(first.text.startsWith(SUMMARY_PREFIX));
    assert.match(first.text, /long questions/);
    // The request fits the window's budget: (700 - 100) * 0.8 tokens at ~4 chars per token.
    assert.ok(JSON.stringify(last.messages).length / 4 < 700, "the compacted request is still too large");
    // The latest question is always kept verbatim.
    assert.match(JSON.stringify(last.messages.at(-1)), /question 5/);
  });

  test("a context overflow from the provider forces compaction and a retry", async () => {
    const { s, provider } = session(
      [
        () => text("a1"),
        () => text("a2"),
        () => new LlmContextOverflowError("prompt is too long"),
        () => text("summary"),
        () => text("after compaction"),
      ],
      { contextWindow: 1_000_000 },
    );
    await collect(s.runTurn("q1"));
    await collect(s.runTurn("q2"));
    const events = await collect(s.runTurn("q3"));
    assert.equal((events.at(-1) as { reply: string }).reply, "after compaction");
    assert.equal(provider.requests.length, 5);
  });

  test("a stop during compaction cancels the turn cleanly: no error, history untouched", async () => {
    let summarising!: () => void;
    const summaryRequested = new Promise<void>((resolve) => {
      summarising = resolve;
    });
    const { s } = session(
      [
        () => text("a1"),
        () => text("a2"),
        () => new LlmContextOverflowError("prompt is too long"),
        () => {
          summarising();
          return { events: text("a summary that never finishes"), delayMs: 200 };
        },
        () => text("next turn"),
      ],
      { contextWindow: 1_000_000 },
    );
    await collect(s.runTurn("q1"));
    await collect(s.runTurn("q2"));
    const stream = s.runTurn("q3");
    void summaryRequested.then(() => s.cancel());
    const events = await collect(stream);
    assert.ok(!events.some((e) => e.type === "error"), JSON.stringify(events));
    assert.equal((events.at(-1) as { reason: string }).reason, "cancelled");
    assert.ok(
      s.history.every((m) => !JSON.stringify(m).includes("never finishes")),
      "a cut-off summary never replaces the history",
    );
    assert.deepEqual(
      s.history.map((m) => (m.content[0] as { text: string }).text),
      ["q1", "a1", "q2", "a2", "q3"],
      "a cancelled compaction leaves the history as it was",
    );
    const next = await collect(s.runTurn("q4"));
    assert.equal((next.at(-1) as { reply: string }).reply, "next turn");
  });

  test("a provider error during compaction ends the turn with a typed provider error", async () => {
    const { s } = session(
      [
        () => text("a1"),
        () => text("a2"),
        () => new LlmContextOverflowError("prompt is too long"),
        () => new LlmRateLimitedError("slow down", { retry_after_secs: 3 }),
        () => text("later"),
      ],
      { contextWindow: 1_000_000 },
    );
    await collect(s.runTurn("q1"));
    await collect(s.runTurn("q2"));
    const events = await collect(s.runTurn("q3"));
    const errors = events.filter((e) => e.type === "error") as Array<Extract<TurnEvent, { type: "error" }>>;
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.equal(errors[0]!.failure, "provider");
    assert.equal(errors[0]!.retryable, true);
    assert.match(errors[0]!.message, /compacting the conversation failed: slow down/);
    assert.equal((events.at(-1) as { reason: string }).reason, "error");
    const next = await collect(s.runTurn("q4"));
    assert.equal((next.at(-1) as { reply: string }).reply, "later");
  });

  test("hooks: block a message, transform tool args and output, a failing hook continues", async () => {
    const seen: string[] = [];
    const hooks = new HookRunner();
    hooks.register({
      name: "broken",
      points: ["before_tool"],
      onHook: async () => {
        throw new Error("hook crashed");
      },
    });
    hooks.register({
      name: "guard",
      points: ["before_message", "before_tool", "after_tool", "before_reply"],
      onHook: async (point, payload): Promise<HookVote> => {
        seen.push(point);
        if (point === "before_message" && payload.text === "forbidden")
          return { decision: "block", reason: "nope" };
        if (point === "before_tool")
          return { decision: "transform", payload: { ...payload, args: { v: "rewritten" } } };
        if (point === "after_tool")
          return { decision: "transform", payload: { ...payload, output: "[redacted]" } };
        if (point === "before_reply") return { decision: "transform", payload: { text: `${payload.text}!` } };
        return { decision: "continue" };
      },
    });
    const { s, provider } = session(
      [() => toolCalls({ id: "e1", name: "Echo", input: { v: "orig" } }), () => text("done")],
      {
        hooks,
        policy: new ApprovalPolicy({ mode: "yolo" }),
      },
    );
    const blocked = await collect(s.runTurn("forbidden"));
    assert.equal((blocked.at(-1) as { reason: string }).reason, "blocked");
    assert.equal(provider.requests.length, 0);
    const events = await collect(s.runTurn("allowed"));
    const req = events.find((e) => e.type === "tool_requested") as Extract<
      TurnEvent,
      { type: "tool_requested" }
    >;
    assert.deepEqual(req.args, { v: "rewritten" });
    const result = events.find((e) => e.type === "tool_result") as Extract<
      TurnEvent,
      { type: "tool_result" }
    >;
    assert.equal(result.output, "[redacted]");
    assert.equal((events.at(-1) as { reply: string }).reply, "done!");
  });

  test("sessions without anyone to ask refuse calls that need approval", async () => {
    const { s } = session([() => toolCalls({ id: "b1", name: "Bash", input: {} }), () => text("ok")], {
      approvalsUnavailable: "no one can approve tools here",
    });
    const events = await collect(s.runTurn("x"));
    const c = events.find((e) => e.type === "tool_cancelled") as Extract<
      TurnEvent,
      { type: "tool_cancelled" }
    >;
    assert.equal(c.reason, "no one can approve tools here");
  });

  test("refuseApprovals denies the pending approval and refuses later ones; the turn finishes", async () => {
    const { s } = session([
      () => toolCalls({ id: "b1", name: "Bash", input: {} }),
      () => toolCalls({ id: "b2", name: "Bash", input: {} }),
      () => text("gave up"),
    ]);
    const events = await collect(s.runTurn("x"), (e) => {
      if (e.type === "tool_requested" && e.callId === "b1") s.refuseApprovals("stdin closed");
    });
    const cancelled = events.filter((e) => e.type === "tool_cancelled") as Array<
      Extract<TurnEvent, { type: "tool_cancelled" }>
    >;
    assert.deepEqual(
      cancelled.map((c) => [c.callId, c.reason]),
      [
        ["b1", "stdin closed"],
        ["b2", "stdin closed"],
      ],
    );
    assert.ok(!events.some((e) => e.type === "tool_running"));
    assert.equal((events.at(-1) as { reason: string }).reason, "completed");
    assertConsistent(s.history);
  });

  test("a call id the model repeats gets an id of its own, within a response and across the turn", async () => {
    const { s, provider } = session(
      [
        () =>
          toolCalls({ id: "c", name: "Echo", input: { v: 1 } }, { id: "c", name: "Echo", input: { v: 2 } }),
        () => toolCalls({ id: "c", name: "Echo", input: { v: 3 } }),
        () => text("ok"),
      ],
      { policy: new ApprovalPolicy({ mode: "yolo" }) },
    );
    const events = await collect(s.runTurn("x"));
    const results = events.filter((e) => e.type === "tool_result") as Array<
      Extract<TurnEvent, { type: "tool_result" }>
    >;
    assert.deepEqual(
      results.map((r) => [r.callId, r.output]),
      [
        ["c", "echo:1"],
        ["c_2", "echo:2"],
        ["c_3", "echo:3"],
      ],
    );
    assert.deepEqual(
      provider.requests[1]!.messages.at(-1)!.content.map((b) => (b as { toolUseId: string }).toolUseId),
      ["c", "c_2"],
    );
    assertConsistent(s.history);
  });
});
