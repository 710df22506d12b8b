/**
 * Topic rules and NATS-style matching, shared by both brokers and by the plugin host's allowlist.
 *
 * A topic is one or more non-empty tokens joined by `.` (`plugin.inbound.slack.team_a`). A
 * pattern is a topic in which a whole token may be `*` (exactly one token) and the last token may
 * be `>` (one or more tokens, never zero: `a.>` does not match `a`).
 *
 * Beyond NATS's own rules, tokens may not contain `*` or `>` at all (NATS would read `a*` as a
 * literal; we refuse it so no one mistakes it for a glob), whitespace, control characters or
 * unpaired UTF-16 surrogates (which UTF-8 encoding would silently turn into U+FFFD, so the local
 * and NATS brokers would route them differently). Topics are capped at MAX_TOPIC_LENGTH because a
 * NATS server drops a connection whose protocol line exceeds 4 KiB.
 */
import { BrokerError } from "./errors.js";

/** In UTF-16 code units; at most 3 UTF-8 bytes each, so a topic stays well under NATS's 4 KiB line. */
export const MAX_TOPIC_LENGTH = 1024;

const STAR = 0x2a;
const GT = 0x3e;

/**
 * Whitespace as JavaScript's `\s` defines it, plus C0/C1 control characters. The common case
 * (printable ASCII and most of Unicode) is decided by the first two comparisons.
 */
function isForbiddenCode(code: number): boolean {
  if (code <= 0x20) return true;
  if (code < 0x7f) return code === STAR || code === GT;
  if (code <= 0xa0) return true;
  if (code < 0x1680) return false;
  return (
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * Why `text[start, end)` is not a literal token, or undefined when it is one. `end` is the index
 * of the next `.` or the string's length.
 */
function literalTokenProblem(text: string, start: number, end: number): string | undefined {
  if (start === end) return "is empty";
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = i + 1 < end ? text.charCodeAt(i + 1) : 0;
      if (code > 0xdbff || next < 0xdc00 || next > 0xdfff) return "contains an unpaired UTF-16 surrogate";
      i++;
    } else if (isForbiddenCode(code)) {
      if (code === STAR || code === GT) {
        return `contains "${text[i]}" (wildcards are only allowed as a whole token of a subscription pattern)`;
      }
      return `contains whitespace or a control character (U+${code.toString(16).toUpperCase().padStart(4, "0")})`;
    }
  }
  return undefined;
}

/**
 * `literalTokenProblem(...) === undefined` without building messages: this sits on the matching
 * path, where printable ASCII is decided by one range test per character.
 */
function isLiteralToken(text: string, start: number, end: number): boolean {
  if (start === end) return false;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x20 && code < 0x7f) {
      if (code === STAR || code === GT) return false;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      const next = i + 1 < end ? text.charCodeAt(i + 1) : 0;
      if (code > 0xdbff || next < 0xdc00 || next > 0xdfff) return false;
      i++;
    } else if (isForbiddenCode(code)) {
      return false;
    }
  }
  return true;
}

function tokenEnd(text: string, start: number): number {
  const dot = text.indexOf(".", start);
  return dot === -1 ? text.length : dot;
}

/** Why `text` is not a valid topic (or pattern, with `wildcards`), or undefined when it is. */
function topicProblem(text: unknown, wildcards: boolean): string | undefined {
  if (typeof text !== "string") return `must be a string, got ${text === null ? "null" : typeof text}`;
  if (text.length === 0) return "is empty";
  if (text.length > MAX_TOPIC_LENGTH)
    return `is ${text.length} characters long (at most ${MAX_TOPIC_LENGTH})`;
  let start = 0;
  for (let index = 1; ; index++) {
    const end = tokenEnd(text, start);
    const last = end === text.length;
    const single = end - start === 1 ? text.charCodeAt(start) : -1;
    if (wildcards && single === STAR) {
      // a whole-token `*` is fine anywhere in a pattern
    } else if (wildcards && single === GT) {
      if (!last) return `token ${index} is ">", which is only allowed as the last token`;
    } else {
      const problem = literalTokenProblem(text, start, end);
      if (problem !== undefined) return `token ${index} ${problem}`;
    }
    if (last) return undefined;
    start = end + 1;
  }
}

