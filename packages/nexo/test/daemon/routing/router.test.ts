import assert from "node:assert/strict";
import { createHook } from "node:async_hooks";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ChannelConnectionError, ChannelRateLimitedError } from "@nexo/wire";
import { createEvent } from "../../../src/broker/event.js";
import { LocalBroker } from "../../../src/broker/local.js";
import type { BrokerEvent } from "../../../src/broker/types.js";
import {
  type ChannelAdapter,
  ChannelRegistry,
  type OutboundMessage,
} from "../../../src/channels/registry.js";
import { BindingTable } from "../../../src/daemon/routing/bindings.js";
import { CHANNEL_HELP_REPLY, NEW_CONVERSATION_REPLY } from "../../../src/daemon/routing/commands.js";
import { inboundDedupKey } from "../../../src/daemon/routing/inbound.js";
import { ReplySender } from "../../../src/daemon/routing/outbound.js";
import { Router, type RouterOptions, type SessionKey } from "../../../src/daemon/routing/router.js";
import { createAgentSession } from "../../../src/engine/assemble.js";
import type { AgentSession } from "../../../src/engine/session.js";
import { storeTranscriptSink } from "../../../src/engine/transcript-sink.js";
import type { ChatRequest, LlmProvider, ProviderEvent } from "../../../src/engine/types.js";
import { type InboxRepository, Store } from "../../../src/store/index.js";

const quiet = { info() {}, warn() {}, error() {} };

/** Polls `ready` (every 10 ms, up to a generous minute for a loaded machine). */
async function waitFor(ready: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 60_000; !ready(); await sleep(10))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

/** A provider that answers "echo: <text>" after `delayMs`, tracking how many calls overlap. */
class EchoProvider implements LlmProvider {
  readonly id = "echo";
  running = 0;
  maxRunning = 0;
  /** Overlap of calls for alice's messages ("a0", "a1", …). */
  aliceRunning = 0;
  aliceMaxRunning = 0;
  calls = 0;
  constructor(private readonly delayMs: number) {}
  async *stream(request: ChatRequest): AsyncIterable<ProviderEvent> {
    this.calls++;
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      const last = request.messages.at(-1)!.content[0] as { text: string };
      const alice = /^a\d$/.test(last.text);
      if (alice) this.aliceMaxRunning = Math.max(this.aliceMaxRunning, ++this.aliceRunning);
      await sleep(this.delayMs);
      if (alice) this.aliceRunning--;
      yield { type: "text_delta", text: `echo: ${last.text}` };
      yield { type: "stop", reason: "end_turn" };
    } finally {
      this.running--;
    }
  }
}

class RecordingChannel implements ChannelAdapter {
  readonly owner = "test";
  readonly sent: OutboundMessage[] = [];
  rateLimitFirst = 0;
  /** Sends refused (as a channel that is down would) before any goes through. */
  failFirst = 0;
  attempts = 0;
  constructor(readonly kind: string) {}
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async sendOutbound(message: OutboundMessage) {
    this.attempts++;
    if (this.failFirst > 0) {
      this.failFirst--;
      throw new ChannelConnectionError("the channel is not connected");
    }
    if (this.rateLimitFirst > 0) {
      this.rateLimitFirst--;
      throw new ChannelRateLimitedError("slow down", { retry_after_secs: 2 });
    }
    this.sent.push(message);
    return { messageId: String(this.sent.length), sentAtUnix: 0 };
  }
}

