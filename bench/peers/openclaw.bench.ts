/**
 * nexo's daemon beside OpenClaw's gateway (issue 15, "keep ahead": ready, idle RSS, turn), only
 * with `npm run bench -- --peers` (it installs OpenClaw and a Node 24 to run it, ~850 MB unpacked,
 * into the cache directory once). Both answer from one local mock of Anthropic's Messages API,
 * interleaved round by round (nexo, OpenClaw, nexo, …); each round of each:
 *   1. spawn → its GET /readyz answers 200, and the CPU time its process tree used until then;
 *   2. resident memory (VmRSS) of the process, and of its whole tree, once ready and settled
 *      (SETTLE_MS later, no message yet);
 *   3. the first turn (message posted → the answer back), then TURNS more turns of the same
 *      conversation, each timed alike.
 * Ratios nexo/openclaw with the goal ≤ 1 (keep ahead). OpenClaw unavailable → one line, no rows.
 * A round that fails is logged and left out of the medians (counted in `failed_reps`).
 */
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { MockLlmServer } from "@nexo/mock-llm";
import { descendants, residentMemory, totalResident } from "../daemon/proc.js";
import { type BenchContext, median, round } from "../lib.js";
import { OPENCLAW_NODE_VERSION, OPENCLAW_VERSION, openclawInstall } from "./openclaw.js";
import { type Gateway, startNexo, startOpenClaw } from "./openclaw-gateways.js";

