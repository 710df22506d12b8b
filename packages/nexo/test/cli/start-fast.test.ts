/**
 * The plain `nexo start` launch read without commander (cli/start-fast.ts): the launches it takes,
 * and the ones it leaves to commander, which then gives the same help and usage errors as before.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fastStart, fastStartFlags } from "../../src/cli/start-fast.js";
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

describe("fastStart", () => {
  test("takes the global --log-format before a plain start, in both spellings", () => {
    assert.deepEqual(fastStart(["start", "--config", "dir"]), { flags: { config: "dir" } });
    assert.deepEqual(fastStart(["--log-format", "json", "start", "--config", "dir"]), {
      flags: { config: "dir" },
      logFormat: "json",
    });
    assert.deepEqual(fastStart(["--log-format=pretty", "start", "--config=dir"]), {
      flags: { config: "dir" },
      logFormat: "pretty",
    });
    assert.deepEqual(fastStart(["--log-format", "auto", "start", "--config", "dir"])?.logFormat, "auto");
  });

  test("leaves an invalid, missing or repeated format and anything but start to commander", () => {
    for (const args of [
      ["--log-format", "JSON", "start", "--config", "dir"],
      ["--log-format", "xml", "start", "--config", "dir"],
      ["--log-format", "toString", "start", "--config", "dir"],
      ["--log-format=", "start", "--config", "dir"],
      ["--log-format", "start", "--config", "dir"],
      ["--log-format"],
      ["--log-formats", "json", "start", "--config", "dir"],
      ["--log-format", "json", "--log-format", "json", "start", "--config", "dir"],
      ["--log-format", "json", "agent"],
      ["--log-format", "json", "start"],
      ["start", "--config", "dir", "--log-format", "json"],
    ])
      assert.equal(fastStart(args), undefined, args.join(" "));
  });
});

test("what the fast path leaves to commander still gets commander's help and usage errors", async () => {
  const missing = await runCli(["start"]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /required option '--config <dir>' not specified/);
  const unknown = await runCli(["start", "--config", "x", "--bogus"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown option '--bogus'/);
  const format = await runCli(["--log-format", "xml", "start", "--config", "x"]);
  assert.equal(format.code, 2);
  assert.match(
    format.stderr,
    /option '--log-format <format>' must be one of json, pretty, auto \(got "xml"\)/,
  );
  const help = await runCli(["start", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--appserver-agent <id>/);
});