function setup(delayMs = 20, queueCap = 8, inbox?: InboxRepository, extra: Partial<RouterOptions> = {}) {
  const provider = new EchoProvider(delayMs);
  const sessions = new Map<string, AgentSession>();
  const opened: SessionKey[] = [];
  const renewed: SessionKey[] = [];
  const broker = new LocalBroker();
  const channels = new ChannelRegistry();
  const chat = new RecordingChannel("chat");
  channels.register(chat);
  const waits: number[] = [];
  const router = new Router({
    bindings: new BindingTable([
      { id: "ana", active: true, inbound_bindings: [{ plugin: "chat" }] },
      {
        id: "bob",
        active: true,
        inbound_bindings: [{ plugin: "chat", instance: "sales" }, { plugin: "remote" }],
      },
      { id: "off", active: false, inbound_bindings: [{ plugin: "ghost" }] },
    ]),
    sessions: {
      open: (key) => {
        const id = `${key.agentId}|${key.channel}|${key.account ?? ""}|${key.contact}`;
        let session = sessions.get(id);
        if (!session) {
          opened.push(key);
          session = createAgentSession({
            agentId: key.agentId,
            provider,
            model: "m",
            maxTokens: 100,
            maxTurns: 2,
            workspace: mkdtempSync(join(tmpdir(), "nexo-router-")),
          });
          sessions.set(id, session);
        }
        return session;
      },
      renew: (key) => {
        const id = `${key.agentId}|${key.channel}|${key.account ?? ""}|${key.contact}`;
        sessions.delete(id);
        renewed.push(key);
        return `renewed-${renewed.length}`;
      },
    },
    replies: new ReplySender(channels, broker, { wait: async (ms) => void waits.push(ms) }),
    logger: quiet,
    queueCap: () => queueCap,
    ...(inbox ? { inbox } : {}),
    ...extra,
  });
  const inbound = (topic: string, from: string, text: string, messageId?: string) =>
    router.handle(
      topic,
      createEvent({
        topic,
        source: "test",
        payload: messageId === undefined ? { from, text } : { from, text, message_id: messageId },
      }),
    );
  return { router, provider, chat, broker, opened, renewed, inbound, waits };
}

