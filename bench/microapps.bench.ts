/**
 * Microapps, same run, same payloads (issue 13, point 10).
 *
 * 1. The same trivial echo tool called through the engine's ToolRegistry, round trips per second,
 *    sequential (c=1) and with 16 in flight:
 *      microapp — microapp tool → MicroappHost → `tools/call` → an SDK microapp child
 *      plugin   — plugin tool → PluginHost → `tool.invoke` → an SDK plugin child
 *      floor    — a JSON-lines echo child and a hand-written client (the bare baseline)
 *    Goal: microapp and plugin within 1.2× of each other.
 *
 * 2. The admin call round trip: the microapp calls `nexo/admin/microapp_audit/tail {limit: 1}`
 *    back to back (through the daemon's admin frame: the capability gate, the handler over SQLite,
 *    the audit row written), counted inside the microapp; beside the floor's round trips.
 */
import { type BenchContext, interleave, median, round } from "./lib.js";
import { microappContender } from "./microapps/contenders.js";
import { type Contender, drive, floorContender, nexoContender } from "./plugins/contenders.js";

const WITHIN = 1.2;

async function toolCalls(ctx: BenchContext, contenders: Record<"microapp" | "plugin" | "floor", Contender>) {
  const args = { text: "hello", n: 1 };
  for (const concurrency of [1, 16]) {
    for (const c of Object.values(contenders)) await drive(c, args, concurrency, 0.2); // warm-up
    const samples = await interleave(ctx.reps, {
      microapp: () => drive(contenders.microapp, args, concurrency, ctx.seconds),
      plugin: () => drive(contenders.plugin, args, concurrency, ctx.seconds),
      floor: () => drive(contenders.floor, args, concurrency, ctx.seconds),
    });
    const m = {
      microapp: median(samples.microapp),
      plugin: median(samples.plugin),
      floor: median(samples.floor),
    };
    // Time per call, microapp over plugin: 1.1 means tools/call takes 10 % longer than tool.invoke.
    const slower = round(m.plugin / m.microapp);
    const vsFloor = round(m.microapp / m.floor);
    ctx.log(
      `tools/call vs tool.invoke c=${concurrency}: microapp ${Math.round(m.microapp)}/s  plugin ${Math.round(m.plugin)}/s  floor ${Math.round(m.floor)}/s  time microapp/plugin ${slower}  microapp/floor ${vsFloor}`,
    );
    for (const who of ["plugin", "floor"] as const) {
      ctx.record({
        benchmark: "microapps",
        name: `echo tool c=${concurrency} ${who === "plugin" ? "plugin tool.invoke" : "floor"}`,
        metric: "round trips per second",
        value: Math.round(m[who]),
        unit: "rt/s",
        samples: samples[who].map((v) => Math.round(v)),
      });
    }
    ctx.record({
      benchmark: "microapps",
      name: `echo tool c=${concurrency} microapp tools/call`,
      metric: "round trips per second",
      value: Math.round(m.microapp),
      unit: "rt/s",
      samples: samples.microapp.map((v) => Math.round(v)),
      ratios: { "time microapp/plugin": slower, "rate microapp/floor": vsFloor },
      goal: {
        ratio: "time microapp/plugin (within 1.2x either way)",
        min: round(1 / WITHIN),
        max: WITHIN,
        met: slower <= WITHIN && slower >= 1 / WITHIN,
      },
    });
  }
}

async function adminRoundTrip(
  ctx: BenchContext,
  microapp: Awaited<ReturnType<typeof microappContender>>,
  floor: Contender,
) {
  await microapp.adminRate(0.2, 1); // warm-up
  const args = { text: "hello", n: 1 };
  const samples = await interleave(ctx.reps, {
    admin: () => microapp.adminRate(ctx.seconds, 1),
    floor: () => drive(floor, args, 1, ctx.seconds),
  });
  const m = { admin: median(samples.admin), floor: median(samples.floor) };
  const micros = round(1e6 / m.admin, 1);
  const vsFloor = round(m.admin / m.floor);
  ctx.log(
    `admin round trip (microapp_audit/tail, c=1): ${Math.round(m.admin)}/s = ${micros} µs per call; floor ${Math.round(m.floor)}/s; admin/floor ${vsFloor}`,
  );
  ctx.record({
    benchmark: "microapps",
    name: "admin call round trip c=1 (microapp → microapp_audit/tail → reply)",
    metric: "round trips per second, counted in the microapp",
    value: Math.round(m.admin),
    unit: "rt/s",
    samples: samples.admin.map((v) => Math.round(v)),
    ratios: { "rate admin/floor": vsFloor, "us per call": micros },
  });
  ctx.record({
    benchmark: "microapps",
    name: "admin call round trip c=1 floor",
    metric: "round trips per second",
    value: Math.round(m.floor),
    unit: "rt/s",
    samples: samples.floor.map((v) => Math.round(v)),
  });
}

export default async function microapps(ctx: BenchContext): Promise<void> {
  const contenders = {
    microapp: await microappContender(),
    plugin: await nexoContender(),
    floor: await floorContender(),
  };
  try {
    await toolCalls(ctx, contenders);
    await adminRoundTrip(ctx, contenders.microapp, contenders.floor);
  } finally {
    await Promise.all(Object.values(contenders).map((c) => c.close()));
  }
}
