/**
 * The router's per-message cost with the durable inbox (issue 10.19) against the bare in-memory
 * queue path, in one run:
 *   inbox  — Router with a real SQLite store's inbox (WAL file in a temp dir): per message one
 *            INSERT on arrival, the reply kept (UPDATE) when the turn ends, done (UPDATE) once sent
 *   memory — the same Router without an inbox: messages live in the sessions' queues only
 * Each repetition routes MESSAGES messages from CONTACTS contacts through `handle` (the broker
 * subscription's entry point), through a real engine turn against a model that answers at once,
 * to the reply handed to a channel adapter; the figure is the wall time per message until every
 * reply was sent; and, apart, the time `handle` itself takes per message (parse, binding match,
 * the INSERT for `inbox`, queueing) — the part a channel's acknowledged publish waits for.
 * Goal: inbox ≤ 1.2× memory per message, arrival to reply sent.
 *   BENCH_ROUTER_MESSAGES=200 for a quick run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEvent } from "../packages/nexo/src/broker/event.js";
import { LocalBroker } from "../packages/nexo/src/broker/local.js";
import {
  type ChannelAdapter,
  ChannelRegistry,
  type OutboundMessage,
} from "../packages/nexo/src/channels/registry.js";
import { BindingTable } from "../packages/nexo/src/daemon/routing/bindings.js";
import { ReplySender } from "../packages/nexo/src/daemon/routing/outbound.js";
import { Router } from "../packages/nexo/src/daemon/routing/router.js";
import { createAgentSession } from "../packages/nexo/src/engine/assemble.js";
import type { AgentSession } from "../packages/nexo/src/engine/session.js";
import type { ChatRequest, LlmProvider, ProviderEvent } from "../packages/nexo/src/engine/types.js";
import { Store } from "../packages/nexo/src/store/index.js";
import { type BenchContext, interleave, median, round } from "./lib.js";

const MESSAGES = Number(process.env.BENCH_ROUTER_MESSAGES ?? 1_000);
const CONTACTS = 100;
const GOAL_MAX_RATIO = 1.2;

/** Answers every request at once: the turn costs the engine's own work, not a model's. */
class InstantProvider implements LlmProvider {
  readonly id = "instant";
  async *stream(_request: ChatRequest): AsyncIterable<ProviderEvent> {
    yield { type: "text_delta", text: "ok" };
    yield { type: "stop", reason: "end_turn" };
  }
}

/** A channel that takes every reply (and counts them). */
class CountingChannel implements ChannelAdapter {
  readonly owner = "bench";
  readonly kind = "chat";
  sent = 0;
  private wake: (() => void) | undefined;
  private target = Number.POSITIVE_INFINITY;
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async sendOutbound(_message: OutboundMessage) {
    if (++this.sent >= this.target) this.wake?.();
    return { messageId: String(this.sent), sentAtUnix: 0 };
  }
  until(count: number): Promise<void> {
    this.target = count;
    return this.sent >= count ? Promise.resolve() : new Promise((resolve) => (this.wake = resolve));
  }
}

/** `handle`'s own time per message (µs), per contender, in the order of the repetitions. */
const handleMicros: Record<"inbox" | "memory", number[]> = { inbox: [], memory: [] };

/** One repetition: a fresh router (and store, for `inbox`); returns microseconds per message. */
async function routeAll(withInbox: boolean, record = true): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "nexo-bench-router-"));
  const store = withInbox ? Store.open(join(dir, "nexo.db")) : undefined;
  const provider = new InstantProvider();
  // Opened before the clock starts: creating an engine session is not routing.
  const sessions = new Map<string, AgentSession>();
  for (let c = 0; c < CONTACTS; c++)
    sessions.set(
      `user-${c}`,
      createAgentSession({
        agentId: "ana",
        provider,
        model: "m",
        maxTokens: 100,
        maxTurns: 1,
        workspace: dir,
      }),
    );
  const channels = new ChannelRegistry();
  const chat = new CountingChannel();
  channels.register(chat);
  const router = new Router({
    bindings: new BindingTable([{ id: "ana", active: true, inbound_bindings: [{ plugin: "chat" }] }]),
    sessions: {
      open: (key) => sessions.get(key.contact)!,
      renew: () => {
        throw new Error("no /new in the benchmark");
      },
    },
    replies: new ReplySender(channels, new LocalBroker()),
    logger: { info() {}, warn() {}, error() {} },
    queueCap: () => MESSAGES,
    ...(store ? { inbox: store.inbox } : {}),
  });
  // Built before the clock starts: the broker hands the router ready events.
  const events = Array.from({ length: MESSAGES }, (_, i) =>
    createEvent({
      topic: "plugin.inbound.chat",
      source: "bench",
      payload: { from: `user-${i % CONTACTS}`, text: `message ${i}`, message_id: `m-${i}` },
    }),
  );
  const started = process.hrtime.bigint();
  for (const event of events) {
    const outcome = router.handle("plugin.inbound.chat", event);
    if (outcome.status !== "queued") throw new Error(`message refused: ${JSON.stringify(outcome)}`);
  }
  const handled = Number(process.hrtime.bigint() - started) / 1000 / MESSAGES;
  if (record) handleMicros[withInbox ? "inbox" : "memory"].push(handled);
  await chat.until(MESSAGES);
  await router.drain(60_000);
  const micros = Number(process.hrtime.bigint() - started) / 1000 / MESSAGES;
  if (store && store.inbox.pending !== 0) throw new Error(`${store.inbox.pending} messages left undone`);
  store?.close();
  rmSync(dir, { recursive: true, force: true });
  return micros;
}

export default async function bench(ctx: BenchContext): Promise<void> {
  ctx.log(`router: ${MESSAGES} messages from ${CONTACTS} contacts per repetition, ${ctx.reps} repetitions`);
  // One warm-up each: module loading and the JIT are not routing.
  await routeAll(true, false);
  await routeAll(false, false);
  const samples = await interleave(ctx.reps, { inbox: () => routeAll(true), memory: () => routeAll(false) });
  const inbox = median(samples.inbox);
  const memory = median(samples.memory);
  const ratio = round(inbox / memory);
  const metric = "wall time per message, arrival to reply sent";
  ctx.record({
    benchmark: "router",
    name: `route ${MESSAGES} messages durable inbox`,
    metric,
    value: round(inbox, 1),
    unit: "µs",
    samples: samples.inbox.map((v) => round(v, 1)),
    ratios: { vs_memory: ratio },
    goal: { ratio: "vs_memory", max: GOAL_MAX_RATIO, met: ratio <= GOAL_MAX_RATIO },
  });
  ctx.record({
    benchmark: "router",
    name: `route ${MESSAGES} messages in-memory queues`,
    metric,
    value: round(memory, 1),
    unit: "µs",
    samples: samples.memory.map((v) => round(v, 1)),
  });
  const handleInbox = median(handleMicros.inbox);
  const handleMemory = median(handleMicros.memory);
  ctx.record({
    benchmark: "router",
    name: "handle one message durable inbox",
    metric: "time in handle per message (parse, match, INSERT, queue)",
    value: round(handleInbox, 1),
    unit: "µs",
    samples: handleMicros.inbox.map((v) => round(v, 1)),
    ratios: { vs_memory: round(handleInbox / handleMemory) },
  });
  ctx.record({
    benchmark: "router",
    name: "handle one message in-memory queues",
    metric: "time in handle per message (parse, match, queue)",
    value: round(handleMemory, 1),
    unit: "µs",
    samples: handleMicros.memory.map((v) => round(v, 1)),
  });
}