describe("router", () => {
  test("each message is routed once to the owning agent and answered through the channel", async () => {
    const { router, chat, opened, inbound } = setup();
    inbound("plugin.inbound.chat", "alice", "hi");
    inbound("plugin.inbound.chat.sales", "carol", "price?");
    await router.drain(5000);
    assert.deepEqual(opened.map((k) => [k.agentId, k.channel, k.contact]).sort(), [
      ["ana", "chat", "alice"],
      ["bob", "chat.sales", "carol"],
    ]);
    assert.deepEqual(
      chat.sent
        .map((m) => [m.to, (m as { body: string }).body, (m as { instance?: string }).instance])
        .sort(),
      [
        ["alice", "echo: hi", undefined],
        ["carol", "echo: price?", "sales"],
      ],
    );
    assert.equal(router.stats().routed, 2);
  });

  test("/new and /help are answered by the daemon, in turn order, without a model call", async () => {
    const { router, provider, chat, opened, renewed, inbound } = setup(20);
    inbound("plugin.inbound.chat", "alice", "a0");
    inbound("plugin.inbound.chat", "alice", " /NEW ");
    inbound("plugin.inbound.chat", "alice", "a1");
    inbound("plugin.inbound.chat", "alice", "/help");
    inbound("plugin.inbound.chat", "alice", "/new idea: a sentence is no command");
    await router.drain(5000);
    const bodies = chat.sent.map((m) => (m as { body: string }).body);
    assert.deepEqual(bodies, [
      "echo: a0",
      NEW_CONVERSATION_REPLY,
      "echo: a1",
      CHANNEL_HELP_REPLY,
      "echo: /new idea: a sentence is no command",
    ]);
    assert.equal(provider.calls, 3, "the commands reached no model");
    assert.deepEqual(
      renewed.map((k) => [k.agentId, k.contact]),
      [["ana", "alice"]],
    );
    // After /new the next message opened a session again (the test's opener forgot the old one).
    assert.equal(opened.filter((k) => k.contact === "alice").length, 2);
  });

  test("one session runs one turn at a time; different sessions run concurrently", async () => {
    const { router, provider, chat, inbound } = setup(30);
    for (let i = 0; i < 3; i++) inbound("plugin.inbound.chat", "alice", `a${i}`);
    for (let i = 0; i < 3; i++) inbound("plugin.inbound.chat", `user${i}`, "x");
    await router.drain(5000);
    assert.equal(chat.sent.length, 6);
    const aliceReplies = chat.sent.filter((m) => m.to === "alice").map((m) => (m as { body: string }).body);
    assert.deepEqual(aliceReplies, ["echo: a0", "echo: a1", "echo: a2"], "in order, one after another");
    assert.ok(provider.maxRunning >= 2, "other sessions ran at the same time");
    assert.equal(provider.aliceMaxRunning, 1, "alice's turns never overlapped");
  });

  test("a drain that ends before its grace leaves no grace timer behind (issue 10)", async () => {
    const { router, chat, inbound } = setup(10);
    inbound("plugin.inbound.chat", "alice", "hi");
    // Every Timeout created while draining, until it fires or is cleared.
    const pending = new Set<number>();
    const hook = createHook({
      init(id, type) {
        if (type === "Timeout") pending.add(id);
      },
      destroy(id) {
        pending.delete(id);
      },
    }).enable();
    try {
      await router.drain(600_000);
      assert.equal(chat.sent.length, 1, "the turn ended within the grace");
      // destroy hooks run after the clear, on a later tick.
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      assert.equal(pending.size, 0, "the 10-minute grace timer is still pending after the drain");
    } finally {
      hook.disable();
    }
  });

  test("unbound, inactive-agent and malformed messages are counted, not lost silently", async () => {
    const { router, inbound } = setup();
    // What handle says is what an acknowledged publish answers the plugin (bridge.ts).
    assert.deepEqual(inbound("plugin.inbound.nobody", "x", "hello"), {
      status: "refused",
      reason: "not_routed",
      detail: "no agent is bound to plugin.inbound.nobody",
    });
    inbound("plugin.inbound.ghost", "x", "hello");
    inbound("plugin.inbound.chat.other", "x", "no binding for this instance");
    const malformed = router.handle(
      "plugin.inbound.chat",
      createEvent({ topic: "plugin.inbound.chat", source: "t", payload: { text: "who?" } }),
    );
    assert.equal(malformed.status === "refused" && malformed.reason, "invalid_message");
    await router.drain(1000);
    assert.deepEqual(
      { unbound: router.stats().unbound, malformed: router.stats().malformed, routed: router.stats().routed },
      { unbound: 3, malformed: 1, routed: 0 },
    );
  });

  test("a full session queue refuses and counts; other sessions are unaffected", async () => {
    const { router, chat, inbound } = setup(40, 2);
    const outcomes = Array.from({ length: 6 }, (_, i) => inbound("plugin.inbound.chat", "flood", `m${i}`));
    assert.deepEqual(outcomes[0], { status: "queued", durable: false }, "no inbox: queued in memory only");
    const last = outcomes.at(-1)!;
    assert.equal(last.status === "refused" && last.reason, "queue_full");
    inbound("plugin.inbound.chat", "calm", "hello");
    await router.drain(5000);
    const stats = router.stats();
    assert.ok(stats.queueFull >= 3, `refused ${stats.queueFull}`);
    assert.ok(chat.sent.some((m) => m.to === "calm"));
  });

  test("a rate-limited channel is retried after the retry_after it asked for", async () => {
    const { router, chat, inbound, waits } = setup();
    chat.rateLimitFirst = 2;
    inbound("plugin.inbound.chat", "alice", "hi");
    await router.drain(5000);
    assert.deepEqual(waits, [2000, 2000]);
    assert.equal(chat.sent.length, 1);
    assert.equal(router.stats().repliesSent, 1);
  });

  test("a kind no local adapter serves is answered on plugin.outbound.<kind> through the broker", async () => {
    const { router, broker, inbound } = setup();
    const got: BrokerEvent[] = [];
    broker.subscribe("plugin.outbound.remote.>", (e) => void got.push(e));
    broker.subscribe("plugin.outbound.remote", (e) => void got.push(e));
    inbound("plugin.inbound.remote", "dave", "over there");
    await router.drain(5000);
    for (let i = 0; i < 50 && got.length === 0; i++) await sleep(10);
    assert.equal(got.length, 1);
    assert.deepEqual(got[0]!.payload, { to: "dave", text: "echo: over there" });
  });

  test("two active agents claiming one binding is refused", () => {
    assert.throws(
      () =>
        new BindingTable([
          { id: "a", active: true, inbound_bindings: [{ plugin: "chat" }] },
          { id: "b", active: true, inbound_bindings: [{ plugin: "chat" }] },
        ]),
      /claimed by both a and b/,
    );
  });
});

