import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TurnProjector } from "../../../../src/doors/appserver/threads/projection.js";
import type { TurnEvent } from "../../../../src/engine/events.js";

const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };

function project(events: TurnEvent[]) {
  const sent: Array<{ method: string; params: Record<string, unknown> }> = [];
  const projector = new TurnProjector(
    { id: "turn_1", threadId: "t1", status: "running", startedAt: new Date().toISOString(), items: [] },
    "/ws",
    (method, params) => sent.push({ method, params: params as Record<string, unknown> }),
  );
  for (const event of events) projector.event(event);
  return { sent, projector };
}

const requested = (callId: string, name: string, args: Record<string, unknown>): TurnEvent => ({
  type: "tool_requested",
  turnId: "x",
  callId,
  name,
  source: { kind: "builtin" },
  category: name === "Bash" ? "exec" : "edit",
  args,
  description: name,
  needsApproval: false,
});

describe("TurnProjector over the engine's typed events", () => {
  test("a command run: output deltas as they come, then exit code, directory and the engine's duration", () => {
    const { sent, projector } = project([
      requested("c1", "Bash", { command: "make" }),
      { type: "tool_running", turnId: "x", callId: "c1", name: "Bash" },
      { type: "tool_output_delta", turnId: "x", callId: "c1", text: "building\n" },
      { type: "tool_output_delta", turnId: "x", callId: "c1", text: "done\n" },
      {
        type: "tool_result",
        turnId: "x",
        callId: "c1",
        name: "Bash",
        status: "error",
        output: "building\ndone\n[exit code 2]",
        outputType: "text",
        durationMs: 1234.4,
        detail: {
          kind: "command",
          command: "make",
          cwd: "/ws/sub",
          exitCode: 2,
          signal: null,
          timedOut: false,
          cancelled: false,
          outputBytes: 14,
          truncatedBytes: 0,
        },
      },
      { type: "turn_end", turnId: "x", reason: "completed", usage },
    ]);
    const command = projector.turn.items.find((item) => item.type === "commandExecution")!;
    const deltas = sent.filter((m) => m.method === "item/commandExecution/outputDelta");
    assert.deepEqual(
      deltas.map((m) => [m.params.itemId, m.params.delta]),
      [
        [command.id, "building\n"],
        [command.id, "done\n"],
      ],
    );
    assert.equal(command.status, "completed");
    assert.deepEqual(command.payload, {
      command: "make",
      workingDirectory: "/ws/sub",
      source: "host",
      status: "failed",
      callId: "c1",
      aggregatedOutput: "building\ndone\n[exit code 2]",
      exitCode: 2,
      durationMs: 1234,
    });
  });

  test("argument fragments stream into the toolCall item that the whole request then completes", () => {
    const fragment = (delta: string): TurnEvent => ({
      type: "tool_args_delta",
      turnId: "x",
      callId: "r1",
      name: "Read",
      delta,
    });
    const { sent, projector } = project([
      fragment('{"file_'),
      fragment('path":"a.txt"}'),
      requested("r1", "Read", { file_path: "a.txt" }),
    ]);
    const toolCalls = projector.turn.items.filter((item) => item.type === "toolCall");
    assert.equal(toolCalls.length, 1, "one item for the call, not one per event");
    const [toolCall] = toolCalls;
    assert.equal(toolCall!.status, "completed");
    assert.deepEqual(toolCall!.payload, {
      toolName: "Read",
      arguments: { file_path: "a.txt" },
      callId: "r1",
    });
    assert.deepEqual(
      sent.map((m) => m.method),
      ["item/started", "item/toolCall/argumentsDelta", "item/toolCall/argumentsDelta", "item/completed"],
    );
    const deltas = sent.filter((m) => m.method === "item/toolCall/argumentsDelta").map((m) => m.params);
    assert.deepEqual(deltas[0], {
      threadId: "t1",
      turnId: "turn_1",
      itemId: toolCall!.id,
      deltaKind: "toolCallArguments",
      delta: '{"file_',
      toolName: "Read",
      callId: "r1",
    });
    assert.deepEqual(deltas[1], {
      threadId: "t1",
      turnId: "turn_1",
      itemId: toolCall!.id,
      deltaKind: "toolCallArguments",
      delta: 'path":"a.txt"}',
    });
  });

  test("a Write's file change comes from its typed result", () => {
    const diff = "--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1,1 @@\n+hi\n";
    const { projector } = project([
      requested("w1", "Write", { file_path: "new.txt", content: "hi\n" }),
      { type: "tool_running", turnId: "x", callId: "w1", name: "Write" },
      {
        type: "tool_result",
        turnId: "x",
        callId: "w1",
        name: "Write",
        status: "success",
        output: "Created new.txt (3 bytes)",
        outputType: "text",
        durationMs: 2,
        detail: { kind: "file_change", path: "/ws/new.txt", change: "created", diff },
      },
    ]);
    const change = projector.turn.items.find((item) => item.type === "fileChange")!;
    assert.deepEqual(change.payload, {
      callId: "w1",
      changes: [{ path: "new.txt", kind: "add", diff }],
      status: "completed",
    });
  });
});
