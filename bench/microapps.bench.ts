/**
 * Microapps, same run, same payloads (issue 13, point 10).
 *
 * 1. The same trivial echo tool called through the engine's ToolRegistry, round trips per second,
 *    sequential (c=1) and with 16 in flight:
 *      microapp — microapp tool → MicroappHost → `tools/call` → an SDK microapp child
 *      plugin   — plugin tool → PluginHost → `tool.invoke` → an SDK plugin child
 *      floor    — a JSON-lines echo child and a hand-written client (the bare baseline)
 *    Goal: microapp and plugin within 1.2× of each other, judged on the median of the paired
 *    rounds' ratios; beside it the CPU per call of the whole process tree (less load-sensitive).
 *
 * 2. The admin call round trip: the microapp calls `nexo/admin/microapp_audit/tail {limit: 1}`
 *    back to back (through the daemon's admin frame: the capability gate, the handler over SQLite,
 *    the audit row written), counted inside the microapp; beside the floor's round trips.
 */
import { type BenchContext, interleave, median, round } from "./lib.js";
import { microappContender } from "./microapps/contenders.js";
import { childrenCpuMicros } from "./microapps/process-cpu.js";
import { type Contender, drive, floorContender, nexoContender } from "./plugins/contenders.js";

const WITHIN = 1.2;

type Who = "microapp" | "plugin" | "floor";

/**
 * One timed run of `drive` that also notes the CPU the whole process tree spent per call during it
 * (the bench process and the contenders' children), into `cpu`.
 */
async function driveMetered(
  contender: Contender,
  args: Record<string, unknown>,
  concurrency: number,
  seconds: number,
  cpu: number[],
): Promise<number> {
  let calls = 0;
  const counted: Contender = {
    call: (a) => {
      calls++;
      return contender.call(a);
    },
    close: () => contender.close(),
  };
  // The /proc scans stay outside this process's own window: only the calls are counted.
  const childrenBefore = childrenCpuMicros();
  const self = process.cpuUsage();
  const rate = await drive(counted, args, concurrency, seconds);
  const { user, system } = process.cpuUsage(self);
  const childrenAfter = childrenCpuMicros();
  if (childrenBefore !== undefined && childrenAfter !== undefined && calls > 0)
    cpu.push((user + system + childrenAfter - childrenBefore) / calls);
  return rate;
}

async function toolCalls(ctx: BenchContext, contenders: Record<Who, Contender>) {
  const args = { text: "hello", n: 1 };
  for (const concurrency of [1, 16]) {
    for (const c of Object.values(contenders)) await drive(c, args, concurrency, 0.2); // warm-up
    const cpu: Record<Who, number[]> = { microapp: [], plugin: [], floor: [] };
    const run = (who: Who) => () => driveMetered(contenders[who], args, concurrency, ctx.seconds, cpu[who]);
    const samples = await interleave(ctx.reps, {
      microapp: run("microapp"),
      plugin: run("plugin"),
      floor: run("floor"),
    });
    const m = {
      microapp: median(samples.microapp),
      plugin: median(samples.plugin),
      floor: median(samples.floor),
    };
    // Time per call, microapp over plugin: 1.1 means tools/call takes 10 % longer than tool.invoke.
    // The goal is judged per round — microapp and plugin ran one right after the other, under the
    // same neighbours — and the median of those paired ratios taken: on a shared machine a round's
    // rate swings 2-3x with the load, which a ratio of separate medians carries straight into it.
    const paired = round(median(samples.plugin.map((plugin, i) => plugin / samples.microapp[i]!)));
    const ofMedians = round(m.plugin / m.microapp);
    const vsFloor = round(m.microapp / m.floor);
    const cpuPerCall = { microapp: median(cpu.microapp), plugin: median(cpu.plugin) };
    const cpuRatio = round(cpuPerCall.microapp / cpuPerCall.plugin);
    ctx.log(
      `tools/call vs tool.invoke c=${concurrency}: microapp ${Math.round(m.microapp)}/s  plugin ${Math.round(m.plugin)}/s  floor ${Math.round(m.floor)}/s  time microapp/plugin ${paired} (paired rounds; ${ofMedians} from the medians)  microapp/floor ${vsFloor}` +
        (cpu.microapp.length > 0
          ? `  CPU per call microapp ${Math.round(cpuPerCall.microapp)} us, plugin ${Math.round(cpuPerCall.plugin)} us (${cpuRatio})`
          : ""),
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
      ratios: {
        "time microapp/plugin": paired,
        "time microapp/plugin of medians": ofMedians,
        "rate microapp/floor": vsFloor,
      },
      goal: {
        ratio: "time microapp/plugin, median of paired rounds (within 1.2x either way)",
        min: round(1 / WITHIN),
        max: WITHIN,
        met: paired <= WITHIN && paired >= 1 / WITHIN,
      },
    });
    if (cpu.microapp.length === 0) continue;
    for (const who of ["microapp", "plugin"] as const) {
      ctx.record({
        benchmark: "microapps",
        name: `echo tool c=${concurrency} CPU per call ${who === "plugin" ? "plugin tool.invoke" : "microapp tools/call"}`,
        metric: "CPU microseconds per call, the bench process and the children together",
        value: Math.round(cpuPerCall[who]),
        unit: "us",
        samples: cpu[who].map((v) => Math.round(v)),
        ...(who === "microapp" ? { ratios: { "cpu microapp/plugin": cpuRatio } } : {}),
      });
    }
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
