import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { BrokerError } from "../../src/broker/errors.js";
import {
  isValidPattern,
  isValidTopic,
  MAX_TOPIC_LENGTH,
  topicMatches,
  validatePattern,
  validateTopic,
} from "../../src/broker/topic.js";

// --- a deliberately naive reference: split, check with regexes, match recursively -------------

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what topics must refuse
const FORBIDDEN = /[\s\u0000-\u001f\u007f-\u009f*>]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function referenceLiteral(token: string): boolean {
  return token.length > 0 && !FORBIDDEN.test(token) && !LONE_SURROGATE.test(token);
}
function referenceTopic(topic: string): boolean {
  return topic.length > 0 && topic.length <= MAX_TOPIC_LENGTH && topic.split(".").every(referenceLiteral);
}
function referencePattern(pattern: string): boolean {
  if (pattern.length === 0 || pattern.length > MAX_TOPIC_LENGTH) return false;
  const tokens = pattern.split(".");
  return tokens.every(
    (token, index) =>
      token === "*" || (token === ">" && index === tokens.length - 1) || referenceLiteral(token),
  );
}
function referenceTokens(pattern: readonly string[], topic: readonly string[]): boolean {
  const [head, ...rest] = pattern;
  if (head === undefined) return topic.length === 0;
  if (head === ">") return topic.length >= 1;
  if (topic.length === 0) return false;
  return (head === "*" || head === topic[0]) && referenceTokens(rest, topic.slice(1));
}
function referenceMatches(pattern: string, topic: string): boolean {
  return (
    referencePattern(pattern) &&
    referenceTopic(topic) &&
    referenceTokens(pattern.split("."), topic.split("."))
  );
}

// --- generators -------------------------------------------------------------------------------

/** Tokens that are valid literals, kept short so patterns and topics collide often. */
const literalToken = fc.oneof(
  fc.constantFrom("a", "b", "c", "ab", "team_a", "x-1", "é", "日本", "👋", "K:9"),
  fc.string({ minLength: 1, maxLength: 6, unit: fc.constantFrom("a", "b", "_", "-", "ü", "0") }),
);
/** Anything that can sit between dots, valid or not. */
const anyToken = fc.oneof(
  { weight: 6, arbitrary: literalToken },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "*",
      ">",
      "",
      " ",
      "a b",
      "a*",
      ">a",
      "**",
      "\t",
      "\n",
      "\u00a0",
      "\u2028",
      "\ufeff",
      "\u0000",
      "\u007f",
      "\u0085",
      "\ud800",
      "\udc00x",
      "a\ud83d",
    ),
  },
);
const literalTokens = fc.array(literalToken, { minLength: 1, maxLength: 6 });
const join = (tokens: readonly string[]) => tokens.join(".");
const validTopic = literalTokens.map(join);

