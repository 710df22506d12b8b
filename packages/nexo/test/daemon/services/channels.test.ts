/**
 * services.channels against a real daemon: the kinds a local plugin serves, with the agents bound
 * to them and whether channel.start succeeded (or why not), and a bound kind no local plugin serves.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type DaemonDir, EXAMPLE_PLUGINS, startFromDir } from "../../helpers/daemon-dir.js";

describe("services.channels", () => {
  let env: DaemonDir;
  before(async () => {
    env = await startFromDir({
      "agents.yaml": `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: loopback }, { plugin: telegram, instance: main }]
  - id: bob
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: loopback, instance: b }]
  - id: off
    active: false
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: slack }]
`,
      "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n`,
    });
  });
  after(() => env.daemon.stop("test over"));

  it("lists served and bound kinds with their agents and start outcome", () => {
    assert.deepEqual(env.daemon.services.channels.list(), [
      {
        kind: "loopback",
        owner: "plugin:loopback",
        bindings: [
          { instance: null, agents: ["ana"], started: true },
          // The loopback plugin serves one instance per process, so the second start fails, and says why.
          {
            instance: "b",
            agents: ["bob"],
            started: false,
            error:
              "instance null is running; the loopback channel serves one instance per plugin process (stop it first)",
          },
        ],
      },
      {
        kind: "telegram",
        owner: undefined,
        bindings: [{ instance: "main", agents: ["ana"], started: false }],
      },
    ]);
  });
});
