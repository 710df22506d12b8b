/**
 * The mock LLM server at the HTTP level (plain fetch, no SDK): both vendors' wire formats, the
 * script's features and the control endpoints. (The `nexo dev mock-llm` command is tested in nexo.)
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { loadMockScript, MockLlmServer, MockScriptError, parseMockScript } from "../src/index.js";

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Splits an SSE body into its events ({event?, data}). */
function sseEvents(text: string): Array<{ event?: string; data: string }> {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event: "))?.slice("event: ".length);
      const data = lines
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice("data: ".length))
        .join("\n");
      return event === undefined ? { data } : { event, data };
    });
}

const anthropicBody = (text: string, stream = true) => ({
  model: "claude-mock",
  max_tokens: 100,
  stream,
  messages: [{ role: "user", content: [{ type: "text", text }] }],
});
const openAiBody = (text: string, extra: Record<string, unknown> = {}) => ({
  model: "gpt-mock",
  stream: true,
  messages: [{ role: "user", content: text }],
  ...extra,
});

describe("mock LLM server", () => {
  const server = new MockLlmServer();
  let url: string;

  before(async () => {
    url = await server.start();
  });
  after(() => server.close());
  beforeEach(() => server.reset({ responses: [] }));

  it("speaks Anthropic SSE with event and data lines in the API's order", async () => {
    server.reset([
      { thinking: "hmm", text: "Hi there", tool_calls: [{ name: "Read", input: { file_path: "a" } }] },
    ]);
    const res = await post(`${url}/v1/messages`, anthropicBody("hello"));
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
    const events = sseEvents(await res.text());
    const names = events.map((e) => e.event);
    assert.equal(names[0], "message_start");
    assert.equal(names[1], "ping");
    assert.equal(names.at(-2), "message_delta");
    assert.equal(names.at(-1), "message_stop");
    for (const e of events)
      assert.equal((JSON.parse(e.data) as { type: string }).type, e.event, "data.type mirrors event");
    const starts = events
      .filter((e) => e.event === "content_block_start")
      .map((e) => JSON.parse(e.data).content_block.type);
    assert.deepEqual(starts, ["thinking", "text", "tool_use"]);
    const deltaTypes = new Set(
      events.filter((e) => e.event === "content_block_delta").map((e) => JSON.parse(e.data).delta.type),
    );
    assert.deepEqual([...deltaTypes].sort(), [
      "input_json_delta",
      "signature_delta",
      "text_delta",
      "thinking_delta",
    ]);
    const json = events
      .filter(
        (e) => e.event === "content_block_delta" && JSON.parse(e.data).delta.type === "input_json_delta",
      )
      .map((e) => JSON.parse(e.data).delta.partial_json)
      .join("");
    assert.deepEqual(JSON.parse(json), { file_path: "a" });
    assert.equal(JSON.parse(events.at(-2)!.data).delta.stop_reason, "tool_use");
  });

  it("answers Anthropic requests with stream false as one JSON message", async () => {
    server.reset([
      { text: "plain", usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 1 } },
    ]);
    const res = await post(`${url}/v1/messages`, anthropicBody("hello", false));
    assert.match(res.headers.get("content-type") ?? "", /application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body.type, "message");
    assert.deepEqual(body.content, [{ type: "text", text: "plain" }]);
    assert.equal(body.stop_reason, "end_turn");
    assert.deepEqual(body.usage, {
      input_tokens: 3,
      output_tokens: 2,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 1,
    });
  });

  it("speaks OpenAI SSE with data chunks, a usage chunk on request, and [DONE]", async () => {
    server.reset([
      { thinking: "r", text: "Hello you", tool_calls: [{ name: "Glob", input: { pattern: "*" } }] },
      { text: "no usage" },
    ]);
    const withUsage = sseEvents(
      await (
        await post(
          `${url}/v1/chat/completions`,
          openAiBody("hi", { stream_options: { include_usage: true } }),
        )
      ).text(),
    );
    assert.ok(
      withUsage.every((e) => e.event === undefined),
      "no event: lines",
    );
    assert.equal(withUsage.at(-1)?.data, "[DONE]");
    const chunks = withUsage.slice(0, -1).map((e) => JSON.parse(e.data));
    assert.ok(chunks.every((c) => c.object === "chat.completion.chunk"));
    assert.equal(chunks[0].choices[0].delta.role, "assistant");
    assert.ok(chunks.some((c) => c.choices[0]?.delta.reasoning_content === "r"));
    assert.equal(
      chunks.find((c) => c.choices[0]?.delta.tool_calls)?.choices[0].delta.tool_calls[0].function.name,
      "Glob",
    );
    assert.equal(chunks.at(-2).choices[0].finish_reason, "tool_calls");
    assert.deepEqual(chunks.at(-1).choices, []);
    assert.equal(typeof chunks.at(-1).usage.prompt_tokens, "number");
    const without = sseEvents(await (await post(`${url}/v1/chat/completions`, openAiBody("hi"))).text());
    assert.equal(
      without.some((e) => e.data.includes('"usage"')),
      false,
    );
  });

  it("speaks the OpenAI Responses API: typed SSE events in order, sequence numbers, response.completed", async () => {
    server.reset([
      {
        thinking: "think",
        text: "Hello there you",
        tool_calls: [{ name: "shell", input: { command: ["ls"] } }],
      },
    ]);
    const res = await post(`${url}/v1/responses`, {
      model: "gpt-mock",
      stream: true,
      instructions: "be brief",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
    });
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const events = sseEvents(await res.text()).map((e) => ({ event: e.event, data: JSON.parse(e.data) }));
    assert.ok(
      events.every((e) => e.event === e.data.type),
      "each event: line names its data's type",
    );
    assert.deepEqual(
      events.map((e) => e.data.sequence_number),
      events.map((_, i) => i),
    );
    const types = events.map((e) => e.data.type);
    assert.deepEqual(types.slice(0, 3), [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
    ]);
    assert.equal(types.at(-1), "response.completed");
    assert.equal(events[0]!.data.response.status, "in_progress");
    // reasoning, then the message, then the call: three items, each added then done
    const added = events
      .filter((e) => e.data.type === "response.output_item.added")
      .map((e) => e.data.item.type);
    assert.deepEqual(added, ["reasoning", "message", "function_call"]);
    const text = events
      .filter((e) => e.data.type === "response.output_text.delta")
      .map((e) => e.data.delta)
      .join("");
    assert.equal(text, "Hello there you");
    assert.equal(
      events.find((e) => e.data.type === "response.output_text.done")?.data.text,
      "Hello there you",
    );
    assert.equal(
      events
        .filter((e) => e.data.type === "response.reasoning_summary_text.delta")
        .map((e) => e.data.delta)
        .join(""),
      "think",
    );
    const args = events
      .filter((e) => e.data.type === "response.function_call_arguments.delta")
      .map((e) => e.data.delta)
      .join("");
    assert.deepEqual(JSON.parse(args), { command: ["ls"] });
    const completed = events.at(-1)!.data.response;
    assert.equal(completed.object, "response");
    assert.equal(completed.status, "completed");
    assert.deepEqual(
      completed.output.map((item: { type: string }) => item.type),
      ["reasoning", "message", "function_call"],
    );
    const call = completed.output[2];
    assert.equal(call.name, "shell");
    assert.match(call.call_id, /^call_mock_/);
    assert.equal(typeof completed.usage.input_tokens, "number");
    assert.equal(completed.usage.total_tokens, completed.usage.input_tokens + completed.usage.output_tokens);
    assert.equal(server.requests().at(-1)?.protocol, "responses");
  });

  it("matches Responses API scripts on the input after the last call, and answers stream false whole", async () => {
    server.reset([
      { match: "tool said ok", text: "after the tool" },
      { text: "plain", stop_reason: "max_tokens" },
    ]);
    const followUp = await post(`${url}/v1/responses`, {
      model: "gpt-mock",
      stream: false,
      input: [
        { type: "message", role: "user", content: [{ type: "input_text", text: "first" }] },
        { type: "function_call", call_id: "c1", name: "shell", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "tool said ok" },
      ],
    });
    const body = (await followUp.json()) as {
      object: string;
      status: string;
      output: Array<{ content: Array<{ text: string }> }>;
    };
    assert.equal(body.object, "response");
    assert.equal(body.status, "completed");
    assert.equal(body.output[0]?.content[0]?.text, "after the tool");
    const cut = sseEvents(
      await (await post(`${url}/v1/responses`, { model: "m", stream: true, input: "go" })).text(),
    );
    const last = JSON.parse(cut.at(-1)!.data);
    assert.equal(last.type, "response.incomplete");
    assert.deepEqual(last.response.incomplete_details, { reason: "max_output_tokens" });
    const exhausted = await post(`${url}/v1/responses`, { model: "m", stream: true, input: "more" });
    assert.equal(exhausted.status, 500);
    assert.match(((await exhausted.json()) as { error: { message: string } }).error.message, /exhausted/);
  });

  it("answers OpenAI requests with stream false as one chat.completion", async () => {
    server.reset([{ text: "whole" }]);
    const res = await post(`${url}/v1/chat/completions`, openAiBody("hi", { stream: false }));
    const body = (await res.json()) as { object: string; choices: Array<{ message: { content: string } }> };
    assert.equal(body.object, "chat.completion");
    assert.equal(body.choices[0]?.message.content, "whole");
  });

  it("serves errors in each vendor's format with retry-after", async () => {
    server.reset([
      { status: 429, retry_after: 3 },
      { status: 401 },
      { status: 500, body: { custom: true }, headers: { "x-extra": "1" } },
    ]);
    const limited = await post(`${url}/v1/messages`, anthropicBody("x"));
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "3");
    assert.deepEqual(((await limited.json()) as { error: { type: string } }).error.type, "rate_limit_error");
    const auth = await post(`${url}/v1/chat/completions`, openAiBody("x"));
    assert.equal(auth.status, 401);
    assert.equal(((await auth.json()) as { error: { code: string } }).error.code, "invalid_api_key");
    const custom = await post(`${url}/v1/chat/completions`, openAiBody("x"));
    assert.deepEqual(await custom.json(), { custom: true });
    assert.equal(custom.headers.get("x-extra"), "1");
  });

  it("cuts the connection after N events", async () => {
    server.reset([{ text: "a b c d e f g h", disconnect_after: 3 }]);
    const res = await post(`${url}/v1/messages`, anthropicBody("x"));
    await assert.rejects(res.text());
    server.reset([{ text: "x", disconnect_after: 0 }]);
    await assert.rejects(post(`${url}/v1/messages`, anthropicBody("x")));
  });

  it("serves entries in order, skipping those whose match is absent from the last user message", async () => {
    server.reset([
      { match: "weather", text: "sunny" },
      { text: "generic" },
      { match: "weather", text: "rainy" },
    ]);
    const texts: string[] = [];
    for (const ask of ["hello", "the weather?", "weather again"]) {
      const res = await post(`${url}/v1/messages`, anthropicBody(ask, false));
      texts.push(((await res.json()) as { content: Array<{ text: string }> }).content[0]!.text);
    }
    assert.deepEqual(texts, ["generic", "sunny", "rainy"]);
    assert.deepEqual(
      server.requests().map((r) => r.responseIndex),
      [1, 0, 2],
    );
  });

  it("matches OpenAI tool results, which come after the last assistant message", async () => {
    server.reset([{ match: "42 degrees", text: "hot" }]);
    const res = await post(`${url}/v1/chat/completions`, {
      model: "m",
      messages: [
        { role: "user", content: "weather?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c", type: "function", function: { name: "w", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c", content: "42 degrees" },
      ],
    });
    assert.equal(res.status, 200);
  });

  it("matches match_any against any message of the conversation, on every wire format", async () => {
    // A two-turn conversation whose first user message carries the marker; the last one does not.
    const marker = "[session beta]";
    const anthropic = {
      model: "m",
      max_tokens: 100,
      system: "system prompt mentions [session alpha]",
      messages: [
        { role: "user", content: [{ type: "text", text: `${marker} read the notes` }] },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "notes.txt" } }],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "hello" }] },
      ],
    };
    const chat = {
      model: "m",
      messages: [
        { role: "system", content: "[session alpha]" },
        { role: "user", content: `${marker} weather?` },
        { role: "assistant", content: "It is sunny." },
        { role: "user", content: "and tomorrow?" },
      ],
    };
    const responses = {
      model: "m",
      instructions: "[session alpha]",
      input: [
        { role: "user", content: [{ type: "input_text", text: `${marker} list files` }] },
        { type: "function_call", call_id: "c1", name: "exec_command", arguments: '{"cmd":"ls"}' },
        { type: "function_call_output", call_id: "c1", output: "a.txt" },
      ],
    };
    server.reset([
      // The system prompt and instructions are not the conversation: alpha never matches.
      { match_any: "[session alpha]", text: "wrong: matched the system prompt" },
      { match_any: marker, text: "anthropic" },
      { match_any: marker, text: "chat" },
      { match_any: marker, match: "a.txt", text: "responses" },
      // Tool calls' arguments count as conversation too.
      { match_any: "notes.txt", text: "by the tool call" },
    ]);
    const a = await post(`${url}/v1/messages`, anthropic);
    assert.equal(((await a.json()) as { content: Array<{ text: string }> }).content[0]!.text, "anthropic");
    const c = await post(`${url}/v1/chat/completions`, chat);
    assert.equal(
      ((await c.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content,
      "chat",
    );
    const r = await post(`${url}/v1/responses`, responses);
    const output = ((await r.json()) as { output: Array<{ content?: Array<{ text: string }> }> }).output;
    assert.equal(output[0]!.content![0]!.text, "responses");
    const again = await post(`${url}/v1/messages`, anthropic);
    assert.equal(
      ((await again.json()) as { content: Array<{ text: string }> }).content[0]!.text,
      "by the tool call",
    );
    // The marker alone, without it anywhere in the conversation: no entry (alpha is only the system's).
    const none = await post(`${url}/v1/chat/completions`, openAiBody("no marker here", { stream: false }));
    assert.equal(none.status, 500);
    assert.match(JSON.stringify(await none.json()), /none of the 1 remaining scripted response\(s\) matches/);
    assert.deepEqual(
      server.requests().map((q) => q.responseIndex),
      [1, 2, 3, 4, null],
    );
  });

  it("rejects an empty match_any like any misspelt or empty key", () => {
    assert.throws(() => parseMockScript([{ match_any: "", text: "x" }]), MockScriptError);
    assert.throws(() => parseMockScript([{ matchAny: "x", text: "x" }]), /matchAny/);
  });

  it("says clearly when the script is exhausted or nothing matches", async () => {
    const exhausted = await post(`${url}/v1/messages`, anthropicBody("x"));
    assert.equal(exhausted.status, 500);
    assert.match(JSON.stringify(await exhausted.json()), /script is exhausted/);
    server.reset([{ match: "needle", text: "found" }]);
    const unmatched = await post(`${url}/v1/chat/completions`, openAiBody("haystack"));
    assert.equal(unmatched.status, 500);
    assert.match(JSON.stringify(await unmatched.json()), /none of the 1 remaining/);
  });

  it("records every request's headers and body, served over GET /__requests", async () => {
    server.reset([{ text: "ok" }]);
    await post(`${url}/v1/messages`, anthropicBody("record me"), { "x-api-key": "secret-key" });
    await fetch(`${url}/v1/models`);
    const recorded = (await (await fetch(`${url}/__requests`)).json()) as Array<Record<string, unknown>>;
    assert.equal(recorded.length, 2);
    assert.equal(recorded[0]?.protocol, "anthropic");
    assert.equal((recorded[0]!.headers as Record<string, string>)["x-api-key"], "secret-key");
    assert.deepEqual(recorded[0]?.body, anthropicBody("record me"));
    assert.equal(recorded[1]?.path, "/v1/models");
    assert.deepEqual(server.requests(), recorded);
  });

  it("lists models for both SDKs", async () => {
    server.reset({ responses: [], models: ["claude-mock", "gpt-mock"] });
    const list = (await (await fetch(`${url}/v1/models`)).json()) as { data: Array<Record<string, unknown>> };
    assert.deepEqual(
      list.data.map((m) => [m.id, m.object, m.type]),
      [
        ["claude-mock", "model", "model"],
        ["gpt-mock", "model", "model"],
      ],
    );
  });

  it("resets over HTTP: rewinds, replaces, and refuses an invalid script", async () => {
    server.reset([{ text: "first" }]);
    await post(`${url}/v1/messages`, anthropicBody("x"));
    assert.equal(server.remaining(), 0);
    assert.equal((await post(`${url}/__reset`, "")).status, 200);
    assert.equal(server.remaining(), 1);
    assert.equal(server.requests().length, 0);
    const replaced = await post(`${url}/__reset`, [{ text: "a" }, { text: "b" }]);
    assert.deepEqual(await replaced.json(), { ok: true, responses: 2 });
    const invalid = await post(`${url}/__reset`, [{ tool_call: [] }]);
    assert.equal(invalid.status, 400);
    assert.match(JSON.stringify(await invalid.json()), /tool_call/);
    assert.equal(server.remaining(), 2, "an invalid script leaves the current one in place");
  });

  it("refuses bodies that are not JSON and unknown routes", async () => {
    server.reset([{ text: "unused" }]);
    const bad = await post(`${url}/v1/messages`, "{not json");
    assert.equal(bad.status, 400);
    assert.equal(server.remaining(), 1);
    assert.equal((await post(`${url}/v2/other`, {})).status, 404);
  });

  it("waits delay_ms between events", async () => {
    server.reset([{ text: "one two three four", delay_ms: 60 }]);
    const started = Date.now();
    await (await post(`${url}/v1/messages`, anthropicBody("x"))).text();
    assert.ok(Date.now() - started >= 60 * 5, "at least one pause per event after the first");
  });
});

