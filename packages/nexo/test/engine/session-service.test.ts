/**
 * The engine's session service over a real SQLite file: records created, found and listed;
 * a session resumed turn by turn after the store was closed and reopened; configuration changes;
 * approval grants, the mode and attached files surviving a reopen; and one turn at a time per
 * session, in arrival order, however many messages are submitted at once.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { TurnEvent } from "../../src/engine/events.js";
import type { AgentSession } from "../../src/engine/session.js";
import { applySessionConfig, DEFAULT_THINKING_BUDGET } from "../../src/engine/sessions/config.js";
import { SessionQueue } from "../../src/engine/sessions/queue.js";
import { type OpenSettings, SessionService, turnsOf } from "../../src/engine/sessions/service.js";
import type { LlmProvider } from "../../src/engine/types.js";
import { Store } from "../../src/store/index.js";
import {
  collect,
  PlaybackProvider,
  SimpleToolHost,
  type Step,
  text,
  tool,
  toolCalls,
} from "../helpers/engine.js";

const look = tool("Look", "info", async (args) => ({ output: `looked at ${String(args.path)}` }));
const run = tool("Run", "exec", async (args) => ({ output: `ran ${String(args.command)}` }));

let dir: string;
let path: string;
let store: Store;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "nexo-session-service-"));
  path = join(dir, "nexo.db");
  store = Store.open(path);
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Closes the store and opens the same file again (what a restart does). */
function reopen(): SessionService {
  store.close();
  store = Store.open(path);
  return new SessionService(store);
}

function settings(provider: LlmProvider, extra: Partial<OpenSettings> = {}): OpenSettings {
  return {
    agentId: "a1",
    provider,
    model: "m1",
    maxTokens: 100,
    maxTurns: 8,
    workspace: dir,
    registry: new SimpleToolHost([look, run]),
    // Read-only tools run without asking (as the AppServer has it); commands ask.
    allowList: ["info"],
    ...extra,
  };
}

/** Runs one turn to its end, answering every approval request with `answer`. */
async function turn(
  session: AgentSession,
  input: string,
  turnId: string,
  answer?: (event: Extract<TurnEvent, { type: "tool_requested" }>) => void,
): Promise<TurnEvent[]> {
  return collect(session.runTurn(input, { turnId }), (event) => {
    if (event.type === "tool_requested" && event.needsApproval) answer?.(event);
  });
}

