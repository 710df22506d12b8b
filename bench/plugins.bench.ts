/**
 * Plugins, same run, same payloads (issue 3, point 12).
 *
 * 1. tool.invoke round trips per second, sequential (c=1) and with 16 in flight:
 *      nexo  — ToolRegistry → plugin tool wrapper → PluginHost → an SDK child (bench/plugins/echo-tool)
 *      mcp   — @modelcontextprotocol/sdk Client → McpServer over stdio, the same echo tool
 *      floor — a JSON-lines echo child and a hand-written client (bench/wire/echo-bare.mjs)
 *    Goal: nexo >= 2 x mcp and nexo >= 0.5 x floor.
 *
 * 2. broker.event fan-out: events per second delivered to ten plugins (counted by the children),
 *    and proof that a plugin that stops reading neither slows the nine others (their rate with
 *    and without it) nor grows the host's memory: its queue stays <= 64 and the rest is dropped.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { type BenchContext, interleave, median, round } from "./lib.js";
import { type Contender, drive, floorContender, mcpContender, nexoContender } from "./plugins/contenders.js";
import { Fleet } from "./plugins/fanout.js";

const MiB = 1024 * 1024;

/** The heap after a full collection, so that growth means retained memory, not garbage. */
function retainedHeap(): number {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  return process.memoryUsage().heapUsed;
}

async function toolInvoke(ctx: BenchContext): Promise<void> {
  const contenders: Record<"nexo" | "mcp" | "floor", Contender> = {
    nexo: await nexoContender(),
    mcp: await mcpContender(),
    floor: await floorContender(),
  };
  const args = { text: "hello", n: 1 };
  try {
    for (const concurrency of [1, 16]) {
      for (const c of Object.values(contenders)) await drive(c, args, concurrency, 0.2); // warm-up
      const samples = await interleave(ctx.reps, {
        nexo: () => drive(contenders.nexo, args, concurrency, ctx.seconds),
        mcp: () => drive(contenders.mcp, args, concurrency, ctx.seconds),
        floor: () => drive(contenders.floor, args, concurrency, ctx.seconds),
      });
      const m = { nexo: median(samples.nexo), mcp: median(samples.mcp), floor: median(samples.floor) };
      const vsMcp = round(m.nexo / m.mcp);
      const vsFloor = round(m.nexo / m.floor);
      ctx.log(
        `tool.invoke c=${concurrency}: nexo ${Math.round(m.nexo)}/s  mcp ${Math.round(m.mcp)}/s  floor ${Math.round(m.floor)}/s  nexo/mcp ${vsMcp}  nexo/floor ${vsFloor}`,
      );
      for (const who of ["mcp", "floor"] as const) {
        ctx.record({
          benchmark: "plugins",
          name: `tool.invoke c=${concurrency} ${who}`,
          metric: "round trips per second",
          value: Math.round(m[who]),
          unit: "rt/s",
          samples: samples[who].map((v) => Math.round(v)),
        });
      }
      ctx.record({
        benchmark: "plugins",
        name: `tool.invoke c=${concurrency} nexo`,
        metric: "round trips per second",
        value: Math.round(m.nexo),
        unit: "rt/s",
        samples: samples.nexo.map((v) => Math.round(v)),
        ratios: { "nexo/mcp": vsMcp, "nexo/floor": vsFloor },
        goal: { ratio: "nexo/mcp >= 2 and nexo/floor >= 0.5", met: vsMcp >= 2 && vsFloor >= 0.5 },
      });
    }
  } finally {
    await Promise.all(Object.values(contenders).map((c) => c.close()));
  }
}

