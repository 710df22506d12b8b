/**
 * Which json-stream schemas a one-shot builds: the bootstrap and the door, in this process, answer
 * one piped question from the mock model (Anthropic's format, as `nexo agent --json-stream` and
 * its benchmark do) — and the protocol's event schemas, which nothing validates on the way out,
 * are never built (@nexo/wire/schemas/lazy). The commands' schemas are: they check the question.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import { builtSchemaGroups } from "@nexo/wire/schemas/lazy";
import { bootstrap } from "../../../src/doors/jsonstream/bootstrap.js";
import { JsonStreamDoor } from "../../../src/doors/jsonstream/door.js";
import { createLogger } from "../../../src/log.js";

test("a one-shot answers without building the json-stream event schemas", async () => {
  const dir = mkdtempSync(join(tmpdir(), "nexo-one-shot-schemas-"));
  const mock = new MockLlmServer({ script: [{ text: "The answer is 42." }] });
  await mock.start();
  try {
    const logger = createLogger({ level: "warn" });
    const boot = bootstrap(
      { provider: "anthropic", model: "claude-test", workspace: dir, stateDir: join(dir, "state") },
      { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: mock.url },
      logger,
    );
    const input = new PassThrough();
    const output = new PassThrough();
    let written = "";
    const ended = new Promise<void>((resolve) =>
      output.setEncoding("utf8").on("data", (text: string) => {
        written += text;
        if (written.includes('"type":"stream_end"')) resolve();
      }),
    );
    const door = new JsonStreamDoor({
      input,
      output,
      session: boot.session,
      version: "test",
      announceSessionId: true,
      capabilities: boot.capabilities,
      logger,
    });
    input.end(`${JSON.stringify({ type: "message", msg_id: "q", input: "What is the answer?" })}\n`);
    await door.run();
    await ended;
    await boot.close();
    boot.store.close();
    const events = written
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; text?: string });
    assert.deepEqual(
      events.map((event) => event.type),
      ["ready", "stream_start", "text_delta", "stream_end"],
    );
    assert.equal(events[2]?.text, "The answer is 42.");
    assert.ok(builtSchemaGroups().has("jsonstream.commands"), "the question was checked by its schema");
    assert.ok(!builtSchemaGroups().has("jsonstream.events"), "an event schema was built");
  } finally {
    await mock.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