describe("session service", () => {
  test("create, get, list (newest first, per agent) and find-or-create by place", () => {
    const sessions = new SessionService(store);
    const first = sessions.create({ agentId: "a1", channel: "json-stream", title: "first" });
    const second = sessions.create({ agentId: "a1", channel: "json-stream", title: "second" });
    sessions.create({ agentId: "a2" });
    store.transcripts.append(second.id, { role: "user", content: [{ type: "text", text: "hi" }] });

    assert.deepEqual(
      sessions.list({ agentId: "a1" }).map((s) => s.title),
      ["second", "first"],
    );
    assert.equal(sessions.latest("a1")?.id, second.id);
    assert.equal(sessions.get(first.id)?.title, "first");
    assert.equal(sessions.get("no-such-session"), undefined);
    assert.equal(sessions.hasMessages(second.id), true);
    assert.equal(sessions.hasMessages(first.id), false);

    const place = { agentId: "a1", channel: "telegram", account: null, contact: "+100" };
    const created = sessions.findOrCreate(place, { approvalMode: "auto_edit" });
    assert.equal(created.approvalMode, "auto_edit");
    assert.equal(sessions.findOrCreate(place).id, created.id, "the place's session is found again");
    assert.notEqual(sessions.findOrCreate({ ...place, contact: "+200" }).id, created.id);
  });

  test("resume after a reopen rebuilds the conversation turn by turn and continues it", async () => {
    let sessions = new SessionService(store);
    const record = sessions.create({ agentId: "a1" });
    const steps: Step[] = [
      () => toolCalls({ id: "c1", name: "Look", input: { path: "README.md" } }),
      () => text("the readme is short"),
      () => text("second answer"),
    ];
    const session = sessions.open(record, settings(new PlaybackProvider(steps)));
    await turn(session, "look at the readme", "turn-1");
    await turn(session, "and now?", "turn-2");
    const before = structuredClone(session.history);

    sessions = reopen();
    const resumed = sessions.resume(record.id);
    assert.ok(resumed);
    assert.equal(resumed.record.id, record.id);
    assert.deepEqual(resumed.history, before, "the model's history is the one the turns left");
    assert.deepEqual(
      resumed.turns.map((t) => [t.turnId, t.entries.map((e) => e.role)]),
      [
        ["turn-1", ["user", "assistant", "user", "assistant"]],
        ["turn-2", ["user", "assistant"]],
      ],
    );
    assert.deepEqual(
      resumed.turns[0]!.entries[2]!.content.map((b) => b.type),
      ["tool_result"],
      "the tool result belongs to the turn that called the tool",
    );
    assert.equal(sessions.resume("no-such-session"), undefined);

    // The resumed session continues: the model is sent the whole conversation.
    const provider = new PlaybackProvider([() => text("third answer")]);
    const again = sessions.open(resumed.record, settings(provider), resumed.history);
    await turn(again, "one more", "turn-3");
    assert.equal(provider.requests[0]!.messages.length, before.length + 1);
    assert.deepEqual(
      sessions.resume(record.id)!.turns.map((t) => t.turnId),
      ["turn-1", "turn-2", "turn-3"],
    );
  });

  test("entries written before turn ids were stored split into turns at each user message", () => {
    const record = store.sessions.create({ agentId: "a1" });
    const say = (role: "user" | "assistant", words: string) =>
      store.transcripts.append(record.id, { role, content: [{ type: "text", text: words }] });
    say("user", "one");
    say("assistant", "answer one");
    store.transcripts.append(record.id, {
      role: "user",
      content: [{ type: "tool_result", toolUseId: "c1", content: "result" }],
    });
    say("assistant", "after the tool");
    say("user", "two");
    say("assistant", "answer two");
    const turns = turnsOf(store.transcripts.entries(record.id));
    assert.deepEqual(
      turns.map((t) => [t.turnId, t.entries.length]),
      [
        [null, 4],
        [null, 2],
      ],
    );
  });

  test("config changes: model, thinking, mode and read-only, each reported once", async () => {
    const sessions = new SessionService(store);
    const record = sessions.create({ agentId: "a1" });
    const session = sessions.open(record, settings(new PlaybackProvider([])));

    assert.deepEqual(applySessionConfig(session, { model: "m2" }), ["model m2"]);
    assert.deepEqual(
      applySessionConfig(session, { model: "m2" }),
      [],
      "the same model again changes nothing",
    );
    assert.deepEqual(applySessionConfig(session, { thinking: { enabled: true } }), [
      `thinking on (budget ${DEFAULT_THINKING_BUDGET} tokens)`,
    ]);
    assert.deepEqual(applySessionConfig(session, { thinking: { enabled: true, budget: 2048 } }), [
      "thinking on (budget 2048 tokens)",
    ]);
    assert.equal(session.config.thinkingBudget, 2048);
    assert.deepEqual(applySessionConfig(session, { thinking: { enabled: false } }), ["thinking off"]);
    assert.equal(session.config.thinkingBudget, undefined);

    assert.deepEqual(
      session.toolSpecs().map((t) => t.name),
      ["Look", "Run"],
    );
    assert.deepEqual(applySessionConfig(session, { readOnly: true }), ["read-only on"]);
    assert.deepEqual(
      session.toolSpecs().map((t) => t.name),
      ["Look"],
      "read-only offers only the info tools",
    );
    assert.equal(session.findTool("Run"), undefined);
    assert.deepEqual(applySessionConfig(session, { readOnly: true }), []);
    assert.deepEqual(applySessionConfig(session, { readOnly: false }), ["read-only off"]);
    assert.deepEqual(
      session.toolSpecs().map((t) => t.name),
      ["Look", "Run"],
    );

    // The mode is saved with the record at once.
    assert.deepEqual(applySessionConfig(session, { mode: "auto_edit" }), ["mode auto_edit"]);
    assert.equal(reopen().get(record.id)?.approvalMode, "auto_edit");
  });

  test("read-only narrows an agent's own tool allow-list and gives it back", () => {
    const sessions = new SessionService(store);
    const record = sessions.create({ agentId: "a1" });
    const session = sessions.open(record, settings(new PlaybackProvider([]), { toolAllowList: ["Run"] }));
    assert.deepEqual(
      session.toolSpecs().map((t) => t.name),
      ["Run"],
    );
    applySessionConfig(session, { readOnly: true });
    assert.deepEqual(
      session.toolSpecs(),
      [],
      "Look is read-only but not allowed; Run is allowed but not read-only",
    );
    applySessionConfig(session, { readOnly: false });
    assert.deepEqual(
      session.toolSpecs().map((t) => t.name),
      ["Run"],
    );
  });

  test("an 'always' grant, the mode and attached files are saved and hold after a reopen", async () => {
    let sessions = new SessionService(store);
    const record = sessions.create({ agentId: "a1" });
    const call = () => toolCalls({ id: "c1", name: "Run", input: { command: "echo hi" } });
    const session = sessions.open(record, settings(new PlaybackProvider([call, () => text("done")])));
    let asked = 0;
    await turn(session, "run it", "turn-1", (event) => {
      asked++;
      session.approve(event.callId, "always");
    });
    assert.equal(asked, 1);
    sessions.attach(session, [join(dir, "outside.txt")]);

    sessions = reopen();
    const stored = sessions.get(record.id)!;
    assert.equal(stored.alwaysAllow.length, 1);
    assert.deepEqual(stored.readableFiles, [join(dir, "outside.txt")]);

    // The reopened session does not ask again for what was granted.
    const resumed = sessions.open(stored, settings(new PlaybackProvider([call, () => text("done again")])));
    assert.ok(resumed.readableFiles.has(join(dir, "outside.txt")));
    const events = await turn(resumed, "run it again", "turn-2", () => {
      throw new Error("asked again although the grant was saved");
    });
    const requested = events.find((e) => e.type === "tool_requested");
    assert.equal(requested?.type === "tool_requested" && requested.needsApproval, false);
    const end = events.at(-1);
    assert.ok(end?.type === "turn_end" && end.reason === "completed");
  });

  test("a door's mode wins over the record's without being saved until it changes", () => {
    const sessions = new SessionService(store);
    const record = sessions.create({ agentId: "a1", approvalMode: "auto_edit" });
    assert.equal(sessions.open(record, settings(new PlaybackProvider([]))).policy.mode, "auto_edit");
    const yolo = sessions.open(record, settings(new PlaybackProvider([]), { mode: "yolo" }));
    assert.equal(yolo.policy.mode, "yolo");
    assert.equal(sessions.get(record.id)?.approvalMode, "auto_edit");
  });

  test("FIFO: messages submitted at once run one turn at a time, in arrival order; a full queue refuses", async () => {
    const sessions = new SessionService(store);
    const record = sessions.create({ agentId: "a1" });
    // Each answer streams slowly, so later messages arrive while earlier turns still run.
    const slow =
      (reply: string): Step =>
      () => ({ events: text(reply), delayMs: 5 });
    const session = sessions.open(
      record,
      settings(new PlaybackProvider(Array.from({ length: 5 }, (_, i) => slow(`reply ${i}`)))),
    );
    const ends: string[] = [];
    let overlapping = 0;
    const queue = new SessionQueue<string>(4, async (message) => {
      if (session.busy) overlapping++;
      const events = await turn(session, message, `turn-${message}`);
      const end = events.at(-1);
      ends.push(end?.type === "turn_end" ? `${message}:${end.reason}` : `${message}:no end`);
    });
    const offered = await Promise.all(
      Array.from({ length: 6 }, (_, i) => Promise.resolve().then(() => queue.offer(`m${i}`))),
    );
    // The first starts at once; four wait (the capacity) and the sixth is refused.
    assert.deepEqual(offered, [true, true, true, true, true, false]);
    assert.equal(queue.depth, 4);
    await queue.idle();
    assert.equal(overlapping, 0, "no turn started while another ran");
    assert.deepEqual(
      ends,
      ["m0", "m1", "m2", "m3", "m4"].map((m) => `${m}:completed`),
    );
    const turns = sessions.resume(record.id)!.turns;
    assert.deepEqual(
      turns.map((t) => [t.turnId, t.entries[0]!.content]),
      ["m0", "m1", "m2", "m3", "m4"].map((m) => [`turn-${m}`, [{ type: "text", text: m }]]),
    );
  });
});
