/**
 * The router's per-message cost with the durable inbox (issue 10.19) against the bare in-memory
 * queue path, in one run:
 *   inbox  — Router with a real SQLite store's inbox (WAL file in a temp dir): per message one
 *            INSERT on arrival, the reply kept (UPDATE) when the turn ends, done (UPDATE) once sent
 *   memory — the same Router without an inbox: messages live in the sessions' queues only
 * Each repetition routes MESSAGES messages from CONTACTS contacts through `handle` (the broker
 * subscription's entry point), through a real engine turn against a model that answers at once,
 * to the reply handed to a channel adapter; the figures are the process's CPU time (user + system,
 * process.cpuUsage) and the wall time per message until every reply was sent; and, apart, what
 * `handle` itself takes per message (parse, binding match, staging the INSERT for `inbox`,
 * queueing). The inbox's writes of a tick share one transaction (its group commit).
 * Goal: inbox ≤ 1.2× memory in CPU time per message, arrival to reply sent. CPU time rather than
 * wall time because the benchmark runs on shared machines: the routing is single-threaded in this
 * process, so its CPU time is the work it did, while its wall time also counts every other
 * process the scheduler ran meanwhile (both are recorded).
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
import { buildToolRegistry, createAgentSession } from "../packages/nexo/src/engine/assemble.js";
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

type Contender = "inbox" | "memory";
/** Per contender, in the order of the repetitions: µs per message. */
const handleMicros: Record<Contender, number[]> = { inbox: [], memory: [] };
const handleCpuMicros: Record<Contender, number[]> = { inbox: [], memory: [] };
const routeWallMicros: Record<Contender, number[]> = { inbox: [], memory: [] };

const cpuMicros = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

/** One repetition: a fresh router (and store, for `inbox`); returns CPU microseconds per message. */
async function routeAll(withInbox: boolean, record = true): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "nexo-bench-router-"));
  const store = withInbox ? Store.open(join(dir, "nexo.db")) : undefined;
  const provider = new InstantProvider();
  // Opened before the clock starts: creating an engine session is not routing.
  const sessions = new Map<string, AgentSession>();
  const settings = { agentId: "ana", provider, model: "m", maxTokens: 100, maxTurns: 1, workspace: dir };
  // One tool registry for the agent, as the daemon keeps (compiling tool schemas is not routing).
  const registry = buildToolRegistry(settings);
  for (let c = 0; c < CONTACTS; c++) sessions.set(`user-${c}`, createAgentSession({ ...settings, registry }));
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
  const contender: Contender = withInbox ? "inbox" : "memory";
  const cpuStarted = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (const event of events) {
    const outcome = router.handle("plugin.inbound.chat", event);
    if (outcome.status !== "queued") throw new Error(`message refused: ${JSON.stringify(outcome)}`);
  }
  const handled = Number(process.hrtime.bigint() - started) / 1000 / MESSAGES;
  const handledCpu = cpuMicros(cpuStarted) / MESSAGES;
  await chat.until(MESSAGES);
  await router.drain(60_000);
  const micros = cpuMicros(cpuStarted) / MESSAGES;
  if (record) {
    handleMicros[contender].push(handled);
    handleCpuMicros[contender].push(handledCpu);
    routeWallMicros[contender].push(Number(process.hrtime.bigint() - started) / 1000 / MESSAGES);
  }
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
  const wall = { inbox: median(routeWallMicros.inbox), memory: median(routeWallMicros.memory) };
  const metric = "CPU time (user + system) per message, arrival to reply sent";
  ctx.record({
    benchmark: "router",
    name: `route ${MESSAGES} messages durable inbox`,
    metric,
    value: round(inbox, 1),
    unit: "µs",
    samples: samples.inbox.map((v) => round(v, 1)),
    ratios: {
      vs_memory: ratio,
      wall_us: round(wall.inbox, 1),
      wall_vs_memory: round(wall.inbox / wall.memory),
    },
    goal: { ratio: "vs_memory", max: GOAL_MAX_RATIO, met: ratio <= GOAL_MAX_RATIO },
  });
  ctx.record({
    benchmark: "router",
    name: `route ${MESSAGES} messages in-memory queues`,
    metric,
    value: round(memory, 1),
    unit: "µs",
    samples: samples.memory.map((v) => round(v, 1)),
    ratios: { wall_us: round(wall.memory, 1) },
  });
  const handleInbox = median(handleCpuMicros.inbox);
  const handleMemory = median(handleCpuMicros.memory);
  ctx.record({
    benchmark: "router",
    name: "handle one message durable inbox",
    metric: "CPU time in handle per message (parse, match, stage the INSERT, queue)",
    value: round(handleInbox, 1),
    unit: "µs",
    samples: handleCpuMicros.inbox.map((v) => round(v, 1)),
    ratios: { vs_memory: round(handleInbox / handleMemory), wall_us: round(median(handleMicros.inbox), 1) },
  });
  ctx.record({
    benchmark: "router",
    name: "handle one message in-memory queues",
    metric: "CPU time in handle per message (parse, match, queue)",
    value: round(handleMemory, 1),
    unit: "µs",
    samples: handleCpuMicros.memory.map((v) => round(v, 1)),
    ratios: { wall_us: round(median(handleMicros.memory), 1) },
  });
}
