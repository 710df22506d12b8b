/**
 * Issue 14.2, seen on a fresh clone: an agent on a real provider whose key is empty booted fine,
 * and the person on the channel got no reply at all — the error was only in the daemon's log. Now a
 * failed turn answers with a short apology (the details stay in the log), through the real daemon,
 * the real loopback channel plugin and the real Anthropic provider with no key.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { FAILED_TURN_REPLY } from "../../../src/daemon/routing/router.js";
import { type DaemonDir, EXAMPLE_PLUGINS, startFromDir } from "../../helpers/daemon-dir.js";
import { endpoint, say } from "../../helpers/loopback.js";

let run: DaemonDir;
before(async () => {
  run = await startFromDir(
    {
      "agents.yaml": `agents:
  - id: ana
    model: { provider: anthropic, model: claude-sonnet-5 }
    inbound_bindings: [{ plugin: loopback }]
`,
      "llm.yaml": 'providers:\n  anthropic: { type: anthropic, api_key: "${ANTHROPIC_API_KEY:-}" }\n',
      "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n`,
    },
    { env: { ANTHROPIC_API_KEY: "" } },
  );
});
after(() => run.daemon.stop("test over"));

describe("a turn that fails on a channel", () => {
  it("answers the person with a short error instead of silence", { timeout: 60_000 }, async () => {
    const url = await endpoint(run.stateDir);
    const reply = await say(url, "maria", "hello?");
    assert.equal(reply, FAILED_TURN_REPLY);
    assert.doesNotMatch(reply, /api|key|anthropic/i, "the operator's details stay out of the channel");
  });
});
