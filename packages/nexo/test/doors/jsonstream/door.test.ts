/**
 * The json-stream door end to end: the real `nexo agent --json-stream` process against the mock
 * LLM server speaking Anthropic's streaming format, asserting both the events a UI sees and what
 * the model was sent.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MockLlmServer, type MockScriptInput } from "@nexo/mock-llm";
import { JsonStreamClient, types } from "../../helpers/jsonstream-client.js";

let mock: MockLlmServer;

before(async () => {
  mock = new MockLlmServer();
  await mock.start();
});
after(async () => {
  await mock.close();
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-js-ws-"));
  writeFileSync(join(dir, "notes.txt"), "first line\nsecond line\n");
  return dir;
}

/** A client on the anthropic provider pointed at the mock, with `script` loaded. */
async function start(
  script: MockScriptInput,
  args: string[] = [],
  extra: { stateDir?: string; ws?: string } = {},
) {
  mock.reset(script);
  const ws = extra.ws ?? workspace();
  const client = new JsonStreamClient(
    ["--provider", "anthropic", "--model", "claude-test", "--workspace", ws, ...args],
    {
      env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: mock.url },
      ...(extra.stateDir ? { stateDir: extra.stateDir } : {}),
    },
  );
  const ready = await client.waitFor((e) => e.type === "ready");
  return { client, ws, ready };
}

/** The messages array the model received in the nth request (1-based). */
function sent(n: number): Array<{ role: string; content: unknown }> {
  const requests = mock.requests().filter((r) => r.path === "/v1/messages");
  return (requests[n - 1]!.body as { messages: Array<{ role: string; content: unknown }> }).messages;
}

const toolResults = (messages: Array<{ role: string; content: unknown }>) =>
  (
    messages.at(-1)!.content as Array<{
      type: string;
      tool_use_id: string;
      content: unknown;
      is_error?: boolean;
    }>
  ).filter((b) => b.type === "tool_result");

