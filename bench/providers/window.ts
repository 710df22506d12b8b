/**
 * The providers benchmark's timed window, answer by answer (docs/performance.md, "OpenAI-format
 * streaming", "The bench's window, profiled").
 *
 * The bench takes the median of six long answers per format, read one warm-up answer into a fresh
 * process; what those answers pay is not the steady state. This runs `bench/providers.bench.ts`
 * itself, unchanged, in `processes` fresh child processes, and records each of its long answers
 * from the provider's `stream()` call to the end of its iteration: wall time, CPU of the main
 * thread and of the other threads together (V8's workers: its concurrent GC and compiler;
 * `/proc/self/task/<tid>/schedstat`), the time the main thread waited for a core, and the garbage
 * collections that began inside it (`perf_hooks` "gc" entries). The round and who went first in it
 * are counted from the calls, as `takingTurns` orders them. The two reads of the /proc files per
 * answer fall inside the bench's own CPU window (tens of µs in an answer of ~10 ms).
 *
 *   node --import tsx bench/providers/window.ts [processes=12]
 *
 * Prints, over all processes, the medians by format and position (first or second in its round)
 * and each process's bench figures: the provider ratio, the bytes-alone ratio and each format's
 * rate against its bytes alone. With NODE_OPTIONS=--cpu-prof the per-answer `window` lines (hrtime
 * µs, the profile's clock) let a profile's samples be split by answer.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { type PerformanceEntry, PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { AnthropicProvider } from "../../packages/nexo/src/engine/providers/anthropic.js";
import { OpenAiProvider } from "../../packages/nexo/src/engine/providers/openai.js";
import type { ChatRequest, ProviderEvent } from "../../packages/nexo/src/engine/types.js";
import { type BenchResult, median } from "../lib.js";
import providers from "../providers.bench.js";

/** The bench's long answer has 10,000 deltas (bench/providers.bench.ts, WORDS / 2). */
const DELTAS = 10_000;

type Format = "anthropic" | "openai";

/** One long answer as recorded in the child. */
interface Answer {
  format: Format;
  /** 0 for the warm-up, then the bench's rounds from 1. */
  round: number;
  second: boolean;
  ms: number;
  /** µs of CPU per delta: the main thread, the other threads, and the main thread's wait for a core. */
  main: number;
  background: number;
  wait: number;
  /** GC pauses that began inside the answer: ms in all, scavenges, mark-compacts. */
  gcMs: number;
  scavenges: number;
  markCompacts: number;
  /** hrtime in µs, the clock of a --cpu-prof profile's samples. */
  window: [number, number];
}

/** Each thread's run time and the main thread's wait so far, in ns. */
function threadTimes(): { main: number; background: number; wait: number } {
  let background = 0;
  let main = 0;
  let wait = 0;
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const [run, waited] = readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ").map(Number);
      if (tid === String(process.pid)) {
        main = run!;
        wait = waited!;
      } else background += run!;
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return { main, background, wait };
}

