/**
 * Issue 10.19, from outside: a real `nexo start` child (the built CLI) with the example loopback
 * channel and a model (the mock LLM) that answers each message with its own tag. Users post
 * messages at once; the daemon is killed with SIGKILL while turns run and replies go out; a new
 * `nexo start` on the same state directory finishes the work.
 *
 * What must hold: every message the channel acknowledged (HTTP 202) gets its reply, across both
 * runs (half of the users come back only after the restart's first replies were refused); no
 * message runs a second turn (its transcript holds it and its answer once); no reply is
 * the "something went wrong" one. A reply may reach its user twice only in the window the design
 * accepts (docs/reliability.md): the channel took it before the kill and the kill came before the
 * inbox marked it done, so its copy before the kill is followed by one after the restart.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { MockLlmServer } from "@nexo/mock-llm";
import Database from "better-sqlite3";
import { SseClient } from "../../../../../examples/plugins/loopback-channel/test/sse-client.js";
import { FAILED_TURN_REPLY } from "../../../src/daemon/routing/router.js";
import { EXAMPLE_PLUGINS } from "../../helpers/daemon-dir.js";
import { type DaemonProcess, startDaemonProcess } from "../../helpers/daemon-process.js";
import { endpoint } from "../../helpers/loopback.js";

const SENDERS = 6;
const PER_SENDER = 4;
const tagOf = (s: number, m: number) => `msg-${s}-${m}`;

/** Every reply a user's streams received, with the run that delivered it. */
interface Received {
  text: string;
  run: 1 | 2;
}

async function waitFor(ready: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !ready(); await sleep(20))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

const root = mkdtempSync(join(tmpdir(), "nexo-sigkill-"));
const daemons: DaemonProcess[] = [];
const streams: SseClient[] = [];
const mock = new MockLlmServer({
  // Two answers per message: a turn the kill cut short used one. A third turn for one message
  // would find none and fail (and show up as FAILED_TURN_REPLY).
  script: Array.from({ length: SENDERS * PER_SENDER * 2 }, (_, i) => {
    const n = Math.floor(i / 2);
    const tag = tagOf(Math.floor(n / PER_SENDER), n % PER_SENDER);
    return { match: tag, text: `re ${tag}`, delay_ms: 60 };
  }),
});

after(async () => {
  for (const stream of streams) stream.close();
  for (const daemon of daemons) await daemon.stop("SIGKILL", 5_000);
  await mock.close();
  rmSync(root, { recursive: true, force: true });
});

