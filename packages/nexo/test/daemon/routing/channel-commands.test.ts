/**
 * `/new` and `/help` on a real channel (issue 17.4's commands, for every channel): through a real
 * daemon, the loopback channel plugin and the scripted model. `/new` leaves the old conversation in
 * the store and the next message lands in a fresh one; `/help` lists the commands.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CHANNEL_HELP_REPLY, NEW_CONVERSATION_REPLY } from "../../../src/daemon/routing/commands.js";
import { type DaemonDir, EXAMPLE_PLUGINS, startFromDir } from "../../helpers/daemon-dir.js";
import { endpoint, say } from "../../helpers/loopback.js";

let run: DaemonDir;
before(async () => {
  run = await startFromDir({
    "agents.yaml": `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: loopback }]
`,
    "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n`,
  });
});
after(() => run.daemon.stop("test over"));

describe("channel commands", () => {
  it("/new starts a fresh conversation and keeps the old one; /help lists the commands", {
    timeout: 120_000,
  }, async () => {
    const url = await endpoint(run.stateDir);
    const first = await say(url, "maria", "hello there");
    assert.notEqual(first, NEW_CONVERSATION_REPLY);
    const sessionsOfMaria = () =>
      run.daemon.store.sessions.list().filter((session) => session.contact === "maria");
    assert.equal(sessionsOfMaria().length, 1);
    const old = sessionsOfMaria()[0]!;

    assert.equal(await say(url, "maria", "/new"), NEW_CONVERSATION_REPLY);
    await say(url, "maria", "second start");
    const both = sessionsOfMaria();
    assert.equal(both.length, 2, "a second conversation for the same person");
    const fresh = both.find((session) => session.id !== old.id)!;
    const texts = (id: string) => JSON.stringify(run.daemon.store.transcripts.messages(id));
    assert.match(texts(old.id), /hello there/, "the old conversation is kept");
    assert.doesNotMatch(texts(fresh.id), /hello there/, "the new one starts empty");
    assert.match(texts(fresh.id), /second start/);
    assert.doesNotMatch(texts(old.id) + texts(fresh.id), /\/new/, "the command is no message to the agent");

    assert.equal(await say(url, "maria", "/help"), CHANNEL_HELP_REPLY);
    assert.equal(sessionsOfMaria().length, 2, "/help starts nothing");
  });
});
