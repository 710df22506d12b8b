/**
 * The typing indicator every channel shows while the agent works: shown at once and renewed,
 * hidden when the reply went out (where the service has a signal for it), given up after its
 * longest time, silent on stopAll, and a failing signal is logged, never thrown.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import { TypingIndicator } from "../src/typing.js";

describe("TypingIndicator", () => {
  beforeEach(() => mock.timers.enable({ apis: ["setInterval", "Date"], now: 0 }));
  afterEach(() => mock.timers.reset());

  function indicator(options: { hide?: boolean; fail?: boolean } = {}) {
    const signals: string[] = [];
    const logged: string[] = [];
    const signal = (kind: string) => (conversation: string) => {
      signals.push(`${kind} ${conversation}`);
      return options.fail ? Promise.reject(new Error("network down")) : Promise.resolve();
    };
    const typing = new TypingIndicator({
      show: signal("show"),
      ...(options.hide ? { hide: signal("hide") } : {}),
      everyMs: 4_000,
      forAtMostMs: 10_000,
      log: (line) => logged.push(line),
    });
    return { typing, signals, logged };
  }

  test("shown at once, renewed every everyMs, hidden once when the reply went out", () => {
    const { typing, signals } = indicator({ hide: true });
    typing.start("chat-1");
    assert.deepEqual(signals, ["show chat-1"]);
    mock.timers.tick(4_000);
    mock.timers.tick(4_000);
    assert.deepEqual(signals, ["show chat-1", "show chat-1", "show chat-1"]);
    assert.equal(typing.isTyping("chat-1"), true);
    typing.stop("chat-1");
    typing.stop("chat-1");
    mock.timers.tick(8_000);
    assert.deepEqual(signals, ["show chat-1", "show chat-1", "show chat-1", "hide chat-1"]);
    assert.equal(typing.isTyping("chat-1"), false);
  });

  test("gives up after forAtMostMs; a restart starts the clock again", () => {
    const { typing, signals } = indicator({ hide: true });
    typing.start("chat-1");
    for (let ms = 0; ms < 12_000; ms += 4_000) mock.timers.tick(4_000);
    assert.deepEqual(signals, ["show chat-1", "show chat-1", "show chat-1", "hide chat-1"]);
    assert.equal(typing.isTyping("chat-1"), false);
    typing.start("chat-1");
    mock.timers.tick(4_000);
    assert.deepEqual(signals.slice(4), ["show chat-1", "show chat-1"]);
    typing.stop("chat-1");
  });

  test("conversations are apart; stopAll ends every one without a hide signal", () => {
    const { typing, signals } = indicator({ hide: true });
    typing.start("a");
    typing.start("b");
    typing.stop("a");
    typing.stopAll();
    mock.timers.tick(20_000);
    assert.deepEqual(signals, ["show a", "show b", "hide a"]);
  });

  test("a failing signal is logged, not thrown; no hide where the service has none", async () => {
    const { typing, signals, logged } = indicator({ fail: true });
    typing.start("chat-1");
    typing.stop("chat-1");
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    await Promise.resolve();
    assert.deepEqual(signals, ["show chat-1"]);
    assert.deepEqual(logged, ["typing indicator in chat-1: network down"]);
  });

  test("a channel that is not connected shows nothing and logs nothing", () => {
    const logged: string[] = [];
    const typing = new TypingIndicator({
      show: () => undefined,
      everyMs: 1_000,
      log: (line) => logged.push(line),
    });
    typing.start("chat-1");
    mock.timers.tick(3_000);
    typing.stop("chat-1");
    assert.deepEqual(logged, []);
  });
});