function describeInvalid(kind: string, text: unknown, problem: string): string {
  const shown =
    typeof text === "string" ? JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text) : "";
  return `invalid ${kind}${shown === "" ? "" : ` ${shown}`}: ${problem}`;
}

/** True when `topic` can be published to. */
export function isValidTopic(topic: unknown): topic is string {
  return topicProblem(topic, false) === undefined;
}

/** True when `pattern` can be subscribed to. */
export function isValidPattern(pattern: unknown): pattern is string {
  return topicProblem(pattern, true) === undefined;
}

/** Returns `topic` when it can be published to; throws BrokerError `invalid_topic` saying why not. */
export function validateTopic(topic: unknown): string {
  const problem = topicProblem(topic, false);
  if (problem !== undefined) {
    throw new BrokerError("invalid_topic", describeInvalid("topic", topic, problem), {
      topic: typeof topic === "string" ? topic : undefined,
    });
  }
  return topic as string;
}

/** Returns `pattern` when it can be subscribed to; throws BrokerError `invalid_pattern` saying why not. */
export function validatePattern(pattern: unknown): string {
  const problem = topicProblem(pattern, true);
  if (problem !== undefined) {
    throw new BrokerError("invalid_pattern", describeInvalid("pattern", pattern, problem), {
      topic: typeof pattern === "string" ? pattern : undefined,
    });
  }
  return pattern as string;
}

/** True when `topic[start..]` is one or more literal tokens. */
function restIsLiteral(topic: string, start: number): boolean {
  for (;;) {
    const end = tokenEnd(topic, start);
    if (!isLiteralToken(topic, start, end)) return false;
    if (end === topic.length) return true;
    start = end + 1;
  }
}

/** True when the pattern token `pattern[p, p + length)` equals the literal token `topic[t, t + length)`. */
function sameToken(pattern: string, p: number, topic: string, t: number, length: number): boolean {
  for (let i = 0; i < length; i++) {
    if (pattern.charCodeAt(p + i) !== topic.charCodeAt(t + i)) return false;
  }
  return true;
}

/**
 * NATS subject matching: true exactly when `pattern` is a valid pattern, `topic` a valid topic,
 * and the pattern matches the topic. Never throws; uses no regex and no split (it walks both
 * strings by index), so it is cheap enough to run against every subscription on every publish.
 */
export function topicMatches(pattern: string, topic: string): boolean {
  if (pattern.length === 0 || topic.length === 0) return false;
  if (pattern.length > MAX_TOPIC_LENGTH || topic.length > MAX_TOPIC_LENGTH) return false;
  let p = 0;
  let t = 0;
  for (;;) {
    const pEnd = tokenEnd(pattern, p);
    const tEnd = tokenEnd(topic, t);
    const pLength = pEnd - p;
    if (pLength === 1 && pattern.charCodeAt(p) === GT) {
      return pEnd === pattern.length && restIsLiteral(topic, t);
    }
    if (pLength === 1 && pattern.charCodeAt(p) === STAR) {
      if (!isLiteralToken(topic, t, tEnd)) return false;
    } else if (pLength !== tEnd - t || !sameToken(pattern, p, topic, t, pLength)) {
      return false;
    } else if (!isLiteralToken(topic, t, tEnd)) {
      // Equal tokens, so checking the topic's also rejects a bad literal in the pattern.
      return false;
    }
    const patternDone = pEnd === pattern.length;
    const topicDone = tEnd === topic.length;
    if (patternDone || topicDone) return patternDone && topicDone;
    p = pEnd + 1;
    t = tEnd + 1;
  }
}