describe("mock script validation", () => {
  it("accepts a bare list or {responses, models}", () => {
    assert.equal(parseMockScript([{ text: "a" }]).responses.length, 1);
    assert.deepEqual(parseMockScript({ responses: [], models: ["m"] }).models, ["m"]);
  });

  it("rejects misspelt keys, empty entries and contradictory ones", () => {
    assert.throws(
      () => parseMockScript([{ txt: "a" }]),
      (e: unknown) => e instanceof MockScriptError && /txt/.test(e.message),
    );
    assert.throws(() => parseMockScript([{}]), /needs "text"/);
    assert.throws(() => parseMockScript([{ status: 500, text: "a" }]), /\[0\]\.text.*cannot be combined/);
    assert.throws(() => parseMockScript([{ text: "a", retry_after: 1 }]), /only meaningful with "status"/);
    assert.throws(() => parseMockScript([{ status: 200 }]), /status/);
    assert.throws(() => parseMockScript([{ tool_calls: [{ input: {} }] }]), /name/);
  });

  it("loads a script file and names the file in errors", async () => {
    const dir = await mkdtemp(join(tmpdir(), "nexo-mock-"));
    try {
      await writeFile(join(dir, "ok.json"), JSON.stringify([{ text: "hi" }]));
      await writeFile(join(dir, "broken.json"), "[{");
      await writeFile(join(dir, "bad.json"), JSON.stringify([{ status: "x" }]));
      assert.equal((await loadMockScript(join(dir, "ok.json"))).responses[0]?.text, "hi");
      await assert.rejects(loadMockScript(join(dir, "broken.json")), /broken\.json is not JSON/);
      await assert.rejects(loadMockScript(join(dir, "bad.json")), /bad\.json: \[0\]\.status/);
      await assert.rejects(loadMockScript(join(dir, "missing.json")), /cannot read/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
