import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { plainProgram, plainWords } from "../../src/engine/command-line.js";

describe("command lines", () => {
  test("the words of a plain invocation, quotes removed", () => {
    assert.deepEqual(plainWords("git commit -m 'a message; with | signs'"), [
      "git",
      "commit",
      "-m",
      "a message; with | signs",
    ]);
    assert.deepEqual(plainWords('ls  "my dir"\t*.txt'), ["ls", "my dir", "*.txt"]);
    assert.deepEqual(plainWords("echo ''"), ["echo", ""]);
  });

  test("anything that can start a second program, redirect or expand is not plain", () => {
    for (const line of [
      "a; b",
      "a && b",
      "a || b",
      "a | b",
      "a &",
      "a > f",
      "a < f",
      "(a)",
      "a $(b)",
      "a `b`",
      "a $X",
      'a "$X"',
      'a "`b`"',
      "a \\; b",
      "a # b",
      "a\nb",
      "a 'open",
      "   ",
      "",
    ]) {
      assert.equal(plainWords(line), undefined, JSON.stringify(line));
    }
  });

  test("the program is the first word, unless it assigns a variable", () => {
    assert.equal(plainProgram("echo hi"), "echo");
    assert.equal(plainProgram("  /usr/bin/env  x"), "/usr/bin/env");
    assert.equal(plainProgram("'echo' hi"), "echo");
    assert.equal(plainProgram("LD_PRELOAD=x ls"), undefined);
    assert.equal(plainProgram("'' ls"), undefined);
    assert.equal(plainProgram("echo hi; ls"), undefined);
  });
});
