/**
 * The AppServer's thread service over a real SQLite file, through the engine's session service:
 * a thread is a session record of the agent (listed and found again after a reopen), and shutting
 * the threads down closes the store only when the service owns it — the daemon lends its own store
 * (`closeStore: false`) and keeps using it after the AppServer door stopped.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { configureThread } from "../../../../src/doors/appserver/agent.js";
import { ThreadService } from "../../../../src/doors/appserver/threads/service.js";
import { createLogger } from "../../../../src/log.js";
import { Store } from "../../../../src/store/index.js";

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "nexo-thread-service-"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function threads(store: Store, closeStore?: boolean): ThreadService {
  return new ThreadService({
    workspace: dir,
    logger: createLogger({ level: "silent" }),
    agentId: "ana",
    approvalTimeoutMs: 60_000,
    openStore: () => Promise.resolve(store),
    ...(closeStore === undefined ? {} : { closeStore }),
    openSession: () => Promise.reject(new Error("no turns in this test")),
    configure: configureThread,
    onRuntimeChanged: () => {},
  });
}

const identity = { channelName: "desktop", userId: "u1", channelContext: "", workspacePath: "" };

describe("AppServer thread service", () => {
  test("a thread is a session record of the agent, listed and found again after a reopen", async () => {
    const path = join(dir, "nexo.db");
    const store = Store.open(path);
    const service = threads(store);
    const thread = await service.create({ identity, displayName: "first thread" });
    const record = store.sessions.get(thread.id);
    assert.equal(record?.agentId, "ana");
    assert.equal(record?.channel, "desktop");
    assert.equal(record?.title, "first thread");
    await service.shutdown(false, 1000);
    assert.throws(() => store.sessions.list(), "the service closed the store it opened");

    const again = threads(Store.open(path));
    const listed = await again.list({ identity });
    assert.deepEqual(
      listed.map((t) => t.id),
      [thread.id],
    );
    assert.equal((await again.record(thread.id)).title, "first thread");
    await again.shutdown(false, 1000);
  });

  test("closeStore: false leaves a lent store open after shutdown", async () => {
    const store = Store.open(join(dir, "nexo.db"));
    const service = threads(store, false);
    const thread = await service.create({ identity });
    await service.shutdown(true, 1000);
    assert.equal(store.sessions.get(thread.id)?.id, thread.id, "the daemon still uses its store");
    store.close();
  });
  test("children and descendants are exact, however many newer threads the agent has", async () => {
    const store = Store.open(join(dir, "nexo.db"));
    const service = threads(store, false);
    const parent = await service.create({ identity });
    // A child thread as a Spawn sub-agent leaves it: linked by the store's parent column and the
    // thread's own sub-agent link.
    const childOf = (parentId: string, depth: number) =>
      store.sessions.create({
        agentId: "ana",
        parentId,
        metadata: {
          workspace: dir,
          appserver: {
            status: "active",
            historyMode: "server",
            subAgent: {
              parentThreadId: parentId,
              parentTurnId: "turn_1",
              spawnCallId: `call_${depth}`,
              rootThreadId: parent.id,
              depth,
            },
          },
        },
      });
    const child = childOf(parent.id, 1);
    const grandchild = childOf(child.id, 2);
    for (let i = 0; i < 1100; i++) await service.create({ identity });
    assert.ok(!store.sessions.list({ agentId: "ana", limit: 1000 }).some((s) => s.id === child.id));

    const children = await service.children(parent.id, false);
    assert.deepEqual(
      children.map(({ thread, link }) => [thread.id, link.depth]),
      [[child.id, 1]],
    );
    assert.deepEqual(await service.descendants(parent.id), [child.id, grandchild.id]);
    await service.setChildClosed(parent.id, child.id, true);
    assert.deepEqual(await service.children(parent.id, false), []);
    assert.equal((await service.children(parent.id, true))[0]?.link.closed, true);
    await service.shutdown(false, 1000);
    store.close();
  });
});
