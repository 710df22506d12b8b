import assert from "node:assert/strict";
import { test } from "node:test";
import { ApprovalPolicy } from "../../../src/engine/approvals.js";
import type { TurnEvent } from "../../../src/engine/events.js";
import { AgentSession } from "../../../src/engine/session.js";
import { SPAWN_APPROVAL_REFUSAL, spawnTool } from "../../../src/engine/tools/spawn.js";
import type { Tool } from "../../../src/engine/types.js";
import { collect, PlaybackProvider, SimpleToolHost, text, tool, toolCalls } from "../../helpers/engine.js";

test("Spawn runs a sub-agent whose stream never leaks into the parent's", async () => {
  const secret = tool("Lookup", "info", async () => ({ output: "inner tool output" }));
  const risky = tool("Danger", "exec", async () => ({ output: "should not run" }));
  const subProvider = new PlaybackProvider([
    () => [
      { type: "text_delta", text: "inner narration" },
      ...toolCalls({ id: "s1", name: "Lookup", input: {} }, { id: "s2", name: "Danger", input: {} }),
    ],
    () => text("sub answer: 42"),
  ]);
  const parentPolicy = new ApprovalPolicy({ mode: "auto_edit" });
  const tools: Tool[] = [secret, risky];
  const host = new SimpleToolHost(tools);
  const spawn = spawnTool({
    createSession: (ctx, depth) =>
      new AgentSession({
        agentId: ctx.agentId,
        provider: subProvider,
        model: "m",
        maxTokens: 100,
        maxTurns: 4,
        tools: host,
        workspace: ctx.workspace,
        policy: new ApprovalPolicy({ mode: parentPolicy.mode, grants: parentPolicy.grants }),
        approvalsUnavailable: SPAWN_APPROVAL_REFUSAL,
        sessionId: `sub-${depth}`,
      }),
  });
  const parentProvider = new PlaybackProvider([
    () => toolCalls({ id: "p1", name: "Spawn", input: { task: "find the answer" } }),
    () => text("the sub-agent says 42"),
  ]);
  const parent = new AgentSession({
    agentId: "a",
    provider: parentProvider,
    model: "m",
    maxTokens: 100,
    maxTurns: 4,
    tools: new SimpleToolHost([spawn, ...tools]),
    workspace: "/tmp",
    policy: new ApprovalPolicy({ mode: "yolo" }),
  });
  const events = await collect(parent.runTurn("ask a sub-agent"));
  const json = JSON.stringify(events);
  assert.doesNotMatch(json, /inner narration|inner tool output|Lookup/);
  const results = events.filter((e) => e.type === "tool_result") as Array<
    Extract<TurnEvent, { type: "tool_result" }>
  >;
  assert.equal(results.length, 1);
  assert.equal(results[0]!.output, "sub answer: 42");
  assert.equal(results[0]!.metadata?.tool_calls, 1);
  // Inside the sub-agent, Danger (exec) needed approval and was refused, Lookup (info) ran.
  const subResults = subProvider.requests[1]!.messages.at(-1)!.content as Array<{
    toolUseId: string;
    content: string;
  }>;
  assert.equal(subResults.find((r) => r.toolUseId === "s2")!.content, SPAWN_APPROVAL_REFUSAL);
  assert.equal(subResults.find((r) => r.toolUseId === "s1")!.content, "inner tool output");
});

test("Spawn refuses to nest deeper than allowed", async () => {
  const spawn = spawnTool({ createSession: () => assert.fail("must not create"), maxDepth: 1, depth: 1 });
  const out = await spawn.execute(
    { task: "x" },
    {
      signal: new AbortController().signal,
      sessionId: "s",
      agentId: "a",
      callId: "c",
      workspace: "/tmp",
      unconfined: false,
    },
  );
  assert.equal(out.isError, true);
  assert.match(out.output, /at most 1 levels/);
});
