/**
 * The scripted demo model: deterministic, offline, honest, and able to drive the whole loop with
 * only the tools it is offered.
 */
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { describe, it } from "node:test";
import { chunkText, ScriptedProvider } from "../../../src/engine/providers/scripted.js";
import type { ChatMessage, ChatRequest, ProviderEvent, ToolSpec } from "../../../src/engine/types.js";

const spec = (name: string, properties: Record<string, unknown>, required: string[] = []): ToolSpec => ({
  name,
  description: `${name} tool`,
  inputSchema: { type: "object", properties, required },
});

const BUILTINS: ToolSpec[] = [
  spec("Read", { file_path: { type: "string" }, offset: { type: "number" } }, ["file_path"]),
  spec("Write", { file_path: { type: "string" }, content: { type: "string" } }, ["file_path", "content"]),
  spec("Glob", { pattern: { type: "string" }, path: { type: "string" } }, ["pattern"]),
  spec("Grep", { pattern: { type: "string" }, path: { type: "string" } }, ["pattern"]),
  spec("Bash", { command: { type: "string" }, timeout_ms: { type: "number" } }, ["command"]),
  spec("memory_store", { content: { type: "string" }, tags: { type: "array" } }, ["content"]),
  spec("memory_recall", { query: { type: "string" } }, ["query"]),
];

const user = (text: string): ChatMessage => ({ role: "user", content: [{ type: "text", text }] });

async function run(
  text: string | ChatMessage[],
  tools: ToolSpec[] = BUILTINS,
  extra: Partial<ChatRequest> = {},
) {
  const provider = new ScriptedProvider();
  const messages = typeof text === "string" ? [user(text)] : text;
  const events: ProviderEvent[] = [];
  for await (const event of provider.stream({
    model: "scripted",
    messages,
    tools,
    maxTokens: 1000,
    ...extra,
  })) {
    events.push(event);
  }
  const calls = events.flatMap((e) => (e.type === "tool_call" ? [e] : []));
  const reply = events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("");
  const thinking = events.flatMap((e) => (e.type === "thinking_delta" ? [e.text] : [])).join("");
  const stop = events.at(-1);
  return { events, calls, reply, thinking, stop };
}

