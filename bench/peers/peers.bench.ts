/**
 * nexo side by side with the agents a user would pick instead (issue 15.4), only with
 * `npm run bench -- --peers` (it downloads Claude Code and Codex, ~500 MB unpacked, into the cache
 * directory once). All three run against one local mock of the model APIs, interleaved round by
 * round (nexo, Claude Code, Codex, nexo, …) so a noisy neighbour hurts them alike:
 *   1. one-shot piped use: spawn → first output line → answer complete → exit, for a one-word
 *      answer. Goals: nexo's spawn → answer and spawn → exit ≤ Codex's; answer → exit ≤ 20 ms.
 *   2. spawn → ready to take a prompt (nexo's `ready` line, Codex app-server's `initialize`
 *      response; Claude Code announces nothing before its first prompt). Goal: ≤ 1.5 × Codex.
 *   3. a 20-turn conversation in one process, each turn one read of notes.txt with the agent's own
 *      file tool, wall time of the 20 turns. Goal (keep ahead): ≤ 0.5 × each peer.
 *   4. a 5,000-delta answer on the session's second turn (the first pays one-time loading): the
 *      answer's deltas' worth of text received per second, as bench/appserver.bench.ts counts it
 *      (text, not lines: an agent may merge deltas). Goal (keep ahead): ≥ each peer.
 *   5. peak RSS of each agent's process tree after the conversation and after the long answer.
 *      Goal (keep ahead): ≤ each peer.
 * A peer that cannot be installed is skipped with a one-line reason; a repetition that fails is
 * logged and left out of the medians (counted in `failed_reps`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MockLlmServer, type MockResponse } from "@nexo/mock-llm";
import { CODEX_VERSION, codexBinary } from "../appserver/codex.js";
import { CODEX_KEY_ENV, codexHome } from "../appserver/codex-home.js";
import { type BenchContext, type BenchResult, interleave, median, NEXO_COMMAND, round } from "../lib.js";
import { type Agent, claudeAgent, codexAgent, nexoAgent } from "./agents.js";
import { CLAUDE_CODE_VERSION, claudeBinary, claudeEnv } from "./claude.js";

const NEXO_VERSION = (
  JSON.parse(readFileSync(new URL("../../packages/nexo/package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;
const TURNS = 20;
const DELTAS = 5_000;

type Name = Agent["name"];
/** One bound on nexo's ratio to each peer measured. */
type Bound = { max: number } | { min: number };