const NEXO_VERSION = (
  JSON.parse(readFileSync(new URL("../../packages/nexo/package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;
/** How long an idle gateway is left after ready before its memory is read. */
const SETTLE_MS = 5_000;
/** Turns timed after the first, per round. */
const TURNS = 5;
const MODEL = "claude-sonnet-5";
const ANSWER = "Hello.";

type Side = "nexo" | "openclaw";

/** utime + stime of a process (all its threads) and of its reaped children, seconds. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
    // fields[0] is field 3 (state): utime, stime, cutime, cstime are fields 14–17.
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    return ticks / 100; // USER_HZ is 100 on Linux
  } catch {
    return 0; // exited between the listing and the read
  }
}

/** CPU seconds of a process and its live descendants. */
function treeCpuSeconds(pid: number): number {
  return [pid, ...descendants(pid)].reduce((sum, p) => sum + cpuSeconds(p), 0);
}

interface Round {
  readyMs: number;
  readyCpuS: number;
  firstTurnCpuMs: number;
  turnCpuMs: number;
  rssMB: number;
  treeMB: number;
  processes: number;
  firstTurnMs: number;
  turnMs: number[];
}

export default async function openclaw(ctx: BenchContext): Promise<void> {
  const install = await openclawInstall();
  if ("skip" in install) {
    ctx.log(`openclaw: skipped (${install.skip})`);
    return;
  }
  const mock = new MockLlmServer();
  await mock.start();
  const setup = { mockUrl: mock.url, model: MODEL };
  const starters: Record<Side, () => Promise<Gateway>> = {
    nexo: () => startNexo(setup),
    openclaw: () => startOpenClaw(install, setup),
  };
  const label: Record<Side, string> = {
    nexo: `nexo start ${NEXO_VERSION}`,
    openclaw: `OpenClaw gateway ${OPENCLAW_VERSION} (Node ${OPENCLAW_NODE_VERSION})`,
  };
  const rounds: Record<Side, Round[]> = { nexo: [], openclaw: [] };
  const failed: Record<Side, number> = { nexo: 0, openclaw: 0 };
  /** Request bodies the mock received per side, for the log: what each sends the model per turn. */
  const bodies: Record<Side, number[]> = { nexo: [], openclaw: [] };
  let sessions = 0;

  const runRound = async (side: Side): Promise<void> => {
    // Every answer of this round's conversation asks for its marker, so a request of another
    // round can never take it; every one must be asked for.
    const marker = `[bench session ${++sessions}]`;
    mock.reset(Array.from({ length: 1 + TURNS }, () => ({ text: ANSWER, match_any: marker })));
    let gateway: Gateway | undefined;
    try {
      gateway = await starters[side]();
      const readyCpuS = treeCpuSeconds(gateway.pid);
      await sleep(SETTLE_MS);
      const tree = descendants(gateway.pid);
      const rssMB = residentMemory(gateway.pid).rssMB;
      const treeMB = rssMB + totalResident(tree).rssMB;
      const conversation = `bench-${sessions}`;
      const timed = async (text: string) => {
        const t0 = performance.now();
        const answer = await gateway!.turn(conversation, text);
        const ms = performance.now() - t0;
        if (answer.trim() !== ANSWER)
          throw new Error(`${side} answered ${JSON.stringify(answer.slice(0, 200))}`);
        return ms;
      };
      const cpu0 = treeCpuSeconds(gateway.pid);
      const firstTurnMs = await timed(`${marker} say hello`);
      const cpu1 = treeCpuSeconds(gateway.pid);
      const turnMs: number[] = [];
      for (let i = 0; i < TURNS; i++) turnMs.push(await timed(`say hello again (${i + 1})`));
      const cpu2 = treeCpuSeconds(gateway.pid);
      if (mock.remaining() !== 0)
        throw new Error(`${mock.remaining()} scripted answers were never asked for`);
      const requests = mock.requests();
      bodies[side].push(...requests.map((r) => JSON.stringify(r.body).length));
      if (requests.length !== 1 + TURNS)
        throw new Error(`${requests.length} model requests for ${1 + TURNS} turns`);
      rounds[side].push({
        readyMs: gateway.readyMs,
        readyCpuS,
        rssMB,
        treeMB,
        processes: 1 + tree.length,
        firstTurnMs,
        turnMs,
        firstTurnCpuMs: (cpu1 - cpu0) * 1000,
        turnCpuMs: ((cpu2 - cpu1) * 1000) / TURNS,
      });
    } catch (error) {
      failed[side]++;
      ctx.log(`openclaw: ${side}: round failed: ${(error as Error).message.split("\n")[0]}`);
    } finally {
      if (gateway) {
        const stopped = await gateway.stop();
        if (stopped.leftovers)
          ctx.log(`openclaw: ${side}: processes of its group outlived the stop (killed)`);
      }
    }
  };

  try {
    for (let r = 0; r < ctx.reps; r++) {
      await runRound("nexo");
      await runRound("openclaw");
    }
  } finally {
    await mock.close();
  }

  const record = (
    what: string,
    pick: (r: Round) => number[],
    unit: string,
    metric: string,
    goal: boolean,
  ) => {
    const samples = { nexo: rounds.nexo.flatMap(pick), openclaw: rounds.openclaw.flatMap(pick) };
    const mid = { nexo: median(samples.nexo), openclaw: median(samples.openclaw) };
    const both = samples.nexo.length > 0 && samples.openclaw.length > 0;
    for (const side of ["nexo", "openclaw"] as const) {
      if (samples[side].length === 0) continue;
      const ratios: Record<string, number> = {};
      if (failed[side] > 0) ratios.failed_reps = failed[side];
      const ratio = both ? round(mid.nexo / mid.openclaw, 3) : undefined;
      if (side === "nexo" && ratio !== undefined) ratios["nexo/openclaw"] = ratio;
      ctx.record({
        benchmark: "openclaw",
        name: `daemon vs OpenClaw: ${what}, ${label[side]}`,
        metric,
        value: round(mid[side], 1),
        unit,
        samples: samples[side].map((v) => round(v, 1)),
        ...(Object.keys(ratios).length > 0 ? { ratios } : {}),
        ...(side === "nexo" && goal && ratio !== undefined
          ? { goal: { ratio: "nexo/openclaw", max: 1, met: ratio <= 1 && failed.nexo === 0 } }
          : {}),
      });
    }
    ctx.log(
      `openclaw: ${what}: nexo ${round(mid.nexo, 1)} ${unit}, OpenClaw ${round(mid.openclaw, 1)} ${unit}`,
    );
  };

  record(
    "spawn to ready",
    (r) => [r.readyMs],
    "ms",
    "milliseconds from spawn to GET /readyz answering 200",
    true,
  );
  record(
    "CPU time spawn to ready",
    (r) => [r.readyCpuS],
    "s",
    "CPU seconds (user + system) of the process tree from spawn to ready",
    false,
  );
  record(
    "idle RSS of the process",
    (r) => [r.rssMB],
    "MB",
    `MB (VmRSS) of the gateway process, ${SETTLE_MS / 1000} s after ready, before any message`,
    true,
  );
  record(
    "idle RSS of the process tree",
    (r) => [r.treeMB],
    "MB",
    `MB (VmRSS summed over the process and its descendants), ${SETTLE_MS / 1000} s after ready`,
    true,
  );
  record(
    "first turn after ready",
    (r) => [r.firstTurnMs],
    "ms",
    "milliseconds from posting the first message to having its answer",
    true,
  );
  record(
    "one turn",
    (r) => r.turnMs,
    "ms",
    `milliseconds from posting a message to having its answer (turns 2–${TURNS + 1} of a conversation)`,
    true,
  );
  record(
    "CPU time of the first turn",
    (r) => [r.firstTurnCpuMs],
    "ms",
    "CPU milliseconds (user + system) of the process tree during the first turn",
    false,
  );
  record(
    "CPU time per turn",
    (r) => [r.turnCpuMs],
    "ms",
    `CPU milliseconds (user + system) of the process tree per turn, turns 2–${TURNS + 1}`,
    false,
  );
  ctx.log(
    `openclaw: processes per tree: nexo ${rounds.nexo.map((r) => r.processes).join(",")}, OpenClaw ${rounds.openclaw.map((r) => r.processes).join(",")}`,
  );
  ctx.log(
    `openclaw: model request body, median bytes: nexo ${median(bodies.nexo)}, OpenClaw ${median(bodies.openclaw)}`,
  );
}
