/**
 * The plain `nexo start` launch read without commander (cli/start-fast.ts): the launches it takes,
 * and the ones it leaves to commander, which then gives the same help and usage errors as before.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fastStartFlags } from "../../src/cli/start-fast.js";
import { runCli } from "../helpers/cli.js";

describe("fastStartFlags", () => {
  test("takes start with its four value flags, in both spellings", () => {
    assert.deepEqual(fastStartFlags(["start", "--config", "dir"]), { config: "dir" });
    assert.deepEqual(
      fastStartFlags([
        "start",
        "--state-dir=/s",
        "--config=dir",
        "--appserver",
        "ws://127.0.0.1:0",
        "--appserver-agent",
        "ana",
      ]),
      { config: "dir", stateDir: "/s", appserver: "ws://127.0.0.1:0", appserverAgent: "ana" },
    );
    assert.deepEqual(fastStartFlags(["start", "--config", "a=b"]), { config: "a=b" });
  });

  test("leaves everything else to commander", () => {
    for (const args of [
      [],
      ["agent"],
      ["--log-format", "json", "start", "--config", "dir"],
      ["start"],
      ["start", "--state-dir", "/s"],
      ["start", "--config", "dir", "--help"],
      ["start", "-h"],
      ["start", "--confg", "dir"],
      ["start", "--config"],
      ["start", "--config="],
      ["start", "--config", "--help"],
      ["start", "--config", "a", "--config", "b"],
      ["start", "--config", "dir", "extra"],
      ["start", "--toString", "x", "--config", "dir"],
      ["start", "--constructor=x", "--config", "dir"],
    ])
      assert.equal(fastStartFlags(args), undefined, args.join(" "));
  });
});

test("what the fast path leaves to commander still gets commander's help and usage errors", async () => {
  const missing = await runCli(["start"]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /required option '--config <dir>' not specified/);
  const unknown = await runCli(["start", "--config", "x", "--bogus"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown option '--bogus'/);
  const help = await runCli(["start", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--appserver-agent <id>/);
});