test("SIGKILL mid-flight and a restart: every acknowledged message answered, none run twice", async (t) => {
  await mock.start();
  const config = join(root, "cfg");
  const stateDir = join(root, "state");
  mkdirSync(join(config, "workspace"), { recursive: true });
  writeFileSync(
    join(config, "llm.yaml"),
    `providers:\n  mock:\n    type: anthropic\n    api_key: test-key\n    base_url: ${mock.url}\n    retry: { max_retries: 0 }\n`,
  );
  writeFileSync(
    join(config, "agents.yaml"),
    "agents:\n  - id: ana\n    model: { provider: mock, model: claude-test }\n    workspace: ./workspace\n    inbound_bindings: [{ plugin: loopback }]\n",
  );
  writeFileSync(
    join(config, "plugins.yaml"),
    `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n`,
  );
  writeFileSync(join(config, "daemon.yaml"), "http: { bind: 127.0.0.1:0 }\n");

  const received = new Map<string, Received[]>();
  /** Opens every user's reply stream on the channel of `run` (it makes them known contacts). */
  const listen = async (url: string, run: 1 | 2, users: number[]) => {
    for (const s of users) {
      const stream = await SseClient.open(`${url}/stream?to=user-${s}`);
      streams.push(stream);
      const seen = { count: 0 };
      const drain = () => {
        for (; seen.count < stream.events.length; seen.count++) {
          const event = stream.events[seen.count]!;
          if (event.event !== "message") continue;
          const text = (JSON.parse(event.data) as { text: string }).text;
          const list = received.get(text) ?? [];
          list.push({ text, run });
          received.set(text, list);
        }
      };
      // SseClient keeps its events in an array; polled here, cheaply, for the test's lifetime.
      const timer = setInterval(drain, 5);
      timer.unref();
      void stream.ended.then(() => {
        drain();
        clearInterval(timer);
      });
    }
  };

  const first = await startDaemonProcess({ config, stateDir, readyTimeoutMs: 120_000 });
  daemons.push(first);
  const firstUrl = await endpoint(stateDir);
  const everyone = Array.from({ length: SENDERS }, (_, s) => s);
  await listen(firstUrl, 1, everyone);

  // Every user posts all of their messages at once; the daemon dies while replies go out.
  const acknowledged = new Set<string>();
  let killed = false;
  const posts = Array.from({ length: SENDERS * PER_SENDER }, async (_, i) => {
    const s = i % SENDERS;
    const m = Math.floor(i / SENDERS);
    try {
      const res = await fetch(`${firstUrl}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ from: `user-${s}`, text: `${tagOf(s, m)}: hello` }),
        signal: AbortSignal.timeout(60_000),
      });
      await res.arrayBuffer();
      if (res.status === 202) acknowledged.add(tagOf(s, m));
    } catch {
      // Refused by the kill: not acknowledged, so not owed an answer.
    }
  });
  // Killed once the model was asked for its first answer in every conversation and a second in
  // some: turns are running (their messages stored, their answers streaming), replies have gone
  // out, and most messages still wait in their sessions' queues.
  await waitFor(() => mock.requests().length >= SENDERS + 4, "turns to run");
  await first.stop("SIGKILL");
  killed = true;
  await Promise.all(posts);
  await sleep(200); // the streams' last events before the kill, read
  const repliesBeforeKill = [...received.values()].flat().length;
  assert.ok(killed);
  assert.ok(acknowledged.size >= SENDERS, `only ${acknowledged.size} messages were acknowledged`);
  assert.ok(
    repliesBeforeKill < acknowledged.size,
    "the kill came after every reply: it tested nothing (make the model slower)",
  );

  // The next start on the same state directory: replay, then replies to the users' new streams.
  // Half of the users come back two seconds late: until then the channel does not know them and
  // refuses their replies (-33003), which must be sent again, not dropped.
  const second = await startDaemonProcess({ config, stateDir, readyTimeoutMs: 120_000 });
  daemons.push(second);
  const secondUrl = await endpoint(stateDir);
  const late = everyone.filter((s) => s % 2 === 1);
  await listen(
    secondUrl,
    2,
    everyone.filter((s) => !late.includes(s)),
  );
  await sleep(2_000);
  await listen(secondUrl, 2, late);
  const db = new Database(join(stateDir, "nexo.db"), { readonly: true });
  const undone = () =>
    (db.prepare("SELECT count(*) FROM inbox WHERE done_at_ms IS NULL").pluck().get() as number) ?? 0;
  await waitFor(
    () => [...acknowledged].every((tag) => received.has(`re ${tag}`)) && undone() === 0,
    "every acknowledged message's reply and an empty inbox",
  );
  const stopped = await second.stop("SIGTERM");
  assert.equal(stopped.code, 0, second.stderr());
  await sleep(100);

  // Replies: each acknowledged message answered; a second copy only in the accepted window.
  const lost = [...acknowledged].filter((tag) => !received.has(`re ${tag}`));
  assert.deepEqual(lost, [], "acknowledged messages without a reply");
  const failed = received.get(FAILED_TURN_REPLY)?.length ?? 0;
  assert.equal(failed, 0, "a turn failed (a message ran more turns than the model had answers for?)");
  const twice = [...received.entries()].filter(([, copies]) => copies.length > 1);
  for (const [text, copies] of twice) {
    assert.deepEqual(
      copies.map((c) => c.run),
      [1, 2],
      `"${text}" reached its user ${copies.length} times: only a copy sent at the kill may come again`,
    );
  }
  assert.ok(twice.length <= SENDERS, `${twice.length} replies sent twice: more than one per conversation`);
  for (const text of received.keys())
    assert.match(text, /^re msg-\d+-\d+$/, `a reply that answers nothing posted: ${text}`);

  // Turns: each acknowledged message and its answer are in the transcript once.
  const rows = db.prepare("SELECT role, content FROM transcript_entries").all() as Array<{
    role: string;
    content: string;
  }>;
  db.close();
  for (const tag of acknowledged) {
    const users = rows.filter((r) => r.role === "user" && r.content.includes(`${tag}: hello`)).length;
    const answers = rows.filter((r) => r.role === "assistant" && r.content.includes(`re ${tag}"`)).length;
    assert.equal(users, 1, `${tag}: the user's message is in the transcript ${users} times`);
    assert.equal(answers, 1, `${tag}: ${answers} answers in the transcript (a turn ran twice?)`);
  }
  // The model was asked about a message at most twice: once by the killed run, once by the replay.
  const asked = new Map<string, number>();
  for (const request of mock.requests()) {
    const messages = (request.body as { messages?: unknown[] } | null)?.messages ?? [];
    const tag = /msg-\d+-\d+/.exec(JSON.stringify(messages.at(-1) ?? ""))?.[0];
    if (tag) asked.set(tag, (asked.get(tag) ?? 0) + 1);
  }
  for (const [tag, count] of asked) assert.ok(count <= 2, `${tag}: the model was asked ${count} times`);
  t.diagnostic(
    `acknowledged ${acknowledged.size}, replies before the kill ${repliesBeforeKill}, sent twice ${twice.length}`,
  );
});
