/**
 * A history a killed process left — a tool call stored, its result never — is completed before the
 * next model request (both vendors' APIs refuse a call without a result), and a channel message
 * whose turn was cut between a tool call and the final answer counts as not answered, so the
 * inbox's replay finishes it. Real SQLite files; the provider records what it is sent.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { INTERRUPTED_TOOL_RESULT, withToolResults } from "../../src/engine/history-repair.js";
import { SessionService } from "../../src/engine/sessions/service.js";
import type { ChatMessage } from "../../src/engine/types.js";
import { Store } from "../../src/store/index.js";
import { collect, PlaybackProvider, SimpleToolHost, text, tool } from "../helpers/engine.js";

const say = (role: ChatMessage["role"], words: string): ChatMessage => ({
  role,
  content: [{ type: "text", text: words }],
});
const call = (id: string): ChatMessage["content"][number] => ({
  type: "tool_use",
  id,
  name: "Look",
  input: { path: id },
});
const result = (id: string): ChatMessage["content"][number] => ({
  type: "tool_result",
  toolUseId: id,
  content: `looked at ${id}`,
});
const interrupted = (id: string): ChatMessage["content"][number] => ({
  type: "tool_result",
  toolUseId: id,
  content: INTERRUPTED_TOOL_RESULT,
  isError: true,
});

describe("withToolResults", () => {
  test("a complete history is returned as it is", () => {
    const history: ChatMessage[] = [
      say("user", "look"),
      { role: "assistant", content: [call("a"), call("b")] },
      { role: "user", content: [result("b"), result("a")] },
      say("assistant", "done"),
    ];
    assert.equal(withToolResults(history), history);
    assert.deepEqual(withToolResults([]), []);
  });

  test("calls at the end, calls before a plain user message, calls with some results", () => {
    assert.deepEqual(withToolResults([say("user", "look"), { role: "assistant", content: [call("a")] }]), [
      say("user", "look"),
      { role: "assistant", content: [call("a")] },
      { role: "user", content: [interrupted("a")] },
    ]);
    assert.deepEqual(
      withToolResults([
        say("user", "look"),
        { role: "assistant", content: [say("assistant", "checking").content[0]!, call("a"), call("b")] },
        { role: "user", content: [result("a")] },
        say("user", "are you there?"),
        { role: "assistant", content: [call("c")] },
        say("user", "hello?"),
        say("assistant", "sorry"),
      ]),
      [
        say("user", "look"),
        { role: "assistant", content: [say("assistant", "checking").content[0]!, call("a"), call("b")] },
        { role: "user", content: [result("a"), interrupted("b")] },
        say("user", "are you there?"),
        { role: "assistant", content: [call("c")] },
        { role: "user", content: [interrupted("c"), { type: "text", text: "hello?" }] },
        say("assistant", "sorry"),
      ],
    );
  });
});

describe("a conversation cut while a tool ran", () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "nexo-history-repair-"));
    store = Store.open(join(dir, "nexo.db"));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the next turn's request gives the stored call a result; the message counts as unanswered", async () => {
    const record = store.sessions.create({ agentId: "a1" });
    // What a kill during the tool's run leaves: the message and the call, no result, no answer.
    store.transcripts.append(record.id, { ...say("user", "look at a"), messageId: "m1" });
    store.transcripts.append(record.id, { role: "assistant", content: [call("a")] });
    assert.equal(store.transcripts.messageState(record.id, "m1"), "unanswered");

    // Reopened (a restart): the turn the replay runs answers from the completed history.
    store.close();
    store = Store.open(join(dir, "nexo.db"));
    const sessions = new SessionService(store);
    const provider = new PlaybackProvider([() => text("I could not finish looking at a.")]);
    const session = sessions.open(store.sessions.get(record.id)!, {
      agentId: "a1",
      provider,
      model: "m1",
      maxTokens: 100,
      maxTurns: 4,
      workspace: dir,
      registry: new SimpleToolHost([tool("Look", "info", async () => ({ output: "looked" }))]),
    });
    await collect(session.runTurn({ content: [], alreadyStored: true }));
    const sent = provider.requests[0]!.messages;
    assert.deepEqual(sent.at(-1), { role: "user", content: [interrupted("a")] });
    assert.equal(store.transcripts.messageState(record.id, "m1"), "answered");
  });

  test("an answer after the tool's result counts as answered; a text reply alone does too", () => {
    const record = store.sessions.create({ agentId: "a1" });
    store.transcripts.append(record.id, { ...say("user", "look"), messageId: "m2" });
    store.transcripts.append(record.id, { role: "assistant", content: [call("b")] });
    store.transcripts.append(record.id, { role: "user", content: [result("b")] });
    assert.equal(store.transcripts.messageState(record.id, "m2"), "unanswered");
    store.transcripts.append(record.id, say("assistant", "b looks fine"));
    assert.equal(store.transcripts.messageState(record.id, "m2"), "answered");
    store.transcripts.append(record.id, { ...say("user", "thanks"), messageId: "m3" });
    assert.equal(store.transcripts.messageState(record.id, "m3"), "unanswered");
    store.transcripts.append(record.id, say("assistant", "you are welcome"));
    assert.equal(store.transcripts.messageState(record.id, "m3"), "answered");
    assert.equal(store.transcripts.messageState(record.id, "m4"), "absent");
  });
});
