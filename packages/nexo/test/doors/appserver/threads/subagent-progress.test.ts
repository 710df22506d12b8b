/**
 * The `subagent/progress` throttle on a mocked clock: the first change goes out at once, later
 * ones at most one snapshot per interval with the newest state, nothing when nothing changed, and
 * `close()` sends what is pending at once (the turn is ending) and leaves no timer behind.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import { SubAgentProgressTracker } from "../../../../src/doors/appserver/threads/subagent-progress.js";
import type { TurnEvent } from "../../../../src/engine/events.js";

type ProgressEvent = Extract<TurnEvent, { type: "subagent_progress" }>;

const event = (sessionId: string, changes: Partial<ProgressEvent> = {}): ProgressEvent => ({
  type: "subagent_progress",
  turnId: "turn_1",
  callId: "call_1",
  sessionId,
  label: `label ${sessionId}`,
  depth: 1,
  inputTokens: 0,
  outputTokens: 0,
  completed: false,
  ...changes,
});

describe("subagent/progress snapshots", () => {
  beforeEach(() => mock.timers.enable({ apis: ["setTimeout", "Date"], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  test("throttled to one full snapshot per interval, the pending one flushed by close()", () => {
    const sent: Array<{ method: string; params: unknown }> = [];
    const tracker = new SubAgentProgressTracker("thread_1", "turn_1", ((method: string, params: unknown) =>
      sent.push({ method, params })) as never);
    tracker.update(event("a"));
    assert.equal(sent.length, 1, "the first change goes out at once");
    tracker.update(event("a", { currentTool: "Read" }));
    tracker.update(event("b"));
    tracker.update(event("a", { inputTokens: 10, outputTokens: 5 }));
    assert.equal(sent.length, 1, "later changes wait for the interval");
    mock.timers.tick(199);
    assert.equal(sent.length, 1);
    mock.timers.tick(1);
    assert.equal(sent.length, 2);
    assert.deepEqual(sent[1], {
      method: "subagent/progress",
      params: {
        threadId: "thread_1",
        turnId: "turn_1",
        entries: [
          { label: "label a", inputTokens: 10, outputTokens: 5, isCompleted: false },
          { label: "label b", inputTokens: 0, outputTokens: 0, isCompleted: false },
        ],
      },
    });
    mock.timers.tick(1000);
    assert.equal(sent.length, 2, "nothing changed, nothing sent");

    tracker.update(event("b", { currentTool: "Grep" }));
    assert.equal(sent.length, 3, "a change after a quiet interval goes out at once");
    tracker.update(event("b", { completed: true, inputTokens: 3, outputTokens: 1 }));
    assert.equal(sent.length, 3);
    tracker.close();
    assert.equal(sent.length, 4, "close() sends the pending snapshot at once");
    assert.deepEqual((sent[3]!.params as { entries: unknown[] }).entries[1], {
      label: "label b",
      inputTokens: 3,
      outputTokens: 1,
      isCompleted: true,
    });
    mock.timers.tick(1000);
    tracker.close();
    assert.equal(sent.length, 4, "no timer left, nothing sent twice");
  });

  test("a turn that ends with a sub-agent still running (cancelled) shows it completed", () => {
    const sent: Array<{ method: string; params: unknown }> = [];
    const tracker = new SubAgentProgressTracker("thread_1", "turn_1", ((method: string, params: unknown) =>
      sent.push({ method, params })) as never);
    tracker.update(event("a", { currentTool: "Bash", inputTokens: 4, outputTokens: 2 }));
    assert.equal(sent.length, 1);
    tracker.close();
    assert.equal(sent.length, 2);
    assert.deepEqual((sent[1]!.params as { entries: unknown[] }).entries, [
      { label: "label a", inputTokens: 4, outputTokens: 2, isCompleted: true },
    ]);
  });
});
