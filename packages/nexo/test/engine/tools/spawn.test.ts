import assert from "node:assert/strict";
import { test } from "node:test";
import { ApprovalPolicy } from "../../../src/engine/approvals.js";
import { createAgentSession } from "../../../src/engine/assemble.js";
import type { TurnEvent } from "../../../src/engine/events.js";
import { AgentSession } from "../../../src/engine/session.js";
import { SPAWN_APPROVAL_REFUSAL, spawnTool } from "../../../src/engine/tools/spawn.js";
import type { SubAgentHomes, Tool } from "../../../src/engine/types.js";
import { collect, PlaybackProvider, SimpleToolHost, text, tool, toolCalls } from "../../helpers/engine.js";

test("Spawn runs a sub-agent whose stream never leaks into the parent's, only where it stands", async () => {
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
  // Only where the sub-agent stands comes out (the name of the tool it runs, no text, no output).
  const json = JSON.stringify(events.filter((e) => e.type !== "subagent_progress"));
  assert.doesNotMatch(json, /inner narration|inner tool output|Lookup/);
  assert.doesNotMatch(JSON.stringify(events), /inner narration|inner tool output/);
  assert.ok(events.some((e) => e.type === "subagent_progress" && e.currentTool === "Lookup"));
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

test("with a subAgents hook, sub-agents (nested ones too) get kept sessions and the turn reports them", async () => {
  const provider = new PlaybackProvider([
    () => toolCalls({ id: "p1", name: "Spawn", input: { task: "first task", description: "one" } }),
    () => toolCalls({ id: "c1", name: "Spawn", input: { task: "second task" } }),
    () => text("grandchild answer"),
    () => text("child answer"),
    () => text("parent done"),
  ]);
  const appended: Array<{ sessionId: string; role: string }> = [];
  const asked: Array<Parameters<SubAgentHomes>[0]> = [];
  const parent = createAgentSession({
    sessionId: "parent",
    agentId: "a",
    provider,
    model: "m",
    maxTokens: 100,
    maxTurns: 4,
    workspace: "/tmp",
    mode: "yolo",
    sink: { append: (sessionId, message) => void appended.push({ sessionId, role: message.role }) },
    subAgents: (start) => {
      asked.push(start);
      return `child-${asked.length}`;
    },
  });
  const events = await collect(parent.runTurn("delegate"));
  assert.deepEqual(
    asked.map((a) => [a.parentSessionId, a.callId, a.depth, a.task, a.description]),
    [
      ["parent", "p1", 1, "first task", "one"],
      ["child-1", "c1", 2, "second task", undefined],
    ],
  );
  const started = events.filter((e) => e.type === "subagent_started") as Array<
    Extract<TurnEvent, { type: "subagent_started" }>
  >;
  assert.deepEqual(
    started.map((e) => [e.callId, e.sessionId, e.parentSessionId, e.depth]),
    [
      ["p1", "child-1", "parent", 1],
      ["p1", "child-2", "child-1", 2],
    ],
  );
  for (const id of ["child-1", "child-2"])
    assert.ok(
      appended.some((a) => a.sessionId === id && a.role === "assistant"),
      `${id} kept its messages`,
    );
  assert.equal((events.at(-1) as Extract<TurnEvent, { type: "turn_end" }>).reply, "parent done");
  // Where each sub-agent stands, as it changes, the nested one's too, all under the turn's call p1.
  const progress = events.filter((e) => e.type === "subagent_progress") as Array<
    Extract<TurnEvent, { type: "subagent_progress" }>
  >;
  assert.ok(progress.every((e) => e.callId === "p1" && e.turnId === events[0]!.turnId));
  assert.deepEqual(
    progress.map((e) => [
      e.sessionId,
      e.label,
      e.depth,
      e.currentTool ?? "-",
      e.inputTokens,
      e.outputTokens,
      e.completed,
    ]),
    [
      ["child-1", "one", 1, "-", 0, 0, false],
      ["child-1", "one", 1, "-", 10, 5, false],
      ["child-1", "one", 1, "Spawn", 10, 5, false],
      ["child-2", "second task", 2, "-", 0, 0, false],
      ["child-2", "second task", 2, "-", 10, 5, false],
      ["child-2", "second task", 2, "-", 10, 5, true],
      ["child-1", "one", 1, "-", 10, 5, false],
      ["child-1", "one", 1, "-", 20, 10, false],
      ["child-1", "one", 1, "-", 20, 10, true],
    ],
  );
});