export default async function peers(ctx: BenchContext): Promise<void> {
  const workspace = mkdtempSync(join(tmpdir(), "nexo-bench-peers-ws-"));
  const home = mkdtempSync(join(tmpdir(), "nexo-bench-peers-home-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-bench-peers-state-"));
  writeFileSync(join(workspace, "notes.txt"), "hello from the notes\n".repeat(50));
  const mock = new MockLlmServer();
  await mock.start();
  const codexHomeDir = codexHome(mock.url);
  try {
    const agents: Agent[] = [
      nexoAgent(
        {
          command: NEXO_COMMAND,
          args: ["agent", "--json-stream", "--provider", "anthropic", "--model", "claude-sonnet-5"],
          env: {
            PATH: process.env.PATH,
            HOME: home,
            NEXO_STATE_DIR: stateDir,
            NEXO_LOG: "warn",
            ANTHROPIC_API_KEY: "bench",
            ANTHROPIC_BASE_URL: mock.url,
          },
          cwd: workspace,
        },
        NEXO_VERSION,
      ),
    ];
    const claude = await claudeBinary();
    if ("skip" in claude) ctx.log(`peers: Claude Code skipped (${claude.skip})`);
    else agents.push(claudeAgent(claude.path, CLAUDE_CODE_VERSION, claudeEnv(home, mock.url), workspace));
    const codex = await codexBinary();
    if ("skip" in codex) ctx.log(`peers: Codex skipped (${codex.skip})`);
    else
      agents.push(
        codexAgent(
          codex.path,
          CODEX_VERSION,
          { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexHomeDir, [CODEX_KEY_ENV]: "bench" },
          workspace,
        ),
      );
    const measured = agents.map((a) => a.name);
    const label = (name: Name) => agents.find((a) => a.name === name)!.label;

    // Every session opens with its own marker and every entry of its script asks for it
    // (match_any): an answer meant for one agent's session can never be served to a stray request
    // of another — a peer's late request then fails loudly instead of shifting the script.
    let sessions = 0;
    const script = (entries: MockResponse[]): string => {
      const marker = `[bench session ${++sessions}]`;
      mock.reset(entries.map((entry) => ({ ...entry, match_any: marker })));
      return marker;
    };

    /** A repetition that fails is logged and yields NaN (left out of the median, counted). */
    const failed: Record<string, number> = {};
    const guarded = (what: string, name: Name, rep: () => Promise<number>) => async (): Promise<number> => {
      try {
        return await rep();
      } catch (error) {
        failed[`${what}/${name}`] = (failed[`${what}/${name}`] ?? 0) + 1;
        ctx.log(`peers: ${what}, ${name}: repetition failed: ${(error as Error).message.split("\n")[0]}`);
        return Number.NaN;
      }
    };
    const finite = (values: number[]) => values.filter(Number.isFinite);
    const mid = (values: number[]) => median(finite(values));

    /**
     * Records one row per agent; nexo's carries its ratio to each peer and, with `bound`, the goal
     * that every ratio meets it (and that none of nexo's repetitions failed).
     */
    const record = (
      what: string,
      samples: Partial<Record<Name, number[]>>,
      unit: string,
      metric: string,
      bound?: Bound,
      against: Name[] = ["claude", "codex"],
    ) => {
      for (const name of measured) {
        const mine = samples[name];
        if (!mine) continue;
        const ratios: Record<string, number> = {};
        const fails = failed[`${what}/${name}`] ?? 0;
        if (fails > 0) ratios.failed_reps = fails;
        let goal: BenchResult["goal"];
        if (name === "nexo") {
          const peersHere = against.filter((p) => samples[p] && finite(samples[p]!).length > 0);
          for (const p of peersHere) ratios[`nexo/${p}`] = round(mid(mine) / mid(samples[p]!));
          if (bound && peersHere.length > 0) {
            const values = peersHere.map((p) => ratios[`nexo/${p}`]!);
            const ok =
              "max" in bound ? values.every((v) => v <= bound.max) : values.every((v) => v >= bound.min);
            goal = {
              ratio: peersHere.map((p) => `nexo/${p}`).join(" and "),
              ...bound,
              met: ok && fails === 0,
            };
          }
        }
        ctx.record({
          benchmark: "peers",
          name: `${what}, ${label(name)}`,
          metric,
          value: round(mid(mine), unit === "events/s" ? 0 : 1),
          unit,
          samples: mine.map((v) => round(v, 1)),
          ...(Object.keys(ratios).length > 0 ? { ratios } : {}),
          ...(goal ? { goal } : {}),
        });
      }
      ctx.log(
        `peers: ${what}: ${measured
          .filter((n) => samples[n])
          .map((n) => `${n} ${round(mid(samples[n]!), 1)} ${unit}`)
          .join(", ")}`,
      );
    };

    // 1. one-shot: spawn → first output → answer → exit
    const shots: Record<Name, Array<{ first: number; done: number; exit: number }>> = {
      nexo: [],
      claude: [],
      codex: [],
    };
    const oneShots: Partial<Record<Name, () => Promise<number>>> = {};
    for (const agent of agents) {
      oneShots[agent.name] = guarded("one-shot", agent.name, async () => {
        const marker = script([{ text: "Hello." }]);
        const r = await agent.oneShot(`${marker} say hello`);
        shots[agent.name].push({ first: r.firstOutputMs, done: r.doneMs, exit: r.exitMs });
        return r.doneMs;
      });
    }
    await oneShots.nexo!(); // warm the file cache of every binary before timing
    for (const agent of agents.slice(1)) await oneShots[agent.name]!();
    for (const agent of agents) shots[agent.name].length = 0;
    for (const key of Object.keys(failed)) delete failed[key];
    const done = await interleave(ctx.reps, oneShots as Record<Name, () => Promise<number>>);
    const pick = (f: (s: { first: number; done: number; exit: number }) => number) =>
      Object.fromEntries(measured.map((n) => [n, shots[n].map(f)])) as Partial<Record<Name, number[]>>;
    record(
      "one-shot: spawn to first output line",
      pick((s) => s.first),
      "ms",
      "milliseconds",
    );
    record("one-shot: spawn to answer complete", done, "ms", "milliseconds", { max: 1 }, ["codex"]);
    record(
      "one-shot: spawn to exit",
      pick((s) => s.exit),
      "ms",
      "milliseconds",
      { max: 1 },
      ["codex"],
    );
    const exitSamples = pick((s) => s.exit - s.done);
    record("one-shot: answer complete to exit", exitSamples, "ms", "milliseconds");
    // The issue's absolute bound on nexo's own exit, beside the ratios.
    const exitMedian = mid(exitSamples.nexo ?? []);
    if (Number.isFinite(exitMedian)) {
      ctx.record({
        benchmark: "peers",
        name: "one-shot: answer complete to exit, nexo (bound)",
        metric: "milliseconds from the answer's last line to the process' exit",
        value: round(exitMedian, 1),
        unit: "ms",
        samples: (exitSamples.nexo ?? []).map((v) => round(v, 1)),
        goal: { ratio: "ms", max: 20, met: exitMedian <= 20 },
      });
    }

    // 2. spawn → ready (agents that announce it)
    const readies: Partial<Record<Name, () => Promise<number>>> = {};
    for (const agent of agents)
      if (agent.ready) readies[agent.name] = guarded("spawn to ready", agent.name, () => agent.ready!());
    const ready = await interleave(ctx.reps, readies as Record<Name, () => Promise<number>>);
    record(
      "spawn to ready (nexo: ready line; Codex: app-server initialize response)",
      ready,
      "ms",
      "milliseconds",
      { max: 1.5 },
      ["codex"],
    );

    // 3. + 5. the 20-turn conversation, peak RSS after it
    const talkRss: Partial<Record<Name, number[]>> = {};
    const talks: Partial<Record<Name, () => Promise<number>>> = {};
    for (const agent of agents) {
      talkRss[agent.name] = [];
      talks[agent.name] = guarded(`${TURNS}-turn conversation`, agent.name, async () => {
        const marker = script(
          Array.from({ length: TURNS }, (_, i): MockResponse[] => [
            { tool_calls: [agent.readCall(i, workspace)] },
            { text: `Turn ${i}: the notes say hello.` },
          ]).flat(),
        );
        const session = await agent.open();
        try {
          const t0 = performance.now();
          for (let i = 0; i < TURNS; i++)
            await session.turn(`${i === 0 ? `${marker} ` : ""}read notes.txt (${i})`);
          const ms = performance.now() - t0;
          talkRss[agent.name]!.push(session.peakRssMiB());
          if (mock.remaining() !== 0)
            throw new Error(`${mock.remaining()} scripted answers were never asked for`);
          return ms;
        } finally {
          await session.close();
        }
      });
    }
    const walls = await interleave(ctx.reps, talks as Record<Name, () => Promise<number>>);
    record(
      `${TURNS}-turn conversation, one file read per turn`,
      walls,
      "ms",
      "milliseconds, first turn sent to last turn done",
      { max: 0.5 },
    );
    record(
      `peak RSS of the process tree after the ${TURNS}-turn conversation`,
      talkRss,
      "MiB",
      "MiB (VmHWM summed over the agent's live process tree)",
      { max: 1 },
    );

    // 4. + 5. the 5,000-delta answer, peak RSS after it
    const text = Array.from({ length: DELTAS * 2 }, (_, i) => `w${i % 89}`).join(" "); // 2 words a delta
    const streamRss: Partial<Record<Name, number[]>> = {};
    const whole: Record<string, number> = {};
    const streams: Partial<Record<Name, () => Promise<number>>> = {};
    for (const agent of agents) {
      streamRss[agent.name] = [];
      whole[agent.name] = 0;
      streams[agent.name] = guarded(`${DELTAS}-delta answer`, agent.name, async () => {
        const marker = script([{ text: "Ready." }, { text }]);
        const session = await agent.open();
        try {
          await session.turn(`${marker} warm up`);
          const parts: string[] = [];
          const t0 = performance.now();
          await session.turn("talk", (delta) => parts.push(delta));
          const seconds = (performance.now() - t0) / 1000;
          streamRss[agent.name]!.push(session.peakRssMiB());
          const received = parts.join("");
          if (received === text) whole[agent.name]!++;
          return (DELTAS * Math.min(1, received.length / text.length)) / seconds;
        } finally {
          await session.close();
        }
      });
    }
    const rates = await interleave(ctx.reps, streams as Record<Name, () => Promise<number>>);
    record(
      `${DELTAS}-delta answer`,
      rates,
      "events/s",
      "the answer's deltas' worth of text received per second (5,000 x text received / whole text), prompt sent to turn done (second turn)",
      { min: 1 },
    );
    ctx.log(`peers: repetitions that received the whole answer: ${JSON.stringify(whole)}`);
    record(
      `peak RSS of the process tree after the ${DELTAS}-delta answer`,
      streamRss,
      "MiB",
      "MiB (VmHWM summed over the agent's live process tree)",
      { max: 1 },
    );
  } finally {
    await mock.close();
    for (const dir of [workspace, home, stateDir, codexHomeDir])
      rmSync(dir, { recursive: true, force: true });
  }
}
