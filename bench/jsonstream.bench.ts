/**
 * The json-stream door (issue 5):
 *   1. spawn-to-ready — `nexo agent --json-stream --provider scripted` until its `ready` line, vs
 *      spawning an empty `node -e ""` until it exits. Goal: nexo <= 3 x the empty process.
 *   2. events per second of a long streamed answer — 20,000 words from the mock LLM server in
 *      Anthropic's SSE format, through the real CLI (provider → engine → door → stdout), vs the
 *      same stream read straight from the mock with fetch (the floor: HTTP + SSE parsing only).
 *      Measured on the session's second answer, as the AppServer benchmark does: the first pays
 *      the first model call's one-time loading, which is start-up rather than streaming.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MockLlmServer } from "@nexo/mock-llm";
import { type BenchContext, interleave, median, round } from "./lib.js";

const NEXO = fileURLToPath(new URL("../packages/nexo/bin/nexo.js", import.meta.url));
const WORDS = 20_000;

function spawnToExit(): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve(performance.now() - t0));
  });
}

function spawnToReady(stateDir: string, workspace: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [NEXO, "agent", "--json-stream", "--provider", "scripted", "--workspace", workspace],
      {
        env: { PATH: process.env.PATH, NEXO_STATE_DIR: stateDir, NEXO_LOG: "warn" },
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    child.on("error", reject);
    child.stdout.once("data", (chunk: Buffer) => {
      const elapsed = performance.now() - t0;
      if (!chunk.toString().startsWith('{"type":"ready"'))
        reject(new Error(`unexpected first line: ${chunk}`));
      child.stdin.end();
      child.on("exit", () => resolve(elapsed));
    });
  });
}

/** Events per second the CLI writes for one long answer, counted from stream_start to stream_end. */
function streamThroughCli(mock: MockLlmServer, stateDir: string, workspace: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        NEXO,
        "agent",
        "--json-stream",
        "--provider",
        "anthropic",
        "--model",
        "bench",
        "--workspace",
        workspace,
      ],
      {
        env: {
          PATH: process.env.PATH,
          NEXO_STATE_DIR: stateDir,
          NEXO_LOG: "warn",
          ANTHROPIC_API_KEY: "bench",
          ANTHROPIC_BASE_URL: mock.url,
        },
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    child.on("error", reject);
    let buffered = "";
    let events = 0;
    let started = 0;
    let warm = false;
    const send = (msgId: string) =>
      child.stdin.write(`${JSON.stringify({ type: "message", msg_id: msgId, input: "talk" })}\n`);
    child.stdout.setEncoding("utf8").on("data", (data: string) => {
      buffered += data;
      let nl = buffered.indexOf("\n");
      while (nl !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf("\n");
        if (line.startsWith('{"type":"ready"')) {
          send("warm");
        } else if (!warm) {
          // The first answer pays the first model call's one-time costs (loading the HTTP client
          // and the vendor SDK): start-up, measured by spawn-to-ready's neighbours, not streaming.
          if (line.startsWith('{"type":"stream_end"')) {
            warm = true;
            send("m");
          }
        } else if (line.startsWith('{"type":"stream_start"')) {
          started = performance.now();
        } else if (line.startsWith('{"type":"stream_end"')) {
          const seconds = (performance.now() - started) / 1000;
          child.stdin.end();
          child.on("exit", () => resolve(events / seconds));
        } else if (started) {
          events++;
        }
      }
    });
  });
}

/** The floor: the same SSE stream read with fetch, one event per `data:` line that carries text. */
async function streamDirect(mock: MockLlmServer): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${mock.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "bench", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({
      model: "bench",
      max_tokens: 10,
      stream: true,
      messages: [{ role: "user", content: "talk" }],
    }),
  });
  let events = 0;
  let rest = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    rest += decoder.decode(chunk, { stream: true });
    let nl = rest.indexOf("\n");
    while (nl !== -1) {
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      nl = rest.indexOf("\n");
      if (line.startsWith("data:") && line.includes('"text_delta"')) {
        JSON.parse(line.slice(5));
        events++;
      }
    }
  }
  return events / ((performance.now() - t0) / 1000);
}

export default async function jsonStream(ctx: BenchContext): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-bench-js-"));
  const workspace = mkdtempSync(join(tmpdir(), "nexo-bench-ws-"));
  try {
    // 1. spawn-to-ready
    const reps = Math.max(ctx.reps * 3, 9);
    await spawnToReady(stateDir, workspace); // warm the file cache
    const samples = await interleave(reps, {
      node: spawnToExit,
      nexo: () => spawnToReady(stateDir, workspace),
    });
    const m = { node: median(samples.node), nexo: median(samples.nexo) };
    const ratio = round(m.nexo / m.node);
    ctx.log(
      `spawn-to-ready: node -e "" ${m.node.toFixed(1)} ms, nexo ${m.nexo.toFixed(1)} ms, ratio ${ratio}`,
    );
    ctx.record({
      benchmark: "jsonstream",
      name: 'spawn to exit, node -e ""',
      metric: "milliseconds",
      value: round(m.node, 1),
      unit: "ms",
      samples: samples.node.map((v) => round(v, 1)),
    });
    ctx.record({
      benchmark: "jsonstream",
      name: "spawn to ready, nexo agent --json-stream --provider scripted",
      metric: "milliseconds",
      value: round(m.nexo, 1),
      unit: "ms",
      samples: samples.nexo.map((v) => round(v, 1)),
      ratios: { "nexo/node": ratio },
      goal: { ratio: "nexo/node", max: 3, met: ratio <= 3 },
    });

    // 2. events per second of a long answer
    const text = Array.from({ length: WORDS }, (_, i) => `word${i % 97}`).join(" ");
    const mock = new MockLlmServer({ script: Array.from({ length: 64 }, () => ({ text })) });
    await mock.start();
    try {
      const rates = await interleave(ctx.reps, {
        direct: () => streamDirect(mock),
        cli: () => streamThroughCli(mock, stateDir, workspace),
      });
      const r = { direct: median(rates.direct), cli: median(rates.cli) };
      const vs = round(r.cli / r.direct);
      ctx.log(
        `long answer: direct SSE ${Math.round(r.direct)} events/s, through nexo ${Math.round(r.cli)} events/s (${vs})`,
      );
      ctx.record({
        benchmark: "jsonstream",
        name: "long answer, SSE read directly (floor)",
        metric: "events per second",
        value: Math.round(r.direct),
        unit: "events/s",
        samples: rates.direct.map(Math.round),
      });
      ctx.record({
        benchmark: "jsonstream",
        name: "long answer through nexo agent --json-stream",
        metric: "events per second",
        value: Math.round(r.cli),
        unit: "events/s",
        samples: rates.cli.map(Math.round),
        ratios: { "nexo/direct": vs },
      });
    } finally {
      await mock.close();
    }
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}
