/**
 * The shared parts of a channel's life: steps applied one after another (a failed one does not
 * block the next), one instance per process, settings errors turned into the contract's typed
 * connection error, and outbound messages read the same way for every channel.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ChannelConnectionError, ChannelUnsupportedError } from "nexo-plugin-sdk";
import {
  assertSendable,
  ChannelConfigError,
  envInteger,
  instanceLabel,
  isRunningInstance,
  type OutboundMessage,
  outgoingContent,
  SerialSteps,
  settingsForStart,
  settingsOrDefaults,
} from "../src/index.js";

describe("SerialSteps", () => {
  test("runs steps in order, one at a time, and a failure does not stop the queue", async () => {
    const steps = new SerialSteps();
    const log: string[] = [];
    let active = 0;
    const step =
      (name: string, fail = false) =>
      async () => {
        active += 1;
        assert.equal(active, 1, "two steps ran at once");
        log.push(`start ${name}`);
        await new Promise((resolve) => setImmediate(resolve));
        log.push(`end ${name}`);
        active -= 1;
        if (fail) throw new Error(`${name} failed`);
        return name;
      };
    const first = steps.run(step("a"));
    const second = steps.run(step("b", true));
    const third = steps.run(step("c"));
    assert.equal(await first, "a");
    await assert.rejects(second, /b failed/);
    assert.equal(await third, "c");
    assert.deepEqual(log, ["start a", "end a", "start b", "end b", "start c", "end c"]);
  });
});

describe("one instance per plugin process", () => {
  test("nothing running, the same instance, another instance", () => {
    assert.equal(instanceLabel(null), "the default instance");
    assert.equal(instanceLabel("work"), "instance work");
    assert.equal(isRunningInstance(undefined, "work", "x serves one bot"), false);
    assert.equal(isRunningInstance({ instance: "work" }, "work", "x serves one bot"), true);
    assert.throws(
      () => isRunningInstance({ instance: null }, "work", "the Telegram channel serves one bot"),
      (error: unknown) =>
        error instanceof ChannelUnsupportedError &&
        error.message ===
          "the default instance is running; the Telegram channel serves one bot per plugin process (stop it first)",
    );
  });
});

describe("settings", () => {
  const read = (env: Readonly<Record<string, string | undefined>>) => ({
    port: envInteger(env, "PORT", 80, 1, 65535),
    stateDir: env.NEXO_STATE_DIR,
  });

  test("a bad setting is the contract's connection error naming the variable", () => {
    assert.throws(
      () => settingsForStart(() => read({ PORT: "http" })),
      (error: unknown) =>
        error instanceof ChannelConnectionError &&
        /^invalid configuration: /.test(error.message) &&
        JSON.stringify(error.data).includes("PORT"),
    );
    const other = new Error("disk on fire");
    assert.throws(
      () =>
        settingsForStart(() => {
          throw other;
        }),
      (error: unknown) => error === other,
    );
    assert.deepEqual(
      settingsForStart(() => read({ PORT: "8080" })),
      { port: 8080, stateDir: undefined },
    );
  });

  test("until start, the defaults serve with the same state directory", () => {
    assert.deepEqual(settingsOrDefaults(read, { PORT: "http", NEXO_STATE_DIR: "/s" }), {
      port: 80,
      stateDir: "/s",
    });
    assert.ok(new ChannelConfigError("PORT", "x") instanceof Error);
  });
});

describe("outbound messages", () => {
  const message = (fields: Record<string, unknown>) => fields as unknown as OutboundMessage;

  test("text with MEDIA lines, a media reference, a caption as text", () => {
    const text = message({ kind: "text", to: "1", body: "hello\nMEDIA: https://example.com/a.png" });
    assertSendable(text, "the test channel");
    const read = outgoingContent(text);
    assert.equal(read.text, "hello");
    assert.equal(read.attachments.length, 1);
    assert.equal(read.attachments[0]?.url, "https://example.com/a.png");

    const media = message({ kind: "media", to: "1", url: "/tmp/a.pdf", caption: "the report" });
    assertSendable(media, "the test channel");
    assert.equal(outgoingContent(media).text, "");
    assert.equal(outgoingContent(media).attachments[0]?.path, "/tmp/a.pdf");
    assert.equal(outgoingContent(media, { captionAsText: true }).text, "the report");
  });

  test("refusals: another kind, a reference that is not a URL or an absolute path", () => {
    assert.throws(
      () => assertSendable(message({ kind: "custom", payload: {} }), "the test channel"),
      (error: unknown) =>
        error instanceof ChannelUnsupportedError &&
        error.message === "the test channel sends text and media messages",
    );
    const relative = message({ kind: "media", to: "1", url: "a.png" });
    assertSendable(relative, "the test channel");
    assert.throws(
      () => outgoingContent(relative),
      (error: unknown) => error instanceof ChannelUnsupportedError && /media url must be/.test(error.message),
    );
  });
});
