import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { plugin as schemas } from "@nexo/wire/schemas";
import { PluginProcess } from "../../test-helpers/plugin-process.js";
import { describeCounts, luhnValid, redactPii } from "../src/redact.js";

describe("redactPii", () => {
  const cases: Array<[string, string, string]> = [
    ["an address", "write to ana.lopez+work@mail.example.co.uk today", "write to [REDACTED:email] today"],
    ["a spaced card", "card 4111 1111 1111 1111 exp 12/29", "card [REDACTED:card] exp 12/29"],
    ["a hyphenated Amex", "amex 3782-822463-10005.", "amex [REDACTED:card]."],
    ["a bare card", "pay with 5555555555554444", "pay with [REDACTED:card]"],
    ["an international phone", "call +34 612 34 56 78 now", "call [REDACTED:phone] now"],
    ["a US phone", "office: (555) 123-4567", "office: [REDACTED:phone]"],
    ["a dotted phone", "tel 612.345.678", "tel [REDACTED:phone]"],
    ["a short + number", "ext +4930123", "ext [REDACTED:phone]"],
  ];
  for (const [what, input, expected] of cases) {
    test(`redacts ${what}`, () => assert.equal(redactPii(input).text, expected));
  }

  const untouched: Array<[string, string]> = [
    ["a number failing Luhn", "order 4111 1111 1111 1112 shipped"],
    ["an ISO date", "due 2026-05-01, at 10:30"],
    ["a decimal", "pi is 3.14159265358"],
    ["a short number", "room 1234, floor 5, 40 people"],
    ["a money amount", "total 1,299.00 EUR"],
    ["an @-mention", "thanks @maria and @dev-team"],
    ["plain text", "nothing to see here"],
  ];
  for (const [what, input] of untouched) {
    test(`leaves ${what} alone`, () => {
      const result = redactPii(input);
      assert.equal(result.text, input);
      assert.deepEqual(result.counts, { email: 0, card: 0, phone: 0 });
    });
  }

  test("counts every kind in a mixed message, and digits in an address stay an address", () => {
    const result = redactPii(
      "I'm bob2024@example.com, +44 20 7946 0958 or 020 7946 0958; card 4012888888881881, also 4111111111111111",
    );
    assert.equal(
      result.text,
      "I'm [REDACTED:email], [REDACTED:phone] or [REDACTED:phone]; card [REDACTED:card], also [REDACTED:card]",
    );
    assert.deepEqual(result.counts, { email: 1, card: 2, phone: 2 });
    assert.equal(describeCounts(result.counts), "1 email address, 2 card numbers and 2 phone numbers");
  });

  test("Luhn", () => {
    assert.equal(luhnValid("79927398713"), true);
    assert.equal(luhnValid("79927398710"), false);
    assert.equal(luhnValid("4111 1111"), false, "only digits are checked");
    assert.equal(describeCounts({ email: 0, card: 1, phone: 0 }), "1 card number");
  });
});

describe("pii-redactor as a child process", () => {
  let plugin: PluginProcess;
  const hook = (hookName: string, event: unknown) =>
    plugin.peer.request("hook.on_hook", { plugin_id: "pii_redactor", hook_name: hookName, event });

  before(async () => {
    plugin = await PluginProcess.start("pii-redactor");
    const reply = await plugin.initialize();
    assert.equal(reply.tools, undefined, "a hook plugin advertises no tools");
  });
  after(async () => {
    await plugin.dispose();
  });

  test("a message with PII is transformed, with a reason", async () => {
    const reply = await hook("before_message", {
      body: "my card is 4111-1111-1111-1111 and my mail is me@example.org",
      text: "ignored when body is there",
      agent_id: "support",
    });
    assert.deepEqual(reply, {
      abort: false,
      decision: "transform",
      transformed_body: "my card is [REDACTED:card] and my mail is [REDACTED:email]",
      reason: "redacted 1 email address and 1 card number",
    });
    assert.ok(schemas.HookResponseSchema.safeParse(reply).success);
  });

  test("a clean message is allowed unchanged", async () => {
    assert.deepEqual(await hook("before_reply", { body: "Your order ships on 2026-05-01." }), {
      abort: false,
      decision: "allow",
    });
  });

  test("a payload with only `text` is redacted too; one without any text is allowed", async () => {
    const reply = (await hook("before_message", { text: "ring me at +1 415 555 2671" })) as {
      transformed_body: string;
    };
    assert.equal(reply.transformed_body, "ring me at [REDACTED:phone]");
    assert.deepEqual(await hook("before_message", { tool: "bash", args: {} }), {
      abort: false,
      decision: "allow",
    });
    assert.deepEqual(await hook("before_message", undefined), { abort: false, decision: "allow" });
  });

  test("shutdown is acknowledged and the process exits", async () => {
    const { reply, exit } = await plugin.shutdown();
    assert.deepEqual(reply, { ok: true });
    assert.equal(exit.code, 0);
  });
});