/** Runs the bench once in this process, printing its answers and results as JSON lines. */
async function child(): Promise<void> {
  const gcs: Array<{ start: number; ms: number; kind: number }> = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      gcs.push({
        start: e.startTime,
        ms: e.duration,
        // Node 20 puts the kind in `detail` (perf_hooks constants: 1 minor, 4 major).
        kind: (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0,
      });
  }).observe({ entryTypes: ["gc"] });
  const answers: Array<Omit<Answer, "gcMs" | "scavenges" | "markCompacts"> & { start: number }> = [];
  let longCalls = 0;
  const watch = (format: Format, proto: { stream(request: ChatRequest): AsyncIterable<ProviderEvent> }) => {
    const stream = proto.stream;
    proto.stream = function (this: unknown, request: ChatRequest) {
      const events = stream.call(this, request);
      const first = request.messages[0]?.content[0];
      if (first?.type !== "text" || first.text !== "long") return events;
      // Calls 0 and 1 are the warm-up (Anthropic, then OpenAI); then two a round.
      const call = longCalls++;
      const round = call < 2 ? 0 : ((call - 2) >> 1) + 1;
      const second = call >= 2 && (call - 2) % 2 === 1;
      return (async function* () {
        const t0 = threadTimes();
        const h0 = process.hrtime.bigint();
        const start = performance.now();
        yield* events;
        const ms = performance.now() - start;
        const h1 = process.hrtime.bigint();
        const t1 = threadTimes();
        const perDelta = (ns: number) => ns / 1000 / DELTAS;
        answers.push({
          format,
          round,
          second,
          ms,
          start,
          main: perDelta(t1.main - t0.main),
          background: perDelta(t1.background - t0.background),
          wait: perDelta(t1.wait - t0.wait),
          window: [Number(h0 / 1000n), Number(h1 / 1000n)],
        });
      })();
    };
  };
  watch("anthropic", AnthropicProvider.prototype);
  watch("openai", OpenAiProvider.prototype);
  const results: BenchResult[] = [];
  await providers({ reps: 5, seconds: 1, record: (r) => results.push(r), log: () => {} });
  // Let the observer deliver the last entries.
  await new Promise((resolve) => setTimeout(resolve, 20));
  for (const a of answers) {
    const inside = gcs.filter((g) => g.start >= a.start && g.start <= a.start + a.ms);
    const { start: _start, ...rest } = a;
    const answer: Answer = {
      ...rest,
      gcMs: inside.reduce((sum, g) => sum + g.ms, 0),
      scavenges: inside.filter((g) => g.kind === 1).length,
      markCompacts: inside.filter((g) => g.kind === 4).length,
    };
    console.log(JSON.stringify({ answer }));
  }
  const value = (name: string) => results.find((r) => r.name === name)?.value ?? Number.NaN;
  console.log(
    JSON.stringify({
      bench: {
        openai: value("long answer, OpenAI-format provider"),
        anthropic: value("long answer, Anthropic-format provider"),
        openaiBytes: value("long answer, OpenAI-format bytes alone through node:http"),
        anthropicBytes: value("long answer, Anthropic-format bytes alone through node:http"),
      },
    }),
  );
}

async function parent(processes: number): Promise<void> {
  const answers: Answer[] = [];
  const benches: Array<Record<string, number>> = [];
  for (let i = 0; i < processes; i++) {
    const out = await new Promise<string>((resolve, reject) => {
      const c = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--child"], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let text = "";
      c.stdout.setEncoding("utf8").on("data", (s: string) => {
        text += s;
      });
      c.once("error", reject);
      c.once("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`child exited ${code}`))));
    });
    for (const line of out.split("\n")) {
      if (!line.startsWith("{")) continue;
      const parsed = JSON.parse(line) as { answer?: Answer; bench?: Record<string, number> };
      if (parsed.answer && parsed.answer.round > 0) answers.push(parsed.answer);
      if (parsed.bench) benches.push(parsed.bench);
    }
  }
  const f = (v: number) => v.toFixed(2);
  console.log(`${processes} processes, ${answers.length} answers after the warm-up (µs a delta unless said)`);
  for (const format of ["openai", "anthropic"] as const) {
    for (const second of [false, true]) {
      const a = answers.filter((x) => x.format === format && x.second === second);
      const cpu = a.map((x) => x.main + x.background);
      const calm = a.filter((x) => x.gcMs === 0);
      console.log(
        `${format.padEnd(9)} ${second ? "second" : "first "} n=${a.length}: ${f(median(a.map((x) => x.ms)))} ms, CPU ${f(median(cpu))} (main ${f(median(a.map((x) => x.main)))}, others ${f(median(a.map((x) => x.background)))}), wait ${f(median(a.map((x) => x.wait)))}; GC in ${a.filter((x) => x.gcMs > 0).length} (${a.reduce((s, x) => s + x.scavenges, 0)} scavenges, ${a.reduce((s, x) => s + x.markCompacts, 0)} mark-compacts), pauses ${f((a.reduce((s, x) => s + x.gcMs, 0) / a.length / DELTAS) * 1000)} a delta on average; answers without a GC: CPU ${f(median(calm.map((x) => x.main + x.background)))}`,
      );
    }
  }
  const ratio = (a: string, b: string) => benches.map((x) => x[a]! / x[b]!);
  console.log(
    `bench figures, medians over processes: openai/anthropic ${f(median(ratio("openai", "anthropic")))}, bytes alone ${f(median(ratio("openaiBytes", "anthropicBytes")))}; vs bytes alone: openai ${f(median(ratio("openai", "openaiBytes")))}, anthropic ${f(median(ratio("anthropic", "anthropicBytes")))}`,
  );
}

if (process.argv.includes("--child")) await child();
else await parent(Number(process.argv[2] ?? 12));