function errorOf(fn: () => unknown): BrokerError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof BrokerError, `expected BrokerError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a BrokerError");
}

// --- validation -------------------------------------------------------------------------------

describe("validateTopic", () => {
  it("accepts dotted literal tokens, Unicode included", () => {
    for (const topic of [
      "a",
      "a.b.c",
      "plugin.inbound.slack.team_a",
      "plugin.outbound.whatsapp.+573000000000",
      "über.日本.👋",
      "k:v-1_2",
      "x".repeat(MAX_TOPIC_LENGTH),
    ]) {
      assert.equal(validateTopic(topic), topic);
      assert.equal(isValidTopic(topic), true, topic);
    }
  });

  it("rejects empty tokens, wildcards, whitespace, controls, lone surrogates, overlength and non-strings", () => {
    const cases: [unknown, RegExp][] = [
      ["", /is empty/],
      [".", /token 1 is empty/],
      ["a.", /token 2 is empty/],
      [".a", /token 1 is empty/],
      ["a..b", /token 2 is empty/],
      ["a.*", /token 2 contains "\*"/],
      ["a.>", /token 2 contains ">"/],
      ["a*b", /wildcards are only allowed as a whole token/],
      ["a b", /whitespace or a control character \(U\+0020\)/],
      ["a\tb", /U\+0009/],
      ["a.\u00a0", /U\+00A0/],
      ["a\u2028", /U\+2028/],
      ["a\u0085", /U\+0085/],
      ["\ud800", /unpaired UTF-16 surrogate/],
      ["a.\udc00", /unpaired UTF-16 surrogate/],
      ["x".repeat(MAX_TOPIC_LENGTH + 1), new RegExp(`at most ${MAX_TOPIC_LENGTH}`)],
      [42, /must be a string, got number/],
      [null, /must be a string, got null/],
    ];
    for (const [topic, message] of cases) {
      const error = errorOf(() => validateTopic(topic));
      assert.equal(error.code, "invalid_topic");
      assert.match(error.message, message, JSON.stringify(topic));
      assert.equal(isValidTopic(topic), false);
    }
  });

  it("quotes the topic in the message, shortened when long", () => {
    const error = errorOf(() => validateTopic(`${"y".repeat(100)}..`));
    assert.match(error.message, /^invalid topic "y{80}…": token 2 is empty$/);
    assert.equal(error.topic, `${"y".repeat(100)}..`);
  });
});

describe("validatePattern", () => {
  it("accepts * as any whole token and > as the whole last token", () => {
    for (const pattern of ["*", ">", "a.*", "a.>", "*.*.>", "a.*.c", "plugin.inbound.slack.>", "*.b"]) {
      assert.equal(validatePattern(pattern), pattern);
      assert.equal(isValidPattern(pattern), true, pattern);
    }
  });

  it("rejects > before the end, partial-token wildcards and what topics reject", () => {
    const cases: [string, RegExp][] = [
      ["a.>.b", /token 2 is ">", which is only allowed as the last token/],
      [">.a", /token 1 is ">"/],
      ["a*", /token 1 contains "\*"/],
      ["*a", /token 1 contains "\*"/],
      ["a.**", /token 2 contains "\*"/],
      ["a.>>", /token 2 contains ">"/],
      ["", /is empty/],
      ["a..*", /token 2 is empty/],
      ["a.* ", /token 2 contains "\*"/],
      ["*.b c", /token 2 contains whitespace/],
    ];
    for (const [pattern, message] of cases) {
      const error = errorOf(() => validatePattern(pattern));
      assert.equal(error.code, "invalid_pattern");
      assert.match(error.message, message, pattern);
      assert.equal(isValidPattern(pattern), false);
    }
  });

  it("every valid topic is a valid pattern", () => {
    fc.assert(fc.property(validTopic, (topic) => isValidPattern(topic)));
  });
});

// --- matching ---------------------------------------------------------------------------------

describe("topicMatches", () => {
  it("follows the plugin contract's examples (§6)", () => {
    assert.equal(topicMatches("plugin.inbound.slack.>", "plugin.inbound.slack.team_a"), true);
    assert.equal(topicMatches("plugin.inbound.slack.>", "plugin.inbound.slack.team_a.thread_42"), true);
    assert.equal(topicMatches("plugin.inbound.slack.>", "plugin.inbound.slack"), false);
    assert.equal(topicMatches("plugin.inbound.slack", "plugin.inbound.slack"), true);
    assert.equal(topicMatches("plugin.inbound.slack", "plugin.inbound.slack.team_a"), false);
    assert.equal(topicMatches("plugin.inbound.slack.>", "plugin.inbound.slackers.x"), false);
  });

  it("matches * against exactly one token", () => {
    const table: [string, string, boolean][] = [
      ["a.*", "a.b", true],
      ["a.*", "a", false],
      ["a.*", "a.b.c", false],
      ["*.b", "a.b", true],
      ["*.b", "b", false],
      ["a.*.c", "a.x.c", true],
      ["a.*.c", "a.x.y.c", false],
      ["*", "a", true],
      ["*", "a.b", false],
      ["*.*", "a.b", true],
      ["a.*.>", "a.b.c", true],
      ["a.*.>", "a.b", false],
    ];
    for (const [pattern, topic, expected] of table) {
      assert.equal(topicMatches(pattern, topic), expected, `${pattern} vs ${topic}`);
    }
  });

  it("matches > against one or more trailing tokens", () => {
    const table: [string, string, boolean][] = [
      [">", "a", true],
      [">", "a.b.c", true],
      ["a.>", "a", false],
      ["a.>", "a.b", true],
      ["a.>", "a.b.c.d", true],
      ["a.>", "b.c", false],
      ["a.b.>", "a.b", false],
    ];
    for (const [pattern, topic, expected] of table) {
      assert.equal(topicMatches(pattern, topic), expected, `${pattern} vs ${topic}`);
    }
  });

  it("compares literals exactly: case, length and prefixes matter", () => {
    assert.equal(topicMatches("a.b", "a.B"), false);
    assert.equal(topicMatches("a.b", "a.bb"), false);
    assert.equal(topicMatches("a.bb", "a.b"), false);
    assert.equal(topicMatches("a.b", "a.b.c"), false);
    assert.equal(topicMatches("a.b.c", "a.b"), false);
    assert.equal(topicMatches("日本.*", "日本.x"), true);
  });

  it("never matches when either side is invalid, unlike a matcher that stops at the first >", () => {
    const table: [string, string][] = [
      ["a.>.b", "a.x.b"],
      ["a.>.b", "a.x"],
      ["", ""],
      ["a", ""],
      ["", "a"],
      ["a..b", "a..b"],
      ["a.", "a."],
      [".a", ".a"],
      ["a.*", "a."],
      ["a.*", "a.*"],
      ["a.>", "a.>"],
      ["a.>", "a.b."],
      ["a.>", "a.b..c"],
      ["a*", "a*"],
      ["a b", "a b"],
      ["*", " "],
      [">", "a.\ud800"],
      ["a.\ud800", "a.\ud800"],
      ["x".repeat(MAX_TOPIC_LENGTH + 1), "x".repeat(MAX_TOPIC_LENGTH + 1)],
      [">", "x".repeat(MAX_TOPIC_LENGTH + 1)],
    ];
    for (const [pattern, topic] of table) {
      assert.equal(
        topicMatches(pattern, topic),
        false,
        `${JSON.stringify(pattern)} vs ${JSON.stringify(topic)}`,
      );
    }
  });

  it("a valid topic, used as a pattern, matches itself", () => {
    fc.assert(fc.property(validTopic, (topic) => topicMatches(topic, topic)));
  });

  it("> never matches zero tokens, and matches any non-empty continuation", () => {
    fc.assert(
      fc.property(literalTokens, literalTokens, (prefix, rest) => {
        const base = join(prefix);
        const pattern = `${base}.>`;
        if (topicMatches(pattern, base)) return false;
        return (
          topicMatches(pattern, `${base}.${join(rest)}`) ||
          join(prefix).length + 1 + join(rest).length > MAX_TOPIC_LENGTH
        );
      }),
    );
  });

  it("* matches any one token in its place and never two", () => {
    fc.assert(
      fc.property(literalTokens, fc.nat(), literalToken, literalToken, (tokens, at, first, second) => {
        const index = at % tokens.length;
        const pattern = join(tokens.map((token, i) => (i === index ? "*" : token)));
        const one = join(tokens.map((token, i) => (i === index ? first : token)));
        const two = join(tokens.map((token, i) => (i === index ? `${first}.${second}` : token)));
        return (
          topicMatches(pattern, tokens.join(".")) && topicMatches(pattern, one) && !topicMatches(pattern, two)
        );
      }),
    );
  });

  it("agrees with the reference matcher on generated token lists, valid or not", () => {
    fc.assert(
      fc.property(
        fc.array(anyToken, { minLength: 0, maxLength: 6 }),
        fc.array(anyToken, { minLength: 0, maxLength: 6 }),
        (patternTokens, topicTokens) => {
          const pattern = join(patternTokens);
          const topic = join(topicTokens);
          return topicMatches(pattern, topic) === referenceMatches(pattern, topic);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it("agrees with the reference when the pattern is derived from the topic (so matches are common)", () => {
    const derived = fc
      .array(fc.tuple(anyToken, fc.constantFrom("keep", "star", "other")), { minLength: 1, maxLength: 6 })
      .chain((pairs) =>
        fc.tuple(
          fc.constant(pairs.map(([token]) => token)),
          fc.constant(
            pairs.map(([token, how]) => (how === "keep" ? token : how === "star" ? "*" : `${token}z`)),
          ),
          fc.nat({ max: pairs.length }),
          fc.boolean(),
        ),
      );
    fc.assert(
      fc.property(derived, ([topicTokens, patternTokens, cut, useTail]) => {
        const pattern = useTail ? join([...patternTokens.slice(0, cut), ">"]) : join(patternTokens);
        const topic = join(topicTokens);
        return topicMatches(pattern, topic) === referenceMatches(pattern, topic);
      }),
      { numRuns: 20_000 },
    );
  });

  it("agrees with the validators: a match implies a valid pattern and a valid topic", () => {
    fc.assert(
      fc.property(fc.array(anyToken, { maxLength: 5 }), fc.array(anyToken, { maxLength: 5 }), (p, t) => {
        const pattern = join(p);
        const topic = join(t);
        if (!topicMatches(pattern, topic)) return true;
        return isValidPattern(pattern) && isValidTopic(topic);
      }),
      { numRuns: 5000 },
    );
  });

  it("the validators agree with the reference on arbitrary strings", () => {
    const text = fc.oneof(
      fc.array(anyToken, { maxLength: 6 }).map(join),
      fc.string({ maxLength: 12, unit: "binary" }),
    );
    fc.assert(
      fc.property(text, (value) => {
        return (
          isValidTopic(value) === referenceTopic(value) && isValidPattern(value) === referencePattern(value)
        );
      }),
      { numRuns: 20_000 },
    );
  });

  it("never throws, whatever it is given", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 20 }),
        fc.string({ unit: "binary", maxLength: 20 }),
        (p, t) => {
          topicMatches(p, t);
          return true;
        },
      ),
    );
  });
});