async function fanOut(ctx: BenchContext): Promise<void> {
  const fleet = await Fleet.start(10, true);
  const nine = fleet.members.filter((m) => /^fan[0-8]$/.test(m.id)).map((m) => m.id);
  const ten = [...nine, "fan9"];
  const payload = { text: "x".repeat(256), channel: "fan", to: "U123" };
  let maxStalledQueue = 0;
  const memory = { heapBefore: 0, heapAfter: 0, rssBefore: 0, rssAfter: 0 };
  try {
    const run = (active: readonly string[], measured: readonly string[]) => async () => {
      fleet.activate(active);
      const sample = await fleet.sample(measured, payload, ctx.seconds);
      maxStalledQueue = Math.max(maxStalledQueue, sample.maxStalledQueue);
      return sample.rate;
    };
    await run(ten, ten)(); // warm-up: the children's JIT, the pipes
    memory.heapBefore = retainedHeap();
    memory.rssBefore = process.memoryUsage().rss;
    const samples = await interleave(ctx.reps, {
      ten: run(ten, ten),
      nine: run(nine, nine),
      nineWithStalled: run([...nine, "fan_stalled"], nine),
    });
    memory.heapAfter = retainedHeap();
    memory.rssAfter = process.memoryUsage().rss;
    const stalled = fleet.member("fan_stalled").bridge.stats();
    const m = {
      ten: median(samples.ten),
      nine: median(samples.nine),
      stalled: median(samples.nineWithStalled),
    };
    // Paired by repetition (each pair ran back to back), so slow drifts of a shared machine cancel out.
    const ratio = round(median(samples.nineWithStalled.map((v, i) => v / (samples.nine[i] ?? Number.NaN))));
    const heapGrowth = round((memory.heapAfter - memory.heapBefore) / MiB, 2);
    const rssGrowth = round((memory.rssAfter - memory.rssBefore) / MiB, 1);
    // What the dropped events would weigh had they been kept: the bound the queue avoids.
    const droppedMiB = round((stalled.dropped * Buffer.byteLength(JSON.stringify(payload))) / MiB, 1);
    ctx.log(
      `broker.event fan-out: 10 plugins ${Math.round(m.ten)} deliveries/s; nine ${Math.round(m.nine)}/s alone, ${Math.round(m.stalled)}/s beside a stalled one (ratio ${ratio}); stalled: queued max ${maxStalledQueue}, dropped ${stalled.dropped}, delivered ${stalled.delivered}; host retained heap ${heapGrowth} MiB, rss ${rssGrowth} MiB over the run (dropped payloads: ${droppedMiB} MiB)`,
    );
    ctx.record({
      benchmark: "plugins",
      name: "broker.event fan-out to 10 plugins",
      metric: "events delivered per second (sum over plugins, counted by the children)",
      value: Math.round(m.ten),
      unit: "events/s",
      samples: samples.ten.map((v) => Math.round(v)),
    });
    ctx.record({
      benchmark: "plugins",
      name: "broker.event fan-out: nine plugins alone",
      metric: "events delivered per second to the nine",
      value: Math.round(m.nine),
      unit: "events/s",
      samples: samples.nine.map((v) => Math.round(v)),
    });
    ctx.record({
      benchmark: "plugins",
      name: "broker.event fan-out: nine plugins beside a stalled one",
      metric: "events delivered per second to the nine",
      value: Math.round(m.stalled),
      unit: "events/s",
      samples: samples.nineWithStalled.map((v) => Math.round(v)),
      ratios: { "with_stalled/alone": ratio, medians_ratio: round(m.stalled / m.nine) },
      // A stalled plugin costs the others one dropped offer per event; the margin is the noise of
      // a shared machine (single samples vary by ±20 %).
      goal: { ratio: "with_stalled/alone (median of paired ratios)", min: 0.85, met: ratio >= 0.85 },
    });
    ctx.record({
      benchmark: "plugins",
      name: "broker.event stalled plugin: largest queue",
      metric: "broker.event notifications queued for the stalled plugin (max seen)",
      value: maxStalledQueue,
      unit: "events",
      samples: [maxStalledQueue],
      ratios: { dropped: stalled.dropped, delivered_before_stall: stalled.delivered },
      goal: { ratio: "queued", max: 64, met: maxStalledQueue <= 64 && stalled.dropped > 0 },
    });
    ctx.record({
      benchmark: "plugins",
      name: "broker.event stalled plugin: host memory growth",
      metric: "retained heap growth over all fan-out samples (after a full GC)",
      value: heapGrowth,
      unit: "MiB",
      samples: [heapGrowth],
      ratios: { rss_growth_mib: rssGrowth, dropped_payload_mib: droppedMiB },
      goal: { ratio: "heap growth MiB", max: 16, met: heapGrowth <= 16 },
    });
  } finally {
    await fleet.stop();
  }
}

export default async function plugins(ctx: BenchContext): Promise<void> {
  await toolInvoke(ctx);
  await fanOut(ctx);
}
