/**
 * The daemon's channel sessions against a real store: a new contact's session starts empty (its
 * record created, no transcript read), a known contact's session is resumed with its transcript as
 * history — also by a fresh DaemonSessions, as after a restart — and `/new` starts an empty one.
 * `openMany` (the router's burst of new contacts) opens several at once and keeps nothing when one
 * of them fails.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type AgentRuntimeSettings, DaemonSessions } from "../../src/daemon/sessions.js";
import { TenantProviders } from "../../src/engine/providers/llm-config.js";
import { ToolRegistry } from "../../src/engine/tools/registry.js";
import { Store } from "../../src/store/index.js";

describe("DaemonSessions", () => {
  const dir = mkdtempSync(join(tmpdir(), "nexo-daemon-sessions-"));
  const store = Store.open(join(dir, "nexo.db"));
  after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const agent: AgentRuntimeSettings = {
    id: "ana",
    provider: "scripted",
    model: "m",
    maxTokens: 100,
    maxTurns: 2,
    workspace: dir,
    mode: "default",
    allow: [],
  };
  const sessionsOf = () =>
    new DaemonSessions({
      store,
      providers: new TenantProviders({ providers: {}, tenants: {} }),
      shared: new ToolRegistry(),
      agents: () => new Map([["ana", agent]]),
    });
  const key = (contact: string) => ({ agentId: "ana", channel: "chat", account: undefined, contact });

  it("loads the engine's session code with the first session, not before", async () => {
    const sessions = sessionsOf();
    assert.throws(() => sessions.open(key("early")), /the engine's session code is not loaded yet/);
    const loading = sessions.loading();
    assert.ok(loading instanceof Promise);
    await loading;
    // Loaded once per process: no promise for a turn from then on, whichever instance asks.
    assert.equal(sessions.loading(), undefined);
    assert.equal(sessionsOf().loading(), undefined);
    assert.equal(sessions.open(key("early")).history.length, 0);
  });

  it("creates the record of a new contact and starts with no history", () => {
    const session = sessionsOf().open(key("new-contact"));
    assert.deepEqual(session.history, []);
    const record = store.sessions.get(session.id);
    assert.equal(record?.contact, "new-contact");
    assert.equal(record?.channel, "chat");
  });

  it("resumes a known contact with its transcript, also after a restart", () => {
    const first = sessionsOf().open(key("known"));
    store.transcripts.append(first.id, { role: "user", content: "hello" });
    store.transcripts.append(first.id, { role: "assistant", content: "hi there" });
    const resumed = sessionsOf().open(key("known"));
    assert.equal(resumed.id, first.id);
    assert.deepEqual(
      resumed.history.map((m) => [m.role, m.content]),
      [
        ["user", [{ type: "text", text: "hello" }]],
        ["assistant", [{ type: "text", text: "hi there" }]],
      ],
    );
  });

  it("starts an empty conversation on /new and opens it afterwards", () => {
    const sessions = sessionsOf();
    const before = sessions.open(key("renewing"));
    store.transcripts.append(before.id, { role: "user", content: "old topic" });
    const renewed = sessions.renew(key("renewing"));
    assert.notEqual(renewed, before.id);
    const after = sessionsOf().open(key("renewing"));
    assert.equal(after.id, renewed);
    assert.deepEqual(after.history, []);
  });

  it("opens several contacts at once, each once, and open finds them afterwards", () => {
    const sessions = sessionsOf();
    const before = sessions.liveCount;
    sessions.openMany([key("burst-a"), key("burst-b"), key("burst-a")]);
    assert.equal(sessions.liveCount, before + 2);
    for (const contact of ["burst-a", "burst-b"]) {
      const record = store.sessions.findByKey({ agentId: "ana", channel: "chat", account: null, contact });
      assert.ok(record, `a record for ${contact}`);
      const session = sessions.open(key(contact));
      assert.equal(session.id, record.id);
      assert.deepEqual(session.history, []);
    }
    assert.equal(sessions.liveCount, before + 2);
  });

  it("keeps no session and no record when opening one of them fails", () => {
    const broken: AgentRuntimeSettings = { ...agent, id: "broken", provider: "no-such-provider" };
    const sessions = new DaemonSessions({
      store,
      providers: new TenantProviders({ providers: {}, tenants: {} }),
      shared: new ToolRegistry(),
      agents: () =>
        new Map([
          ["ana", agent],
          ["broken", broken],
        ]),
    });
    const good = key("rolled-back");
    const bad = { ...key("never-opened"), agentId: "broken" };
    assert.throws(() => sessions.openMany([good, bad]), /no-such-provider/);
    assert.equal(sessions.liveCount, 0);
    for (const k of [good, bad]) {
      assert.equal(store.sessions.findByKey({ ...k, account: null }), undefined);
    }
    // Opened alone afterwards, the good one works as it always did.
    const session = sessions.open(good);
    assert.equal(store.sessions.get(session.id)?.contact, "rolled-back");
  });
});
