/**
 * Provider streaming (issue 15): the OpenAI-format provider (Chat Completions SSE) against the
 * Anthropic-format one (Messages SSE), both reading the same answer from `nexo dev mock-llm` run
 * in its own process, so this process's CPU time is the providers' alone.
 *   1. events per second of a 20,000-word answer (its 10,000 deltas' worth of text per second, from
 *      the request to the last delta), with the CPU time per delta of this process and of the mock
 *      (which writes the stream inside that window); the same stream of each format
 *      read with fetch, a line split and a JSON.parse per delta is the
 *      floor (the mock's OpenAI events are about twice the bytes of Anthropic's, so the floors
 *      differ too).
 *      Beside them, each stream's bytes alone through `node:http` (the request, then every chunk of
 *      the body received and nothing done with it): what receiving that many bytes costs on this
 *      machine, the limit under both the floors and the providers. The two providers take turns at
 *      going first in a round (`takingTurns`): the second one pays for the first one's answer.
 *   2. first delta: from `stream()` to the first text delta of a 20-word answer (a long answer's
 *      first delta would time the mock building its whole stream before it sends a byte).
 * Goals (issue 15 table): OpenAI events/s >= 0.9 x Anthropic's; first delta <= 1.2 x Anthropic's.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AnthropicProvider } from "../packages/nexo/src/engine/providers/anthropic.js";
import { OpenAiProvider } from "../packages/nexo/src/engine/providers/openai.js";
import type { LlmProvider } from "../packages/nexo/src/engine/types.js";
import { type BenchContext, interleave, median, NEXO_ENTRY, round } from "./lib.js";

const WORDS = 20_000;
/** The mock sends two words per delta. */
const ANSWER_DELTAS = WORDS / 2;
/** First-delta samples per repetition (each a whole short request). */
const FIRST_DELTA_SAMPLES = 15;

/** `nexo dev mock-llm` in a child process; resolves with its URL and a stop function. */
async function startMock(
  scriptFile: string,
): Promise<{ url: string; stop: () => Promise<void>; cpuMicros: () => number | undefined }> {
  const child = spawn(process.execPath, [NEXO_ENTRY, "dev", "mock-llm", "--script", scriptFile], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { PATH: process.env.PATH, NEXO_LOG: "warn" },
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`mock-llm exited (${code}) before listening`)));
    child.stdout.setEncoding("utf8").once("data", (line: string) => resolve(line.trim()));
  });
  child.removeAllListeners("exit");
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  /**
   * The mock's CPU time so far (Linux's /proc schedstat, in µs): it runs inside the timed window,
   * so its share of each delta is recorded beside the provider's. Undefined where /proc is not.
   */
  const cpuMicros = () => {
    try {
      return Number(readFileSync(`/proc/${child.pid}/schedstat`, "utf8").split(" ")[0]) / 1000;
    } catch {
      return undefined;
    }
  };
  return { url, stop, cpuMicros };
}

/**
 * Two contenders for interleave() that take turns at going first: the round's first call (a's
 * slot) runs both, a then b in even rounds and b then a in odd ones, and the second (b's slot)
 * hands on b's sample. Why: the long answer read right after the other provider's pays for it
 * (its garbage and the background work it leaves), and in a fixed order that was always OpenAI:
 * the bench's rounds with anthropic first gave OpenAI/Anthropic a median of 0.69 in eight runs,
 * the same rounds with openai first 0.98 (docs/performance.md, "OpenAI-format streaming", "Who
 * goes first").
 */
export function takingTurns(
  a: () => Promise<number>,
  b: () => Promise<number>,
): { a: () => Promise<number>; b: () => Promise<number> } {
  let round = 0;
  let bSample: number | undefined;
  return {
    a: async () => {
      const aFirst = round++ % 2 === 0;
      if (aFirst) {
        const sample = await a();
        bSample = await b();
        return sample;
      }
      bSample = await b();
      return a();
    },
    b: async () => {
      if (bSample === undefined) throw new Error("takingTurns: b's slot came before a's");
      const sample = bSample;
      bSample = undefined;
      return sample;
    },
  };
}

