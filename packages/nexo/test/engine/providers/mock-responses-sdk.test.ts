/**
 * @nexo/mock-llm's `POST /v1/responses` as the official `openai` SDK reads it: the SDK's Responses
 * stream helper accumulates the events into the final response and refuses events that break the
 * API's order (a delta for an item never added, a content part out of place), so an answer that
 * arrives whole here is in the vendor's format. Codex, the peer the AppServer benchmark runs against
 * the same mock, speaks this API.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import OpenAI from "openai";

let mock: MockLlmServer;
let client: OpenAI;
before(async () => {
  mock = new MockLlmServer();
  await mock.start();
  client = new OpenAI({ apiKey: "sk-mock", baseURL: `${mock.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await mock.close();
});

test("the SDK's stream helper rebuilds text, reasoning and a function call", async () => {
  mock.reset([
    {
      thinking: "look first",
      text: "Reading it now",
      tool_calls: [{ name: "read_file", input: { path: "a.txt" } }],
    },
  ]);
  const stream = client.responses.stream({ model: "gpt-mock", input: "read a.txt" });
  const deltas: string[] = [];
  stream.on("response.output_text.delta", (event) => deltas.push(event.delta));
  const response = await stream.finalResponse();
  assert.equal(deltas.join(""), "Reading it now");
  assert.equal(response.status, "completed");
  assert.equal(response.output_text, "Reading it now");
  const call = response.output.find((item) => item.type === "function_call");
  assert.ok(call && call.type === "function_call");
  assert.equal(call.name, "read_file");
  assert.deepEqual(JSON.parse(call.arguments), { path: "a.txt" });
  const reasoning = response.output.find((item) => item.type === "reasoning");
  assert.ok(reasoning && reasoning.type === "reasoning");
  assert.equal(reasoning.summary[0]?.text, "look first");
  assert.ok((response.usage?.total_tokens ?? 0) > 0);
});

test("a non-streamed create and a vendor error through the SDK", async () => {
  mock.reset([{ text: "whole answer" }, { status: 429, retry_after: 1 }]);
  const response = await client.responses.create({ model: "gpt-mock", input: "hi" });
  assert.equal(response.output_text, "whole answer");
  await assert.rejects(
    client.responses.create({ model: "gpt-mock", input: "again", stream: true }),
    (error) => {
      assert.ok(error instanceof OpenAI.RateLimitError);
      return true;
    },
  );
});