describe("scripted provider", () => {
  it("is deterministic", async () => {
    const a = await run("read README.md");
    const b = await run("read README.md");
    assert.deepEqual(a.events, b.events);
  });

  it("calls Read for 'read FILE' and 'show FILE', with the argument name from the schema", async () => {
    const { calls, stop, reply } = await run("read README.md");
    assert.deepEqual(
      calls.map((c) => [c.name, c.input]),
      [["Read", { file_path: "README.md" }]],
    );
    assert.deepEqual(stop, { type: "stop", reason: "tool_use" });
    assert.match(reply, /README\.md/);
    const other = await run("Please show docs/guide.md.", [spec("Read", { path: { type: "string" } })]);
    assert.deepEqual(other.calls[0]?.input, { path: "docs/guide.md" });
  });

  it("maps the other commands to their tools", async () => {
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ["list files", "Glob", { pattern: "*" }],
      ["list files in src/", "Glob", { pattern: "src/*" }],
      ["glob **/*.ts", "Glob", { pattern: "**/*.ts" }],
      ["search TODO", "Grep", { pattern: "TODO" }],
      ["grep for 'fixme'", "Grep", { pattern: "fixme" }],
      ["run ls -la | head", "Bash", { command: "ls -la | head" }],
      [
        "write notes.txt: hello world\nsecond line",
        "Write",
        { file_path: "notes.txt", content: "hello world\nsecond line" },
      ],
      [
        "remember that my favourite colour is green.",
        "memory_store",
        { content: "my favourite colour is green" },
      ],
      ["what do you remember about colours?", "memory_recall", { query: "colours" }],
      ["recall deadlines", "memory_recall", { query: "deadlines" }],
    ];
    for (const [message, tool, input] of cases) {
      const { calls } = await run(message);
      assert.deepEqual(
        calls.map((c) => [c.name, c.input]),
        [[tool, input]],
        message,
      );
    }
  });

  it("only calls tools it is offered, and says so when one is missing", async () => {
    const { calls, reply, stop } = await run("read README.md", [
      spec("Glob", { pattern: { type: "string" } }),
    ]);
    assert.equal(calls.length, 0);
    assert.match(reply, /Read tool, but it is not available/);
    assert.deepEqual(stop, { type: "stop", reason: "end_turn" });
    const none = await run("run rm -rf /", []);
    assert.equal(none.calls.length, 0);
  });

  it("calls a plugin tool the message names, filling its single string argument", async () => {
    const weather = spec("demo_weather", { city: { type: "string" } }, ["city"]);
    const { calls } = await run("weather in Paris?", [...BUILTINS, weather]);
    assert.deepEqual(
      calls.map((c) => [c.name, c.input]),
      [["demo_weather", { city: "Paris" }]],
    );
    const byName = await run("use demo_weather for Lisbon", [weather]);
    assert.deepEqual(byName.calls[0]?.input, { city: "Lisbon" });
    const complex = spec(
      "demo_booking",
      { city: { type: "string" }, nights: { type: "number" }, guest: { type: "string" } },
      ["city", "guest"],
    );
    const refused = await run("booking in Rome", [complex]);
    assert.equal(refused.calls.length, 0);
    assert.match(refused.reply, /demo_booking/);
  });

  it("lets a tool's full name win over another tool's partial match (issue 14.9)", async () => {
    const report = spec("weather_report", { city: { type: "string" } }, ["city"]);
    const time = spec("demo_time", { zone: { type: "string" } }, ["zone"]);
    const first = await run("use demo_time for Europe/Oslo, not the weather", [report, time]);
    assert.deepEqual(
      first.calls.map((c) => [c.name, c.input]),
      [["demo_time", { zone: "Europe/Oslo, not the weather" }]],
    );
    const alerts = spec("demo_weather_alerts", { region: { type: "string" } }, ["region"]);
    const weather = spec("demo_weather", { city: { type: "string" } }, ["city"]);
    const longest = await run("demo_weather_alerts for Norway", [weather, alerts]);
    assert.deepEqual(longest.calls[0]?.input, { region: "Norway" });
    assert.equal(longest.calls[0]?.name, "demo_weather_alerts");
  });

  it("matches an MCP tool by its bare name (issue 14.9)", async () => {
    const add = spec("mcp__calc__add", { expression: { type: "string" } }, ["expression"]);
    const { calls } = await run("add 2+3", [...BUILTINS, add]);
    assert.deepEqual(
      calls.map((c) => [c.name, c.input]),
      [["mcp__calc__add", { expression: "2+3" }]],
    );
  });

  it("offers in its help only examples it can run (issue 14.9)", async () => {
    const tools = [
      ...BUILTINS,
      spec("demo_weather", { city: { type: "string" } }, ["city"]),
      spec("demo_dice", {}),
      spec("mcp__files__read_text", { path: { type: "string" } }, ["path"]),
    ];
    const { reply } = await run("hello", tools);
    const examples = [
      ...(/name a tool and what it is for: (.*?)(?:;|\.$)/m.exec(reply)?.[1] ?? "").matchAll(/"([^"]+)"/g),
    ].map((m) => m[1]!);
    assert.deepEqual(examples, ["demo_weather for CITY", "demo_dice", "read_text for PATH"]);
    const expected = ["demo_weather", "demo_dice", "mcp__files__read_text"];
    for (const [i, example] of examples.entries()) {
      const { calls } = await run(example, tools);
      assert.equal(calls[0]?.name, expected[i], `"${example}" must call ${expected[i]}`);
    }
  });

  it("'call TOOL {json}' makes exactly that call, and refuses a tool not offered or arguments that are no object", async () => {
    const booking = spec(
      "demo_booking",
      { city: { type: "string" }, nights: { type: "number" }, guest: { type: "string" } },
      ["city", "guest"],
    );
    const args = { city: "Rome", nights: 3, guest: "Ana", extra: { nested: [1, "two"] } };
    const { calls } = await run(`call demo_booking ${JSON.stringify(args)}`, [booking]);
    assert.deepEqual(
      calls.map((c) => [c.name, c.input]),
      [["demo_booking", args]],
    );
    const withWith = await run('please call demo_booking with {"city":"Oslo"}', [booking]);
    assert.deepEqual(withWith.calls[0]?.input, { city: "Oslo" });
    const missing = await run('call demo_weather {"city":"Paris"}', [booking]);
    assert.equal(missing.calls.length, 0);
    assert.match(missing.reply, /demo_weather tool, but it is not available/);
    const broken = await run('call demo_booking {"city":', [booking]);
    assert.equal(broken.calls.length, 0);
    const notObject = await run("call demo_booking {}", [booking]);
    assert.deepEqual(notObject.calls[0]?.input, {});
    const badJson = await run("call demo_booking {city: Rome}", [booking]);
    assert.equal(badJson.calls.length, 0);
    assert.match(badJson.reply, /not valid JSON/);
  });

  it("streams thinking deltas before the text for 'think about X'", async () => {
    const { events, thinking, reply, calls } = await run("think about the meaning of life");
    assert.match(thinking, /meaning of life/);
    assert.match(reply, /demo model/);
    assert.equal(calls.length, 0);
    const firstText = events.findIndex((e) => e.type === "text_delta");
    const lastThinking = events.findLastIndex((e) => e.type === "thinking_delta");
    assert.ok(lastThinking >= 0 && lastThinking < firstText);
  });

  it("is honest about being a demo model and says how to configure a real one", async () => {
    const { reply, calls, stop } = await run("What is the capital of France?");
    assert.equal(calls.length, 0);
    assert.match(reply, /demo model/);
    assert.match(reply, /llm\.yaml/);
    assert.match(reply, /read FILE/);
    assert.deepEqual(stop, { type: "stop", reason: "end_turn" });
    const bare = await run("hello", []);
    assert.doesNotMatch(bare.reply, /read FILE/, "does not advertise tools it was not given");
  });

  it("summarises tool results and stops", async () => {
    const history: ChatMessage[] = [
      user("read README.md and run ls"),
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "c1", name: "Read", input: { file_path: "README.md" } },
          { type: "tool_use", id: "c2", name: "Bash", input: { command: "ls" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", toolUseId: "c1", content: "# nexo\nan agent daemon" },
          { type: "tool_result", toolUseId: "c2", content: "permission denied", isError: true },
        ],
      },
    ];
    const { reply, calls, stop } = await run(history);
    assert.equal(calls.length, 0);
    assert.match(reply, /Read returned/);
    assert.match(reply, /an agent daemon/);
    assert.match(reply, /Bash failed/);
    assert.deepEqual(stop, { type: "stop", reason: "end_turn" });
  });

  it("streams text in several deltas and reports plausible usage", async () => {
    const { events, reply } = await run("hello there");
    assert.ok(events.filter((e) => e.type === "text_delta").length > 3);
    const usage = events.find((e) => e.type === "usage");
    assert.ok(usage?.type === "usage");
    assert.ok((usage.usage.outputTokens ?? 0) >= Math.floor(reply.length / 4));
    assert.ok((usage.usage.inputTokens ?? 0) > 0);
  });

  it("gives tool calls ids that differ between turns and are stable for the same history", async () => {
    const first = await run("read a.txt");
    const second = await run([
      user("read a.txt"),
      { role: "assistant", content: [{ type: "text", text: "ok" }] },
      user("read a.txt"),
    ]);
    assert.notEqual(first.calls[0]?.id, second.calls[0]?.id);
    assert.equal(first.calls[0]?.id, (await run("read a.txt")).calls[0]?.id);
  });

  it("writes a summary for the engine's compaction requests", async () => {
    const { reply } = await run(
      [user("user: read the README\nassistant called Read with {}\nuser: now list files")],
      [],
      { system: "You compress conversations. Summarise the conversation below." },
    );
    assert.match(reply, /2 user request/);
    assert.match(reply, /read the README/);
    assert.match(reply, /Tools used: Read/);
  });

  it("stops with the abort reason when the signal aborts", async () => {
    const provider = new ScriptedProvider({ chunkDelayMs: 50 });
    const controller = new AbortController();
    const seen: ProviderEvent[] = [];
    await assert.rejects(async () => {
      for await (const event of provider.stream({
        model: "scripted",
        messages: [user("hello")],
        maxTokens: 100,
        signal: controller.signal,
      })) {
        seen.push(event);
        controller.abort();
      }
    }, /abort/i);
    assert.equal(seen.length, 1);
  });

  it("an abort during a pause ends it at once; the signal keeps no listener after a reply", async () => {
    // A minute's pause per delta: only the abort can end this reply in time.
    const provider = new ScriptedProvider({ chunkDelayMs: 60_000 });
    const controller = new AbortController();
    const request = {
      model: "scripted",
      messages: [user("hello")],
      maxTokens: 100,
      signal: controller.signal,
    };
    setImmediate(() => controller.abort(new Error("stopped by the user")));
    await assert.rejects(async () => {
      for await (const _ of provider.stream(request)) assert.fail("no delta before the pause ends");
    }, /stopped by the user/);
    assert.equal(getEventListeners(controller.signal, "abort").length, 0);

    const quick = new ScriptedProvider({ chunkDelayMs: 1 });
    const live = new AbortController();
    let listening = 0;
    for await (const _ of quick.stream({ ...request, signal: live.signal }))
      listening = Math.max(listening, getEventListeners(live.signal, "abort").length);
    assert.equal(listening, 1, "one listener for the whole reply");
    assert.equal(getEventListeners(live.signal, "abort").length, 0);
  });

  it("keeps every character when chunking", () => {
    const text = "  leading, and   multiple spaces\nnew line ";
    assert.equal(chunkText(text).join(""), text);
    assert.deepEqual(chunkText(""), []);
  });
});