export default async function providers(ctx: BenchContext): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "nexo-bench-providers-"));
  const long = Array.from({ length: WORDS }, (_, i) => `word${i % 97}`).join(" ");
  const short = Array.from({ length: 20 }, (_, i) => `word${i}`).join(" ");
  // Entries match the prompt; the script is rewound before each request so they serve forever.
  const scriptFile = join(dir, "script.json");
  writeFileSync(
    scriptFile,
    JSON.stringify([
      { match: "long", text: long },
      { match: "short", text: short },
    ]),
  );
  const mock = await startMock(scriptFile);
  try {
    const rewind = async () => {
      const res = await fetch(`${mock.url}/__reset`, { method: "POST" });
      await res.arrayBuffer();
    };
    const anthropic = new AnthropicProvider({ apiKey: "bench", baseUrl: mock.url, defaultModel: "bench" });
    const openai = new OpenAiProvider({ apiKey: "bench", baseUrl: mock.url, defaultModel: "bench" });
    const signal = new AbortController().signal;
    const ask = (provider: LlmProvider, prompt: string) =>
      provider.stream({
        model: "bench",
        messages: [{ role: "user", content: [{ type: "text", text: prompt }] }],
        tools: [],
        maxTokens: 16,
        signal,
      });

    const cpuPerEvent = { anthropic: [] as number[], openai: [] as number[] };
    const mockCpuPerEvent = { anthropic: [] as number[], openai: [] as number[] };
    /**
     * The answer's deltas' worth of text per second, from the request to the last delta, and this
     * process's CPU per delta. Counted in text, not events: deltas that arrive in one read leave
     * the provider as one (attempt.ts).
     */
    const longAnswer = async (
      provider: LlmProvider,
      cpuInto: number[],
      mockInto: number[],
    ): Promise<number> => {
      await rewind();
      const mock0 = mock.cpuMicros();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      let chars = 0;
      for await (const event of ask(provider, "long"))
        if (event.type === "text_delta") chars += event.text.length;
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const mock1 = mock.cpuMicros();
      if (mock0 !== undefined && mock1 !== undefined) mockInto.push((mock1 - mock0) / ANSWER_DELTAS);
      if (chars !== long.length)
        throw new Error(`the answer arrived incomplete: ${chars} of ${long.length} characters`);
      cpuInto.push((cpu.user + cpu.system) / ANSWER_DELTAS);
      return ANSWER_DELTAS / seconds;
    };
    /** Median milliseconds from stream() to the first text delta of a short answer. */
    const firstDelta = async (provider: LlmProvider): Promise<number> => {
      const times: number[] = [];
      for (let i = 0; i < FIRST_DELTA_SAMPLES; i++) {
        await rewind();
        const t0 = performance.now();
        let at = 0;
        for await (const event of ask(provider, "short")) {
          if (event.type === "text_delta" && at === 0) at = performance.now() - t0;
        }
        times.push(at);
      }
      return median(times);
    };
    /** The floor: the same stream read with fetch, one JSON.parse per `data:` line with text. */
    const direct = async (format: "anthropic" | "openai"): Promise<number> => {
      await rewind();
      const t0 = performance.now();
      const anthropicFormat = format === "anthropic";
      const res = await fetch(`${mock.url}/v1/${anthropicFormat ? "messages" : "chat/completions"}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "bench", authorization: "Bearer bench" },
        body: JSON.stringify({
          model: "bench",
          max_tokens: 16,
          stream: true,
          messages: [{ role: "user", content: "long" }],
        }),
      });
      const marker = anthropicFormat ? '"text_delta"' : '"content":"';
      const decoder = new TextDecoder();
      let rest = "";
      let deltas = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        rest += decoder.decode(chunk, { stream: true });
        let start = 0;
        let nl = rest.indexOf("\n");
        while (nl !== -1) {
          const line = rest.slice(start, nl);
          // (OpenAI's first chunk, the role's, has an empty content: not a delta.)
          if (line.startsWith("data:") && line.includes(marker) && !line.includes('"content":""')) {
            JSON.parse(line.slice(5));
            deltas++;
          }
          start = nl + 1;
          nl = rest.indexOf("\n", start);
        }
        rest = rest.slice(start);
      }
      if (deltas !== ANSWER_DELTAS) throw new Error(`${format} floor: ${deltas} deltas`);
      return deltas / ((performance.now() - t0) / 1000);
    };

    const bytesCpuPerEvent = { anthropic: [] as number[], openai: [] as number[] };
    /**
     * The same stream's bytes alone: sent for with `node:http` (the client the providers use) and
     * received chunk by chunk with nothing done with them; the rate and this process's CPU per
     * delta. It must end with the format's last event, so that the whole answer was received.
     */
    const bytesAlone = async (format: "anthropic" | "openai"): Promise<number> => {
      await rewind();
      const anthropicFormat = format === "anthropic";
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const tail = await new Promise<string>((resolve, reject) => {
        const body = JSON.stringify({
          model: "bench",
          max_tokens: 16,
          stream: true,
          messages: [{ role: "user", content: "long" }],
        });
        const req = request(
          `${mock.url}/v1/${anthropicFormat ? "messages" : "chat/completions"}`,
          {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "content-length": Buffer.byteLength(body),
              "x-api-key": "bench",
              authorization: "Bearer bench",
            },
          },
          (res) => {
            // The body's last bytes, whichever reads they came in (the end marker may be cut).
            let last = "";
            res.on("data", (chunk: Buffer) => {
              last = (last + chunk.toString("latin1", Math.max(0, chunk.length - 64))).slice(-64);
            });
            res.once("end", () => resolve(last));
            res.once("error", reject);
          },
        );
        req.once("error", reject);
        req.end(body);
      });
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      if (!tail.includes(anthropicFormat ? "message_stop" : "[DONE]"))
        throw new Error(`${format} bytes alone: the stream did not arrive whole`);
      bytesCpuPerEvent[format].push((cpu.user + cpu.system) / ANSWER_DELTAS);
      return ANSWER_DELTAS / seconds;
    };

    // Warm-up: the first request of each provider loads its SDK, which is start-up, not streaming.
    await longAnswer(anthropic, [], []);
    await longAnswer(openai, [], []);
    await firstDelta(anthropic);
    await firstDelta(openai);
    await bytesAlone("anthropic");
    await bytesAlone("openai");
    bytesCpuPerEvent.anthropic.length = 0;
    bytesCpuPerEvent.openai.length = 0;
    const longAnswers = takingTurns(
      () => longAnswer(anthropic, cpuPerEvent.anthropic, mockCpuPerEvent.anthropic),
      () => longAnswer(openai, cpuPerEvent.openai, mockCpuPerEvent.openai),
    );
    // An even number of rounds, so that each provider goes first in half of them.
    const samples = await interleave(ctx.reps + (ctx.reps % 2), {
      anthropic: longAnswers.a,
      openai: longAnswers.b,
      anthropicFloor: () => direct("anthropic"),
      openaiFloor: () => direct("openai"),
      anthropicBytes: () => bytesAlone("anthropic"),
      openaiBytes: () => bytesAlone("openai"),
      anthropicFirst: () => firstDelta(anthropic),
      openaiFirst: () => firstDelta(openai),
    });
    const m = Object.fromEntries(
      Object.entries(samples).map(([k, v]) => [k, median(v as number[])]),
    ) as Record<keyof typeof samples, number>;
    const cpu = { anthropic: median(cpuPerEvent.anthropic), openai: median(cpuPerEvent.openai) };
    /** The mock's CPU per delta, when it could be read (a ratio field of each provider row). */
    const mockCpu = (format: "anthropic" | "openai"): Record<string, number> =>
      mockCpuPerEvent[format].length > 0
        ? { mock_cpu_us_per_event: round(median(mockCpuPerEvent[format])) }
        : {};
    const rateRatio = round(m.openai / m.anthropic);
    const floorRatio = round(m.openaiFloor / m.anthropicFloor);
    const cpuRatio = round(cpu.openai / cpu.anthropic);
    const firstRatio = round(m.openaiFirst / m.anthropicFirst);
    const bytesRatio = round(m.openaiBytes / m.anthropicBytes);
    const bytesCpu = {
      anthropic: median(bytesCpuPerEvent.anthropic),
      openai: median(bytesCpuPerEvent.openai),
    };
    ctx.log(
      `long answer: openai ${Math.round(m.openai)} events/s (${cpu.openai.toFixed(2)} us CPU each, mock ${mockCpu("openai").mock_cpu_us_per_event ?? "?"}), anthropic ${Math.round(m.anthropic)} (${cpu.anthropic.toFixed(2)} us, mock ${mockCpu("anthropic").mock_cpu_us_per_event ?? "?"}); openai/anthropic ${rateRatio} (floors ${Math.round(m.openaiFloor)} / ${Math.round(m.anthropicFloor)} = ${floorRatio}; bytes alone ${Math.round(m.openaiBytes)} / ${Math.round(m.anthropicBytes)} = ${bytesRatio}, ${bytesCpu.openai.toFixed(2)} / ${bytesCpu.anthropic.toFixed(2)} us CPU each); first delta ${m.openaiFirst.toFixed(1)} vs ${m.anthropicFirst.toFixed(1)} ms (${firstRatio})`,
    );
    const rows: Array<[string, keyof typeof samples, string, string]> = [
      ["long answer, Anthropic-format provider", "anthropic", "events per second", "events/s"],
      [
        "long answer, Anthropic-format SSE read directly (floor)",
        "anthropicFloor",
        "events per second",
        "events/s",
      ],
      [
        "long answer, OpenAI-format SSE read directly (floor)",
        "openaiFloor",
        "events per second",
        "events/s",
      ],
      [
        "long answer, Anthropic-format bytes alone through node:http",
        "anthropicBytes",
        "events per second",
        "events/s",
      ],
      [
        "long answer, OpenAI-format bytes alone through node:http",
        "openaiBytes",
        "events per second",
        "events/s",
      ],
      ["first delta, Anthropic-format provider", "anthropicFirst", "milliseconds", "ms"],
    ];
    /** Extra fields of a row: a provider's rate against its stream's bytes alone, their CPU. */
    const extra = (key: keyof typeof samples): Record<string, number> | undefined => {
      if (key === "anthropic")
        return {
          cpu_us_per_event: round(cpu.anthropic),
          ...mockCpu("anthropic"),
          "vs bytes alone": round(m.anthropic / m.anthropicBytes),
        };
      if (key === "anthropicBytes") return { cpu_us_per_event: round(bytesCpu.anthropic) };
      if (key === "openaiBytes")
        return { "openai/anthropic": bytesRatio, cpu_us_per_event: round(bytesCpu.openai) };
      return undefined;
    };
    for (const [name, key, metric, unit] of rows) {
      const digits = unit === "ms" ? 1 : 0;
      ctx.record({
        benchmark: "providers",
        name,
        metric,
        value: round(m[key], digits),
        unit,
        samples: samples[key].map((v) => round(v, digits)),
        ...(extra(key) === undefined ? {} : { ratios: extra(key) }),
      });
    }
    ctx.record({
      benchmark: "providers",
      name: "long answer, OpenAI-format provider",
      metric: "events per second",
      value: Math.round(m.openai),
      unit: "events/s",
      samples: samples.openai.map(Math.round),
      ratios: {
        "openai/anthropic": rateRatio,
        "floor openai/anthropic": floorRatio,
        "cpu openai/anthropic": cpuRatio,
        cpu_us_per_event: round(cpu.openai),
        ...mockCpu("openai"),
        "vs bytes alone": round(m.openai / m.openaiBytes),
      },
      goal: { ratio: "openai/anthropic", min: 0.9, met: rateRatio >= 0.9 },
    });
    ctx.record({
      benchmark: "providers",
      name: "first delta, OpenAI-format provider",
      metric: "milliseconds",
      value: round(m.openaiFirst, 1),
      unit: "ms",
      samples: samples.openaiFirst.map((v) => round(v, 1)),
      ratios: { "openai/anthropic": firstRatio },
      goal: { ratio: "openai/anthropic", max: 1.2, met: firstRatio <= 1.2 },
    });
  } finally {
    await mock.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
