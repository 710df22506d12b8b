/**
 * How a turn writes its transcript: in groups (one store transaction each) rather than one write
 * per message — the user message before the model is asked (unless the caller keeps it durably
 * itself), the tool calls before they run, their results before the model is asked again, the rest
 * before `turn_end` — with a real store.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { ApprovalPolicy } from "../../src/engine/approvals.js";
import { AgentSession } from "../../src/engine/session.js";
import type { PendingMessage, TranscriptSink } from "../../src/engine/session-types.js";
import { storeTranscriptSink } from "../../src/engine/transcript-sink.js";
import type { LlmProvider } from "../../src/engine/types.js";
import { Store } from "../../src/store/index.js";
import {
  collect,
  PlaybackProvider,
  SimpleToolHost,
  type Step,
  text,
  tool,
  toolCalls,
} from "../helpers/engine.js";

let dir: string;
let store: Store;
let sessionId: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "nexo-transcript-writes-"));
  store = Store.open(join(dir, "nexo.db"));
  sessionId = store.sessions.create({ agentId: "a1" }).id;
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The stored entries as `role:block types`. */
function stored(): string[] {
  return store.transcripts
    .entries(sessionId)
    .map((e) => `${e.role}:${e.content.map((b) => b.type).join("+")}`);
}

/** The store's sink, recording the role of each message of each write it is given. */
function recordingSink(): { sink: TranscriptSink; writes: string[][] } {
  const inner = storeTranscriptSink(store.transcripts);
  const writes: string[][] = [];
  return {
    writes,
    sink: {
      append: (id, message, meta) => {
        writes.push([message.role]);
        return inner.append(id, message, meta);
      },
      appendMany: (id, messages: readonly PendingMessage[]) => {
        writes.push(messages.map((m) => m.message.role));
        return inner.appendMany!(id, messages);
      },
    },
  };
}

function session(
  steps: Step[],
  sink: TranscriptSink,
  tools = [tool("Echo", "info", async () => ({ output: "echoed" }))],
  provider: LlmProvider = new PlaybackProvider(steps),
) {
  return new AgentSession({
    sessionId,
    agentId: "a1",
    provider,
    model: "m",
    maxTokens: 100,
    maxTurns: 4,
    tools: new SimpleToolHost(tools),
    policy: new ApprovalPolicy({ mode: "yolo" }),
    workspace: "/tmp",
    sink,
  });
}

describe("a turn's transcript writes", () => {
  test("a one-tool turn: the user message, the call before it runs, its result, the answer before turn_end", async () => {
    const { sink, writes } = recordingSink();
    const seenByTool: string[][] = [];
    const echo = tool("Echo", "info", async () => {
      seenByTool.push(stored());
      return { output: "echoed" };
    });
    const s = session([() => toolCalls({ id: "c1", name: "Echo", input: {} }), () => text("done")], sink, [
      echo,
    ]);
    let atEnd: string[] | undefined;
    await collect(s.runTurn("go"), (e) => {
      if (e.type === "turn_end") atEnd = stored();
    });
    assert.deepEqual(writes, [["user"], ["assistant"], ["user"], ["assistant"]]);
    assert.deepEqual(
      seenByTool,
      [["user:text", "assistant:tool_use"]],
      "the call is kept before the tool runs",
    );
    assert.deepEqual(atEnd, ["user:text", "assistant:tool_use", "user:tool_result", "assistant:text"]);
  });

  test("input the caller keeps durably (the daemon's inbox) is written with the first group", async () => {
    const { sink, writes } = recordingSink();
    const s = session([() => text("hello")], sink);
    await collect(s.runTurn({ content: [{ type: "text", text: "hi" }], durable: true }));
    assert.deepEqual(writes, [["user", "assistant"]], "a plain exchange is one write");
    assert.deepEqual(stored(), ["user:text", "assistant:text"]);
  });

  test("with durable input, a one-tool turn is three writes: the message with the call, the result, the answer", async () => {
    const { sink, writes } = recordingSink();
    const s = session([() => toolCalls({ id: "c1", name: "Echo", input: {} }), () => text("done")], sink);
    await collect(s.runTurn({ content: [{ type: "text", text: "go" }], durable: true }));
    assert.deepEqual(writes, [["user", "assistant"], ["user"], ["assistant"]]);
  });

  test("a turn whose model fails mid-answer keeps the user message and the partial answer", async () => {
    const { sink, writes } = recordingSink();
    const failing: LlmProvider = {
      id: "failing",
      async *stream() {
        yield { type: "text_delta", text: "half an answer" };
        throw new Error("connection reset");
      },
    };
    const s = session([], sink, [], failing);
    const events = await collect(s.runTurn({ content: [{ type: "text", text: "hi" }], durable: true }));
    assert.equal(events.find((e) => e.type === "error")?.type, "error");
    assert.deepEqual(writes, [["user", "assistant"]]);
    assert.deepEqual(stored(), ["user:text", "assistant:text"]);
    assert.equal(store.transcripts.entries(sessionId)[1]?.text, "half an answer");
  });

  test("a write the store refuses ends the turn with an error, and nothing is half-written", async () => {
    const { sink } = recordingSink();
    const s = new AgentSession({
      sessionId: "no-such-session",
      agentId: "a1",
      provider: new PlaybackProvider([() => text("hello")]),
      model: "m",
      maxTokens: 100,
      maxTurns: 4,
      tools: new SimpleToolHost([]),
      workspace: "/tmp",
      sink,
    });
    const events = await collect(s.runTurn({ content: [{ type: "text", text: "hi" }], durable: true }));
    const end = events.at(-1);
    assert.equal(end?.type, "turn_end");
    assert.equal(end?.type === "turn_end" ? end.reason : undefined, "error");
    const error = events.find((e) => e.type === "error");
    assert.match(error?.type === "error" ? error.message : "", /does not exist/);
    assert.equal(store.transcripts.count("no-such-session"), 0);
  });
});