describe("json-stream door", () => {
  test("ready comes first, then a text turn with the usage of that message", async () => {
    const { client, ready } = await start([
      { text: "Hello there, friend.", usage: { input_tokens: 11, output_tokens: 4 } },
      { text: "Second.", usage: { input_tokens: 20, output_tokens: 2 } },
    ]);
    assert.equal(client.events[0]!.type, "ready");
    assert.equal(typeof ready.session_id, "string");
    assert.equal(typeof ready.version, "string");
    assert.deepEqual((ready.capabilities as { tool_approval: boolean }).tool_approval, true);
    const events = await client.turn("m1", "hi");
    assert.equal(events[0]!.type, "stream_start");
    assert.equal(
      events
        .filter((e) => e.type === "text_delta")
        .map((e) => e.text)
        .join(""),
      "Hello there, friend.",
    );
    assert.deepEqual(events.at(-1), {
      type: "stream_end",
      msg_id: "m1",
      usage: { input_tokens: 11, output_tokens: 4 },
    });
    const second = await client.turn("m2", "again");
    assert.deepEqual(second.at(-1)!.usage, { input_tokens: 20, output_tokens: 2 });
    assert.deepEqual(
      sent(2).map((m) => m.role),
      ["user", "assistant", "user"],
    );
    client.end();
    assert.equal((await client.exited).code, 0);
  });

  test("thinking is streamed before the answer", async () => {
    const { client } = await start([{ thinking: "Let me consider.", text: "Answer." }]);
    const events = await client.turn("m1", "think");
    const order = types(events).filter((t) => t === "thinking" || t === "text_delta");
    assert.equal(order[0], "thinking");
    assert.equal(
      events
        .filter((e) => e.type === "thinking")
        .map((e) => e.text)
        .join(""),
      "Let me consider.",
    );
    client.end();
  });

  test("approve: tool_request with category and description, then running and result; the model gets the result", async () => {
    const { client, ws } = await start([
      { tool_calls: [{ id: "t1", name: "Write", input: { file_path: "hello.txt", content: "hi there" } }] },
      { text: "Done." },
    ]);
    client.send({ type: "message", msg_id: "m1", input: "create hello.txt" });
    const request = await client.waitFor((e) => e.type === "tool_request");
    assert.deepEqual(request.tool, {
      name: "Write",
      category: "edit",
      args: { file_path: "hello.txt", content: "hi there" },
      description: (request.tool as { description: string }).description,
    });
    assert.match((request.tool as { description: string }).description, /hello\.txt/);
    assert.equal(existsSync(join(ws, "hello.txt")), false, "nothing runs before approval");
    client.send({ type: "tool_approve", call_id: "t1", scope: "once" });
    await client.waitFor((e) => e.type === "stream_end");
    const t = types(client.events.filter((e) => e.msg_id === "m1"));
    assert.deepEqual(
      t.filter((x) => x.startsWith("tool_")),
      ["tool_request", "tool_running", "tool_result"],
    );
    assert.equal(readFileSync(join(ws, "hello.txt"), "utf8"), "hi there");
    const [result] = toolResults(sent(2));
    assert.equal(result!.tool_use_id, "t1");
    client.end();
  });

  test("deny: tool_cancelled with the reason, which reaches the model, and the conversation continues", async () => {
    const { client } = await start([
      { tool_calls: [{ id: "t1", name: "Bash", input: { command: "rm -rf /tmp/x" } }] },
      { text: "Understood, I will not." },
    ]);
    client.send({ type: "message", msg_id: "m1", input: "clean up" });
    await client.waitFor((e) => e.type === "tool_request");
    client.send({ type: "tool_deny", call_id: "t1", reason: "not on my machine" });
    const cancelled = await client.waitFor((e) => e.type === "tool_cancelled");
    assert.equal(cancelled.reason, "not on my machine");
    await client.waitFor((e) => e.type === "stream_end");
    const [result] = toolResults(sent(2));
    assert.match(JSON.stringify(result!.content), /not on my machine/);
    assert.equal(result!.is_error, true);
    client.end();
  });

  test("always: the category is allowed for the rest of the session", async () => {
    const { client } = await start([
      { tool_calls: [{ id: "t1", name: "Write", input: { file_path: "a.txt", content: "a" } }] },
      { text: "one" },
      {
        tool_calls: [
          { id: "t2", name: "Edit", input: { file_path: "a.txt", old_string: "a", new_string: "b" } },
        ],
      },
      { text: "two" },
    ]);
    client.send({ type: "message", msg_id: "m1", input: "write" });
    await client.waitFor((e) => e.type === "tool_request");
    client.send({ type: "tool_approve", call_id: "t1", scope: "always" });
    await client.waitFor((e) => e.type === "stream_end" && e.msg_id === "m1");
    const second = await client.turn("m2", "edit");
    assert.ok(!types(second).includes("tool_request"), "edit category was granted");
    const result = second.find((e) => e.type === "tool_result")!;
    assert.equal(result.output_type, "diff");
    assert.match(String((result.metadata as { file_path: string }).file_path), /a\.txt$/);
    client.end();
  });

  test("always for a command grants that program only, and the grant survives --resume", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "nexo-js-always-"));
    const bash = (id: string, command: string) => ({
      tool_calls: [{ id, name: "Bash", input: { command } }],
    });
    const first = await start(
      [
        bash("e1", "echo one"),
        { text: "one" },
        bash("e2", "echo two"),
        { text: "two" },
        bash("t1", "touch made"),
        { text: "three" },
        bash("e3", "echo four; touch sneaky"),
        { text: "four" },
      ],
      ["--session-id", "always-1"],
      { stateDir },
    );
    const { client, ws } = first;
    client.send({ type: "message", msg_id: "m1", input: "echo" });
    await client.waitFor((e) => e.type === "tool_request" && e.call_id === "e1");
    client.send({ type: "tool_approve", call_id: "e1", scope: "always" });
    await client.waitFor((e) => e.type === "stream_end" && e.msg_id === "m1");
    const second = await client.turn("m2", "echo again");
    assert.ok(!types(second).includes("tool_request"), "echo was granted for the session");
    assert.match(String(second.find((e) => e.type === "tool_result")!.output), /two/);
    client.send({ type: "message", msg_id: "m3", input: "touch" });
    const touch = await client.waitFor((e) => e.type === "tool_request" && e.msg_id === "m3");
    assert.equal(touch.call_id, "t1", "another program still asks");
    client.send({ type: "tool_deny", call_id: "t1", reason: "no" });
    await client.waitFor((e) => e.type === "stream_end" && e.msg_id === "m3");
    client.send({ type: "message", msg_id: "m4", input: "chain" });
    const chained = await client.waitFor((e) => e.type === "tool_request" && e.msg_id === "m4");
    assert.equal(chained.call_id, "e3", "a line that runs more than echo still asks");
    client.send({ type: "tool_deny", call_id: "e3", reason: "no" });
    await client.waitFor((e) => e.type === "stream_end" && e.msg_id === "m4");
    assert.equal(existsSync(join(ws, "made")), false);
    assert.equal(existsSync(join(ws, "sneaky")), false);
    client.end();
    assert.equal((await client.exited).code, 0);

    const resumed = await start([bash("e5", "echo five"), { text: "five" }], ["--resume", "always-1"], {
      stateDir,
      ws,
    });
    const fifth = await resumed.client.turn("m5", "echo once more");
    assert.ok(!types(fifth).includes("tool_request"), "the program grant was kept with the session");
    assert.match(String(fifth.find((e) => e.type === "tool_result")!.output), /five/);
    resumed.client.end();
  });

  test("modes: set_mode changes which categories ask, and announces config_changed", async () => {
    const { client } = await start([
      { tool_calls: [{ id: "r1", name: "Read", input: { file_path: "notes.txt" } }] },
      { text: "read" },
      {
        tool_calls: [
          { id: "w1", name: "Write", input: { file_path: "b.txt", content: "b" } },
          { id: "b1", name: "Bash", input: { command: "echo hi" } },
        ],
      },
      { text: "mixed" },
      { tool_calls: [{ id: "b2", name: "Bash", input: { command: "echo yolo" } }] },
      { text: "yolo" },
    ]);
    // default: even Read asks.
    client.send({ type: "message", msg_id: "m1", input: "read" });
    await client.waitFor((e) => e.type === "tool_request" && e.call_id === "r1");
    client.send({ type: "tool_approve", call_id: "r1" });
    await client.waitFor((e) => e.type === "stream_end" && e.msg_id === "m1");
    client.send({ type: "set_mode", mode: "auto_edit" });
    const changed = await client.waitFor((e) => e.type === "config_changed");
    assert.equal((changed.capabilities as { current_mode: string }).current_mode, "auto_edit");
    client.send({ type: "message", msg_id: "m2", input: "both" });
    const bashRequest = await client.waitFor((e) => e.type === "tool_request" && e.msg_id === "m2");
    assert.equal(bashRequest.call_id, "b1", "exec still asks under auto_edit, edit does not");
    client.send({ type: "tool_approve", call_id: "b1" });
    await client.waitFor((e) => e.type === "stream_end" && e.msg_id === "m2");
    client.send({ type: "set_mode", mode: "yolo" });
    await client.waitFor(
      (e) =>
        e.type === "config_changed" && (e.capabilities as { current_mode: string }).current_mode === "yolo",
    );
    const third = await client.turn("m3", "yolo");
    assert.ok(!types(third).includes("tool_request"));
    assert.match(String(third.find((e) => e.type === "tool_result")!.output), /yolo/);
    client.end();
  });

  test("parallel tool calls: several requests pending at once, answered independently", async () => {
    const { client } = await start([
      {
        tool_calls: [
          { id: "p1", name: "Read", input: { file_path: "notes.txt" } },
          { id: "p2", name: "Glob", input: { pattern: "*.txt" } },
        ],
      },
      { text: "both read" },
    ]);
    client.send({ type: "message", msg_id: "m1", input: "look" });
    await client.waitFor((e) => e.type === "tool_request" && e.call_id === "p1");
    await client.waitFor((e) => e.type === "tool_request" && e.call_id === "p2");
    client.send({ type: "tool_approve", call_id: "p2" });
    await client.waitFor((e) => e.type === "tool_result" && e.call_id === "p2");
    client.send({ type: "tool_deny", call_id: "p1", reason: "skip it" });
    await client.waitFor((e) => e.type === "stream_end");
    const results = toolResults(sent(2));
    assert.deepEqual(
      results.map((r) => r.tool_use_id),
      ["p1", "p2"],
    );
    assert.equal(results[0]!.is_error, true);
    client.end();
  });

  test("two tool calls sharing one id: each gets its own call_id, and an approval runs exactly what it named", async () => {
    const { client, ws } = await start([
      {
        tool_calls: [
          { id: "dup", name: "Bash", input: { command: "touch first" } },
          { id: "dup", name: "Bash", input: { command: "touch second" } },
        ],
      },
      { text: "done" },
    ]);
    client.send({ type: "message", msg_id: "m1", input: "two commands" });
    const first = await client.waitFor((e) => e.type === "tool_request");
    const second = await client.waitFor((e) => e.type === "tool_request" && e !== first);
    assert.equal(first.call_id, "dup");
    assert.notEqual(second.call_id, "dup", "the second call got an id of its own");
    assert.deepEqual((first.tool as { args: unknown }).args, { command: "touch first" });
    assert.deepEqual((second.tool as { args: unknown }).args, { command: "touch second" });
    client.send({ type: "tool_approve", call_id: "dup" });
    await client.waitFor((e) => e.type === "tool_result" && e.call_id === "dup");
    assert.equal(existsSync(join(ws, "first")), true);
    assert.equal(existsSync(join(ws, "second")), false, "approving dup ran only the call shown as dup");
    client.send({ type: "tool_deny", call_id: second.call_id, reason: "not that one" });
    await client.waitFor((e) => e.type === "stream_end");
    assert.equal(existsSync(join(ws, "second")), false);
    const uses = (sent(2).at(-2)!.content as Array<{ type: string; id?: string }>)
      .filter((b) => b.type === "tool_use")
      .map((b) => b.id);
    assert.deepEqual(
      toolResults(sent(2)).map((r) => r.tool_use_id),
      uses,
    );
    assert.equal(new Set(uses).size, 2, "the ids sent back to the model are unique");
    client.end();
  });

  test("files attached from outside the workspace are readable by Read, nothing else is, and writes stay confined", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "nexo-js-attach-"));
    const cache = mkdtempSync(join(tmpdir(), "nexo-js-uploads-"));
    const upload = join(cache, "report.txt");
    writeFileSync(upload, "the attached report\n");
    writeFileSync(join(cache, "other.txt"), "NOT ATTACHED\n");
    const read = (id: string, file_path: string) => ({ id, name: "Read", input: { file_path } });
    const first = await start(
      [
        {
          tool_calls: [
            read("r1", upload),
            read("r2", join(cache, "other.txt")),
            { id: "w1", name: "Write", input: { file_path: upload, content: "overwritten" } },
          ],
        },
        { text: "read it" },
      ],
      ["--auto-approve", "--session-id", "attach-1"],
      { stateDir },
    );
    const events = await first.client.turn("m1", "summarise the report", { files: [upload] });
    const result = (id: string) => events.find((e) => e.type === "tool_result" && e.call_id === id)!;
    assert.equal(result("r1").status, "success", JSON.stringify(result("r1")));
    assert.match(String(result("r1").output), /the attached report/);
    assert.equal(result("r2").status, "error");
    assert.doesNotMatch(String(result("r2").output), /NOT ATTACHED/);
    assert.equal(result("w1").status, "error");
    assert.equal(readFileSync(upload, "utf8"), "the attached report\n");
    assert.match(JSON.stringify(sent(1)), /report\.txt/, "the model is told where the attachment is");
    first.client.end();
    assert.equal((await first.client.exited).code, 0);

    // AionUi re-spawns with --resume (after a model switch, say): the attachment stays readable.
    const resumed = await start(
      [{ tool_calls: [read("r3", upload)] }, { text: "again" }],
      ["--auto-approve", "--resume", "attach-1"],
      {
        stateDir,
        ws: first.ws,
      },
    );
    const again = await resumed.client.turn("m2", "read it again");
    assert.match(String(again.find((e) => e.type === "tool_result")!.output), /the attached report/);
    resumed.client.end();
  });

  test("an unknown tool gets an error result and the model continues", async () => {
    const { client } = await start([
      { tool_calls: [{ id: "u1", name: "Teleport", input: {} }] },
      { text: "That tool does not exist." },
    ]);
    const events = await client.turn("m1", "teleport");
    const result = events.find((e) => e.type === "tool_result")!;
    assert.equal(result.status, "error");
    assert.match(String(result.output), /Unknown tool "Teleport"/);
    assert.ok(events.some((e) => e.type === "text_delta"));
    client.end();
  });

  test("401: provider_error, not retryable; the next message still works", async () => {
    const { client } = await start([{ status: 401, message: "invalid x-api-key" }, { text: "fine" }]);
    const events = await client.turn("m1", "hello");
    const error = events.find((e) => e.type === "error")!;
    assert.deepEqual((error.error as { code: string; retryable: boolean }).code, "provider_error");
    assert.equal((error.error as { retryable: boolean }).retryable, false);
    assert.equal(events.at(-1)!.type, "stream_end");
    const next = await client.turn("m2", "again");
    assert.ok(next.some((e) => e.type === "text_delta" && e.text === "fine"));
    client.end();
  });

  test("429 then success: a retry info, then the answer", async () => {
    const { client } = await start([{ status: 429, retry_after: 1 }, { text: "after the wait" }]);
    const events = await client.turn("m1", "hello");
    assert.ok(
      events.some((e) => e.type === "info" && /retrying/.test(String(e.message))),
      JSON.stringify(events),
    );
    assert.ok(!events.some((e) => e.type === "error"));
    assert.match(
      events
        .filter((e) => e.type === "text_delta")
        .map((e) => e.text)
        .join(""),
      /after the wait/,
    );
    client.end();
  });

  test("500 then success", async () => {
    const { client } = await start([{ status: 500 }, { text: "recovered" }]);
    const events = await client.turn("m1", "hello");
    assert.ok(!events.some((e) => e.type === "error"));
    assert.match(
      events
        .filter((e) => e.type === "text_delta")
        .map((e) => e.text)
        .join(""),
      /recovered/,
    );
    client.end();
  });

  test("stop during history compaction is a clean cancel; a provider error there is a typed provider_error", async () => {
    const overflow = { status: 400, message: "prompt is too long: 250000 tokens > 200000 maximum" };
    // claude-sonnet-5 has a known window, so an overflow makes nexo summarise and retry.
    const { client } = await start(
      [
        { text: "a1" },
        { text: "a2" },
        overflow,
        { text: "a summary that is still being written", delay_ms: 400 },
        { text: "after the stop" },
        overflow,
        { status: 401, message: "invalid x-api-key" },
      ],
      ["--model", "claude-sonnet-5"],
    );
    await client.turn("m1", "q1");
    await client.turn("m2", "q2");
    client.send({ type: "message", msg_id: "m3", input: "q3" });
    const deadline = Date.now() + 15_000;
    while (mock.requests().filter((r) => r.path === "/v1/messages").length < 4) {
      assert.ok(Date.now() < deadline, "the compaction request never came");
      await new Promise((r) => setTimeout(r, 20));
    }
    client.send({ type: "stop" });
    await client.waitFor((e) => e.type === "stream_end" && e.msg_id === "m3");
    const m3 = client.events.filter((e) => e.msg_id === "m3");
    assert.ok(!m3.some((e) => e.type === "error"), JSON.stringify(m3));
    const next = await client.turn("m4", "q4");
    assert.equal(
      next
        .filter((e) => e.type === "text_delta")
        .map((e) => e.text)
        .join(""),
      "after the stop",
    );
    const failed = await client.turn("m5", "q5");
    const errors = failed
      .filter((e) => e.type === "error")
      .map((e) => e.error as { code: string; message: string });
    assert.equal(errors.length, 1, JSON.stringify(failed));
    assert.equal(errors[0]!.code, "provider_error");
    assert.match(errors[0]!.message, /compacting the conversation failed/);
    assert.equal(failed.at(-1)!.type, "stream_end");
    client.end();
    assert.equal((await client.exited).code, 0);
  });

  test("stop mid-stream ends the message with stream_end and the process keeps serving", async () => {
    const long = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const { client } = await start([{ text: long, delay_ms: 50 }, { text: "next answer" }]);
    client.send({ type: "message", msg_id: "m1", input: "talk" });
    await client.waitFor((e) => e.type === "text_delta");
    client.send({ type: "stop" });
    const end = await client.waitFor((e) => e.type === "stream_end" && e.msg_id === "m1");
    assert.ok(end);
    const deltas = client.events.filter((e) => e.type === "text_delta" && e.msg_id === "m1").length;
    assert.ok(deltas < 40, `got ${deltas} deltas after stop`);
    const next = await client.turn("m2", "continue");
    assert.ok(next.some((e) => e.type === "text_delta" && e.text === "next answer"));
    client.end();
    assert.equal((await client.exited).code, 0);
  });

  test("stop while approvals are pending cancels each call, then stream_end", async () => {
    const { client } = await start([
      {
        tool_calls: [
          { id: "a1", name: "Bash", input: { command: "echo 1" } },
          { id: "a2", name: "Bash", input: { command: "echo 2" } },
        ],
      },
      { text: "after" },
    ]);
    client.send({ type: "message", msg_id: "m1", input: "two commands" });
    await client.waitFor((e) => e.type === "tool_request" && e.call_id === "a2");
    client.send({ type: "stop" });
    await client.waitFor((e) => e.type === "stream_end" && e.msg_id === "m1");
    const cancelled = client.events.filter((e) => e.type === "tool_cancelled").map((e) => e.call_id);
    assert.deepEqual(cancelled.sort(), ["a1", "a2"]);
    const next = await client.turn("m2", "go on");
    assert.ok(next.some((e) => e.type === "text_delta"));
    // The history stays valid: both calls have results in what the model received next.
    assert.deepEqual(
      toolResults(sent(2).slice(0, 3)).map((r) => r.tool_use_id),
      ["a1", "a2"],
    );
    client.end();
  });

  test("resume restores the whole history, tool calls included", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "nexo-js-resume-"));
    const first = await start(
      [{ tool_calls: [{ id: "k1", name: "Read", input: { file_path: "notes.txt" } }] }, { text: "read it" }],
      ["--auto-approve", "--session-id", "conv-1"],
      { stateDir },
    );
    assert.equal(first.ready.session_id, "conv-1");
    await first.client.turn("m1", "read notes");
    first.client.end();
    assert.equal((await first.client.exited).code, 0);

    const second = await start([{ text: "I remember" }], ["--resume", "conv-1"], { stateDir, ws: first.ws });
    assert.equal(second.ready.session_id, "conv-1");
    await second.client.turn("m2", "what did you read?");
    const messages = sent(1);
    assert.deepEqual(
      messages.map((m) => m.role),
      ["user", "assistant", "user", "assistant", "user"],
    );
    assert.match(JSON.stringify(messages[1]!.content), /"tool_use".*"k1"/);
    assert.match(JSON.stringify(messages[2]!.content), /first line/);
    second.client.end();

    const latest = await start([{ text: "latest" }], ["--resume", "latest"], { stateDir, ws: first.ws });
    assert.equal(latest.ready.session_id, "conv-1");
    latest.client.end();
  });

  test("start-up errors: error{config_error} on stdout and a non-zero exit", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "nexo-js-fatal-"));
    const missing = new JsonStreamClient(["--resume", "nope", "--provider", "scripted"], { stateDir });
    const e1 = await missing.waitFor((e) => e.type === "error");
    assert.equal((e1.error as { code: string }).code, "config_error");
    assert.equal(e1.msg_id, null);
    assert.notEqual((await missing.exited).code, 0);

    const noKey = new JsonStreamClient(["--provider", "anthropic"], { stateDir });
    const e2 = await noKey.waitFor((e) => e.type === "error");
    assert.match(String((e2.error as { message: string }).message), /ANTHROPIC_API_KEY not set/);
    assert.notEqual((await noKey.exited).code, 0);

    const used = new JsonStreamClient(["--provider", "scripted", "--session-id", "dup"], { stateDir });
    await used.waitFor((e) => e.type === "ready");
    await used.turn("m1", "hello");
    used.end();
    await used.exited;
    const again = new JsonStreamClient(["--provider", "scripted", "--session-id", "dup"], { stateDir });
    const e3 = await again.waitFor((e) => e.type === "error");
    assert.match(String((e3.error as { message: string }).message), /already has messages.*--resume dup/);
    assert.notEqual((await again.exited).code, 0);
  });

  test("--session-id of a session that exists but has no messages is accepted (AionUi re-opens it)", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "nexo-js-empty-"));
    const first = new JsonStreamClient(["--provider", "scripted", "--session-id", "fresh"], { stateDir });
    assert.equal((await first.waitFor((e) => e.type === "ready")).session_id, "fresh");
    first.end();
    assert.equal((await first.exited).code, 0);
    const second = new JsonStreamClient(["--provider", "scripted", "--session-id", "fresh"], { stateDir });
    assert.equal((await second.waitFor((e) => e.type === "ready")).session_id, "fresh");
    const events = await second.turn("m1", "hello");
    assert.equal(events.at(-1)!.type, "stream_end");
    second.end();
    assert.equal((await second.exited).code, 0);
    const resumed = new JsonStreamClient(["--provider", "scripted", "--resume", "fresh"], { stateDir });
    assert.equal((await resumed.waitFor((e) => e.type === "ready")).session_id, "fresh");
    resumed.end();
    assert.equal((await resumed.exited).code, 0);
  });

  test("init_history seeds the context before the first message, and is refused afterwards", async () => {
    const { client } = await start([{ text: "noted" }, { text: "ok" }]);
    client.send({ type: "init_history", text: "The user's name is Ada." });
    await client.waitFor((e) => e.type === "info" && e.message === "history loaded");
    await client.turn("m1", "who am I?");
    assert.match(JSON.stringify(sent(1)), /The user's name is Ada\./);
    client.send({ type: "init_history", text: "late" });
    const error = await client.waitFor(
      (e) => e.type === "error" && (e.error as { code: string }).code === "protocol_error",
    );
    assert.match(String((error.error as { message: string }).message), /before the first message/);
    client.end();
  });

  test("malformed input and unknown commands get protocol_error; the process keeps running", async () => {
    const { client } = await start([{ text: "still here" }]);
    client.send("{not json");
    client.send({ type: "teleport" });
    client.send({ type: "tool_approve" });
    client.send({ type: "ping" });
    await client.waitFor((e) => e.type === "pong");
    const errors = client.events
      .filter((e) => e.type === "error")
      .map((e) => e.error as { code: string; message: string });
    assert.equal(errors.length, 3);
    assert.ok(errors.every((e) => e.code === "protocol_error"));
    assert.match(errors[1]!.message, /Unknown command type: teleport/);
    assert.match(errors[2]!.message, /call_id/);
    const events = await client.turn("m1", "hi");
    assert.ok(events.some((e) => e.type === "text_delta"));
    client.end();
  });

  test("a message while a turn runs is refused with protocol_error for that msg_id", async () => {
    const { client } = await start([{ text: "a slow answer with several words", delay_ms: 80 }]);
    client.send({ type: "message", msg_id: "m1", input: "one" });
    await client.waitFor((e) => e.type === "stream_start");
    client.send({ type: "message", msg_id: "m2", input: "two" });
    const error = await client.waitFor((e) => e.type === "error" && e.msg_id === "m2");
    assert.equal((error.error as { code: string }).code, "protocol_error");
    await client.waitFor((e) => e.type === "stream_end" && e.msg_id === "m1");
    client.end();
  });

  test("add_mcp_server connects a real MCP server before the first message; its tools are callable", async () => {
    const { client } = await start(
      [
        { tool_calls: [{ id: "x1", name: "mcp__echo__echo", input: { text: "through mcp" } }] },
        { text: "echoed" },
      ],
      ["--auto-approve"],
    );
    const server = fileURLToPath(new URL("../../fixtures/mcp-echo-server.ts", import.meta.url));
    client.send({
      type: "add_mcp_server",
      name: "echo",
      transport: "stdio",
      command: process.execPath,
      args: ["--conditions=@nexo/source", "--import", import.meta.resolve("tsx"), server],
    });
    const ready = await client.waitFor((e) => e.type === "mcp_ready", 30_000);
    assert.ok((ready.tools as string[]).includes("mcp__echo__echo"), JSON.stringify(ready));
    client.send({
      type: "add_mcp_server",
      name: "broken",
      transport: "stdio",
      command: "/nonexistent/server",
    });
    const failed = await client.waitFor(
      (e) => e.type === "error" && /broken/.test(JSON.stringify(e)),
      30_000,
    );
    assert.equal((failed.error as { code: string }).code, "config_error");
    const events = await client.turn("m1", "use mcp");
    const result = events.find((e) => e.type === "tool_result")!;
    assert.equal(result.status, "success", JSON.stringify(result));
    assert.match(String(result.output), /through mcp/);
    client.send({ type: "add_mcp_server", name: "late", transport: "stdio", command: "x" });
    const late = await client.waitFor((e) => e.type === "error" && /late/.test(JSON.stringify(e)));
    assert.equal((late.error as { code: string }).code, "protocol_error");
    client.end();
    assert.equal((await client.exited).code, 0);
  });

  test("set_config switches the model and thinking for the next request, and says what it cannot do", async () => {
    const { client } = await start([{ text: "first" }, { text: "second" }]);
    await client.turn("m1", "hello");
    client.send({
      type: "set_config",
      model: "claude-other",
      thinking: "enabled",
      thinking_budget: 2048,
      effort: "high",
    });
    const info = await client.waitFor((e) => e.type === "info" && /config updated/.test(String(e.message)));
    assert.match(String(info.message), /model claude-other/);
    assert.match(String(info.message), /thinking on \(budget 2048 tokens\)/);
    assert.match(String(info.message), /not supported by this agent: effort/);
    const changed = await client.waitFor((e) => e.type === "config_changed");
    assert.equal((changed.capabilities as { current_model: string }).current_model, "claude-other");
    await client.turn("m2", "again");
    const requests = mock.requests().filter((r) => r.path === "/v1/messages");
    const [before, after] = requests.map(
      (r) => r.body as { model: string; thinking?: { budget_tokens: number } },
    );
    assert.equal(before!.model, "claude-test");
    assert.equal(before!.thinking, undefined);
    assert.equal(after!.model, "claude-other");
    assert.equal(after!.thinking?.budget_tokens, 2048);
    client.end();
  });
});
