import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { releaseController, takeController } from "../../src/engine/abort-pool.js";
import { ApprovalPolicy } from "../../src/engine/approvals.js";
import { AgentSession } from "../../src/engine/session.js";
import type { ToolContext } from "../../src/engine/types.js";
import { collect, PlaybackProvider, SimpleToolHost, text, tool, toolCalls } from "../helpers/engine.js";

describe("turn abort controllers", () => {
  test("only a controller as good as new is handed out again", () => {
    const clean = takeController();
    releaseController(clean);
    assert.equal(takeController(), clean, "an untouched controller is reused");

    const aborted = takeController();
    aborted.abort(new Error("stop"));
    releaseController(aborted);
    assert.notEqual(takeController(), aborted, "an aborted one is not");

    const listened = takeController();
    listened.signal.addEventListener("abort", () => undefined);
    releaseController(listened);
    assert.notEqual(takeController(), listened, "one somebody still listens on is not");

    const combined = takeController();
    const any = AbortSignal.any([combined.signal]);
    releaseController(combined);
    assert.notEqual(takeController(), combined, "one AbortSignal.any depends on is not");
    assert.equal(any.aborted, false);

    const marked = takeController();
    (marked.signal as unknown as Record<string, unknown>).owner = "a tool that kept it";
    releaseController(marked);
    assert.notEqual(takeController(), marked, "one somebody added a property to is not");
  });

  test("a stopped turn's signal never reaches a later turn, and a finished turn cannot stop the next", async () => {
    const signals: AbortSignal[] = [];
    const grab = tool("Grab", "info", async (_args, ctx: ToolContext) => {
      signals.push(ctx.signal);
      if (signals.length === 1)
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
      return { output: "held" };
    });
    const session = new AgentSession({
      agentId: "a1",
      provider: new PlaybackProvider([
        () => toolCalls({ id: "c1", name: "Grab", input: {} }),
        () => toolCalls({ id: "c2", name: "Grab", input: {} }),
        () => text("done"),
      ]),
      model: "m",
      maxTokens: 100,
      maxTurns: 4,
      tools: new SimpleToolHost([grab]),
      workspace: "/tmp",
      policy: new ApprovalPolicy({ mode: "yolo" }),
    });
    const first = collect(session.runTurn("one"));
    while (signals.length === 0) await new Promise((resolve) => setImmediate(resolve));
    session.cancel();
    const firstEnd = (await first).at(-1);
    assert.equal(firstEnd?.type === "turn_end" && firstEnd.reason, "cancelled");
    assert.equal(signals[0]!.aborted, true);

    const second = await collect(session.runTurn("two"));
    const end = second.at(-1);
    assert.equal(end?.type, "turn_end");
    assert.equal(end?.type === "turn_end" && end.reason, "completed");
    assert.notEqual(signals[1], signals[0], "the stopped turn's signal was not handed out again");
    assert.equal(signals[1]!.aborted, false);
    // The finished turn is gone: stopping "it" stops nothing.
    assert.equal(session.cancel(), false);
    assert.equal(signals[1]!.aborted, false);
  });
});