describe("router with the durable inbox (a real SQLite file)", () => {
  const storeFile = (options?: Parameters<typeof Store.open>[1]) =>
    Store.open(join(mkdtempSync(join(tmpdir(), "nexo-router-inbox-")), "nexo.db"), options);
  const bodies = (chat: RecordingChannel) => chat.sent.map((m) => [m.to, (m as { body: string }).body]);

  test("a message is in the inbox as soon as handle returns, and done once its turn has ended", async () => {
    const store = storeFile();
    const { router, chat, inbound } = setup(20, 8, store.inbox);
    assert.deepEqual(inbound("plugin.inbound.chat", "alice", "hi"), { status: "queued", durable: true });
    inbound("plugin.inbound.chat", "bob", "yo");
    assert.deepEqual(
      store.inbox.undone().map((m) => m.text),
      ["hi", "yo"],
    );
    await router.drain(5000);
    assert.equal(store.inbox.pending, 0);
    assert.equal(chat.sent.length, 2);
    store.close();
  });

  test("replay answers what an earlier run left undone, in order per session, exactly once", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "nexo-router-inbox-")), "nexo.db");
    const before = Store.open(path);
    for (const [contact, text] of [
      ["alice", "a0"],
      ["bob", "b0"],
      ["alice", "a1"],
      ["alice", "a2"],
    ] as const) {
      const message = {
        kind: "chat",
        instance: undefined,
        contact,
        account: undefined,
        senderId: contact,
        messageId: `k-${text}`,
        text,
        attachments: [],
      };
      before.inbox.accept(inboundDedupKey({ ...message, eventId: "-" }), message);
    }
    before.close();
    const store = Store.open(path);
    const { router, chat, inbound } = setup(10, 8, store.inbox);
    assert.equal(router.replay(), 4);
    assert.equal(router.replay(), 0, "a second replay queues nothing already queued");
    // The channel delivers one of them again (same message id) while it is being replayed.
    inbound("plugin.inbound.chat", "alice", "a1", "k-a1");
    await router.drain(5000);
    assert.deepEqual(
      bodies(chat).filter(([to]) => to === "alice"),
      [
        ["alice", "echo: a0"],
        ["alice", "echo: a1"],
        ["alice", "echo: a2"],
      ],
    );
    assert.equal(chat.sent.length, 4);
    assert.equal(store.inbox.pending, 0);
    assert.equal(router.stats().replayed, 4);
    assert.equal(router.stats().duplicates, 1);
    assert.equal(router.replay(), 0, "nothing is left undone");
    store.close();
  });

  test("replay after a kill mid-turn stores the message once, and a message already answered is not answered again", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "nexo-router-inbox-")), "nexo.db");
    const before = Store.open(path);
    const message = (contact: string, text: string) => ({
      kind: "chat",
      instance: undefined,
      contact,
      account: undefined,
      senderId: contact,
      messageId: `k-${text}`,
      text,
    });
    // What a daemon killed mid-turn leaves: both messages undone in the inbox; alice's turn had
    // stored her message (the model had not answered); bob's had stored his and its answer.
    const sessionIds = new Map<string, string>();
    for (const [contact, text, answered] of [
      ["alice", "a0", false],
      ["bob", "b0", true],
    ] as const) {
      before.inbox.accept(
        inboundDedupKey({ ...message(contact, text), attachments: [], eventId: "-" }),
        message(contact, text),
      );
      const session = before.sessions.create({ agentId: "ana", channel: "chat", contact });
      sessionIds.set(contact, session.id);
      before.transcripts.append(session.id, {
        role: "user",
        content: [{ type: "text", text }],
        sourcePlugin: "chat",
        senderId: contact,
        messageId: `k-${text}`,
      });
      if (answered)
        before.transcripts.append(session.id, {
          role: "assistant",
          content: [{ type: "text", text: `echo: ${text}` }],
        });
    }
    before.close();

    const store = Store.open(path);
    const provider = new EchoProvider(5);
    const chat = new RecordingChannel("chat");
    const channels = new ChannelRegistry();
    channels.register(chat);
    const router = new Router({
      bindings: new BindingTable([{ id: "ana", active: true, inbound_bindings: [{ plugin: "chat" }] }]),
      sessions: {
        // As the daemon does: the stored session, its history, and the store as the sink.
        open: (key) =>
          createAgentSession({
            agentId: key.agentId,
            sessionId: sessionIds.get(key.contact)!,
            history: store.transcripts.messages(sessionIds.get(key.contact)!),
            sink: storeTranscriptSink(store.transcripts),
            provider,
            model: "m",
            maxTokens: 100,
            maxTurns: 2,
            workspace: mkdtempSync(join(tmpdir(), "nexo-router-")),
          }),
        renew: () => assert.fail("no /new in this test"),
      },
      replies: new ReplySender(channels, new LocalBroker()),
      logger: quiet,
      queueCap: () => 8,
      inbox: store.inbox,
      transcripts: store.transcripts,
    });
    assert.equal(router.replay(), 2);
    await router.drain(5000);
    const roles = (contact: string) =>
      store.transcripts
        .entries(sessionIds.get(contact)!)
        .map((e) => `${e.role}:${JSON.stringify(e.content)}`);
    assert.deepEqual(roles("alice"), [
      'user:[{"type":"text","text":"a0"}]',
      'assistant:[{"type":"text","text":"echo: a0"}]',
    ]);
    assert.deepEqual(roles("bob"), [
      'user:[{"type":"text","text":"b0"}]',
      'assistant:[{"type":"text","text":"echo: b0"}]',
    ]);
    assert.deepEqual(bodies(chat), [["alice", "echo: a0"]], "bob's answer is not sent a second time");
    assert.equal(store.inbox.pending, 0);
    store.close();
  });

  test("a reply the channel refuses is retried, and the message is done only once it was sent (issue 10)", async () => {
    const store = storeFile();
    const { router, chat, provider, inbound } = setup(5, 8, store.inbox, {
      replyRetryDelaysMs: [20, 20, 20],
    });
    chat.failFirst = 2;
    inbound("plugin.inbound.chat", "alice", "hi", "m-1");
    await waitFor(() => chat.sent.length === 1 && store.inbox.pending === 0, "the retried reply");
    assert.deepEqual(bodies(chat), [["alice", "echo: hi"]]);
    assert.equal(chat.attempts, 3);
    assert.equal(provider.calls, 1, "the turn ran once; only the send was repeated");
    assert.equal(router.stats().replyFailures, 2);
    assert.equal(router.stats().repliesSent, 1);
    await router.drain(5000);
    store.close();
  });

  test("a reply still unsent after the last attempt is kept, and the next start sends it without running the turn again (issue 10)", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "nexo-router-inbox-")), "nexo.db");
    const first = Store.open(path);
    const before = setup(5, 8, first.inbox, { replyRetryDelaysMs: [20] });
    before.chat.failFirst = Number.POSITIVE_INFINITY;
    before.inbound("plugin.inbound.chat", "alice", "hi", "m-1");
    await waitFor(() => before.router.stats().repliesKept === 1, "the reply given up for this run");
    assert.equal(before.chat.attempts, 2);
    assert.deepEqual(
      first.inbox.undone().map((m) => [m.text, m.reply]),
      [["hi", "echo: hi"]],
      "the inbox keeps the message with its reply",
    );
    await before.router.drain(5000);
    first.close();

    // The next start: a channel that works again.
    const store = Store.open(path);
    const after = setup(5, 8, store.inbox);
    assert.equal(after.router.replay(), 1);
    await waitFor(() => store.inbox.pending === 0, "the kept reply sent");
    assert.deepEqual(bodies(after.chat), [["alice", "echo: hi"]]);
    assert.equal(after.provider.calls, 0, "no turn ran for it again");
    assert.equal(after.router.replay(), 0);
    await after.router.drain(5000);
    store.close();
  });

  test("a drain past its grace cancels the running turn and the queued ones; the inbox keeps them (issue 10)", async () => {
    const store = storeFile();
    const { router, chat, provider, inbound } = setup(1500, 8, store.inbox);
    inbound("plugin.inbound.chat", "alice", "first", "m-1");
    inbound("plugin.inbound.chat", "alice", "second", "m-2");
    inbound("plugin.inbound.chat", "bob", "other", "m-3");
    await waitFor(() => provider.running === 2, "alice's first turn and bob's running");
    await router.drain(20);
    assert.deepEqual(chat.sent, [], "no reply for a turn cut short");
    assert.equal(provider.calls, 2, "alice's queued message never reached the model");
    assert.deepEqual(
      store.inbox.undone().map((m) => m.text),
      ["first", "second", "other"],
      "all three are replayed at the next start",
    );
    store.close();
  });

  test("a drain stops retrying: the inbox keeps the reply for the next start (issue 10)", async () => {
    const store = storeFile();
    const { router, chat, inbound } = setup(5, 8, store.inbox, { replyRetryDelaysMs: [600_000] });
    chat.failFirst = 1;
    inbound("plugin.inbound.chat", "alice", "hi", "m-1");
    await waitFor(() => chat.attempts === 1, "the first attempt");
    await router.drain(5000);
    assert.equal(router.stats().repliesKept, 1);
    assert.deepEqual(
      store.inbox.undone().map((m) => m.reply),
      ["echo: hi"],
    );
    assert.equal(chat.attempts, 1, "no attempt after the drain");
    store.close();
  });

  test("a redelivered message id runs one turn and gets one answer", async () => {
    const store = storeFile();
    const { router, chat, inbound } = setup(10, 8, store.inbox);
    inbound("plugin.inbound.chat", "alice", "hi", "m-1");
    assert.deepEqual(inbound("plugin.inbound.chat", "alice", "hi", "m-1"), { status: "duplicate" });
    await router.drain(5000);
    inbound("plugin.inbound.chat", "alice", "hi", "m-1");
    await router.drain(5000);
    assert.deepEqual(bodies(chat), [["alice", "echo: hi"]]);
    assert.equal(router.stats().duplicates, 2);
    store.close();
  });

  test("a full inbox refuses the message (counted), queues nothing and keeps what it holds", async () => {
    const store = storeFile({ inbox: { maxPending: 2 } });
    const { router, chat, inbound } = setup(30, 8, store.inbox);
    inbound("plugin.inbound.chat", "alice", "1");
    inbound("plugin.inbound.chat", "bob", "2");
    const refused = inbound("plugin.inbound.chat", "carol", "3");
    assert.equal(refused.status === "refused" && refused.reason, "inbox_full");
    assert.equal(router.stats().inboxFull, 1);
    assert.equal(router.stats().routed, 2);
    await router.drain(5000);
    assert.deepEqual(
      bodies(chat)
        .map(([to]) => to)
        .sort(),
      ["alice", "bob"],
    );
    inbound("plugin.inbound.chat", "carol", "3");
    await router.drain(5000);
    assert.equal(chat.sent.length, 3, "room again once the earlier turns are done");
    store.close();
  });

  /** A router on a real inbox whose opener records the router's `openMany` calls. */
  function openAheadSetup(
    openMany: (keys: readonly SessionKey[], open: (key: SessionKey) => AgentSession) => void,
  ) {
    const store = storeFile();
    const provider = new EchoProvider(5);
    const chat = new RecordingChannel("chat");
    const channels = new ChannelRegistry();
    channels.register(chat);
    const live = new Map<string, AgentSession>();
    const open = (key: SessionKey) => {
      let session = live.get(key.contact);
      if (!session) {
        session = createAgentSession({
          agentId: key.agentId,
          provider,
          model: "m",
          maxTokens: 100,
          maxTurns: 2,
          workspace: mkdtempSync(join(tmpdir(), "nexo-router-")),
        });
        live.set(key.contact, session);
      }
      return session;
    };
    const warnings: string[] = [];
    const router = new Router({
      bindings: new BindingTable([{ id: "ana", active: true, inbound_bindings: [{ plugin: "chat" }] }]),
      sessions: { open, renew: () => "renewed", openMany: (keys) => openMany(keys, open) },
      replies: new ReplySender(channels, new LocalBroker()),
      logger: { ...quiet, warn: (_obj: object, msg?: string) => void warnings.push(msg ?? "") },
      queueCap: () => 8,
      inbox: store.inbox,
    });
    const post = (from: string, text: string) =>
      router.handle(
        "plugin.inbound.chat",
        createEvent({ topic: "plugin.inbound.chat", source: "test", payload: { from, text } }),
      );
    return { store, router, chat, post, warnings };
  }

  test("the turns of one group commit open their sessions together; a command is not opened ahead", async () => {
    const batches: string[][] = [];
    const { store, router, chat, post } = openAheadSetup((keys, open) => {
      batches.push(keys.map((k) => k.contact));
      for (const key of keys) open(key);
    });
    for (const contact of ["c1", "c2", "c3"]) post(contact, "hi");
    post("c4", "/help");
    await router.drain(5000);
    assert.deepEqual(batches, [["c1", "c2", "c3"]]);
    assert.deepEqual(
      bodies(chat).sort(),
      [
        ["c1", "echo: hi"],
        ["c2", "echo: hi"],
        ["c3", "echo: hi"],
        ["c4", CHANNEL_HELP_REPLY],
      ].sort(),
    );
    assert.equal(store.inbox.pending, 0);
    store.close();
  });

  test("when opening ahead fails, it is logged and every turn opens its own session and answers", async () => {
    const { store, router, chat, post, warnings } = openAheadSetup(() => {
      throw new Error("the store is busy");
    });
    for (const contact of ["d1", "d2"]) post(contact, "hi");
    await router.drain(5000);
    assert.equal(chat.sent.length, 2);
    assert.equal(router.stats().turnsFailed, 0);
    assert.deepEqual(warnings, ["opening sessions ahead of their turns failed; each turn opens its own"]);
    assert.equal(store.inbox.pending, 0);
    store.close();
  });

  test("a channel that shows replies growing gets each piece of the turn, its features looked up once a turn", async () => {
    const store = storeFile();
    const pieces: Array<{ to: string; turn_id: string; text: string }> = [];
    let lookups = 0;
    const chat = new RecordingChannel("chat");
    const streaming = Object.assign(chat, {
      features: () => {
        lookups++;
        return {
          replyStream: {
            delta: (piece: { to: string; turn_id: string; text: string }) => void pieces.push(piece),
          },
        };
      },
    });
    const channels = new ChannelRegistry();
    channels.register(streaming);
    const threePieces: LlmProvider = {
      id: "three",
      async *stream() {
        for (const text of ["one ", "two ", "three"]) yield { type: "text_delta", text };
        yield { type: "stop", reason: "end_turn" };
      },
    };
    const router = new Router({
      bindings: new BindingTable([{ id: "ana", active: true, inbound_bindings: [{ plugin: "chat" }] }]),
      sessions: {
        open: () =>
          createAgentSession({
            agentId: "ana",
            provider: threePieces,
            model: "m",
            maxTokens: 100,
            maxTurns: 2,
            workspace: mkdtempSync(join(tmpdir(), "nexo-router-")),
          }),
        renew: () => "renewed",
      },
      replies: new ReplySender(channels, new LocalBroker()),
      logger: quiet,
      queueCap: () => 8,
      inbox: store.inbox,
    });
    router.handle(
      "plugin.inbound.chat",
      createEvent({ topic: "plugin.inbound.chat", source: "test", payload: { from: "eve", text: "count" } }),
    );
    await router.drain(5000);
    assert.deepEqual(
      pieces.map((p) => [p.to, p.text]),
      [
        ["eve", "one "],
        ["eve", "two "],
        ["eve", "three"],
      ],
    );
    assert.equal(new Set(pieces.map((p) => p.turn_id)).size, 1);
    assert.equal(lookups, 1);
    assert.deepEqual(bodies(chat), [["eve", "one two three"]]);
    store.close();
  });
});
