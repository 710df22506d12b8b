/**
 * Request round trips over a child process's stdio, same payloads, same run:
 *   bare   — a JSON-lines echo child and a hand-written client (readline + JSON.parse/stringify): the floor
 *   nexo   — our JsonRpcPeer on both ends
 *   vscode — vscode-jsonrpc on both ends
 *   pipe   — at one call in flight only: the request's bytes echoed as they come, no framing, no
 *            JSON (bench/wire/echo-pipe.mjs): what this machine's process wake-ups allow during
 *            the run, without a goal. Not a bound: a pair the scheduler keeps on one CPU hands off
 *            without waking another and can beat it (docs/performance.md, "JSON-RPC peer")
 * Goals: nexo >= 0.8 x bare (issue 2); nexo >= 1.5 x vscode up to 4 KiB, >= 1.0 x at 64 KiB (issue 15),
 * both for 64 KiB with nothing to escape ("x"s) and for 64 KiB of source text.
 */
import { type BenchContext, interleave, median, round } from "./lib.js";
import { bareClient, type Client, echoChild, nexoClient, vscodeClient } from "./wire/contenders.js";
import { payloads } from "./wire/payloads.js";

/**
 * The bare pipe exchange's client: sends the bytes of a request frame and waits for as many bytes back (the
 * child echoes them in whatever chunks the pipe gives), one call at a time.
 */
function pipeClient(): Client {
  const proc = echoChild("echo-pipe.mjs");
  // Each payload's frame is made once: the exchange does no JSON per call.
  const frames = new WeakMap<object, Buffer>();
  let expected = 0;
  let got = 0;
  let done: ((v: unknown) => void) | undefined;
  proc.stdout.on("data", (chunk: Buffer) => {
    got += chunk.length;
    if (got < expected || !done) return;
    const resolve = done;
    done = undefined;
    resolve(undefined);
  });
  return {
    pid: proc.pid!,
    call: (params) =>
      new Promise((resolve) => {
        if (done) throw new Error("the pipe exchange runs one call at a time");
        let frame = frames.get(params as object);
        if (!frame) {
          frame = Buffer.from(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "echo", params })}\n`);
          frames.set(params as object, frame);
        }
        expected = frame.length;
        got = 0;
        done = resolve;
        proc.stdin.write(frame);
      }),
    close: () => proc.kill(),
  };
}

/** Keeps `concurrency` calls in flight for `seconds`; returns completed calls per second. */
async function drive(client: Client, params: unknown, concurrency: number, seconds: number): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const lane = async () => {
    while (performance.now() < deadline) {
      await client.call(params);
      done++;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  return done / ((performance.now() - start) / 1000);
}

function minVsVscode(size: string): number {
  return size.startsWith("64KiB") ? 1.0 : 1.5;
}

export default async function wire(ctx: BenchContext): Promise<void> {
  const clients = { bare: bareClient(), nexo: await nexoClient(), vscode: vscodeClient() };
  const pipe = pipeClient();
  try {
    for (const [size, params] of Object.entries(payloads)) {
      for (const concurrency of [1, 16]) {
        for (const c of Object.values(clients)) await drive(c, params, concurrency, 0.2); // warm-up
        const contenders: Record<string, () => Promise<number>> = {
          bare: () => drive(clients.bare, params, concurrency, ctx.seconds),
          nexo: () => drive(clients.nexo, params, concurrency, ctx.seconds),
          vscode: () => drive(clients.vscode, params, concurrency, ctx.seconds),
        };
        if (concurrency === 1) {
          await drive(pipe, params, 1, 0.2);
          contenders.pipe = () => drive(pipe, params, 1, ctx.seconds);
        }
        const samples = await interleave(ctx.reps, contenders);
        const m = {
          bare: median(samples.bare!),
          nexo: median(samples.nexo!),
          vscode: median(samples.vscode!),
        };
        const vsBare = round(m.nexo / m.bare);
        const vsVscode = round(m.nexo / m.vscode);
        ctx.log(
          `${size} c=${concurrency}: bare ${Math.round(m.bare)}/s  nexo ${Math.round(m.nexo)}/s  vscode ${Math.round(m.vscode)}/s  nexo/bare ${vsBare}  nexo/vscode ${vsVscode}`,
        );
        for (const who of ["bare", "vscode"] as const) {
          ctx.record({
            benchmark: "wire",
            name: `roundtrip ${size} c=${concurrency} ${who}`,
            metric: "round trips per second",
            value: Math.round(m[who]),
            unit: "rt/s",
            samples: samples[who]!.map((v) => Math.round(v)),
          });
        }
        if (samples.pipe) {
          const pipeRate = median(samples.pipe);
          ctx.log(
            `${size} c=1 pipe ${Math.round(pipeRate)}/s: nexo/pipe ${round(m.nexo / pipeRate)}  vscode/pipe ${round(m.vscode / pipeRate)}  bare/pipe ${round(m.bare / pipeRate)}`,
          );
          ctx.record({
            benchmark: "wire",
            name: `roundtrip ${size} c=1 pipe`,
            metric: "round trips per second",
            value: Math.round(pipeRate),
            unit: "rt/s",
            samples: samples.pipe.map((v) => Math.round(v)),
            // How much of the bare exchange's rate each keeps, read against the machine's wake-ups.
            ratios: {
              "nexo/pipe": round(m.nexo / pipeRate),
              "vscode/pipe": round(m.vscode / pipeRate),
              "bare/pipe": round(m.bare / pipeRate),
            },
          });
        }
        ctx.record({
          benchmark: "wire",
          name: `roundtrip ${size} c=${concurrency} nexo`,
          metric: "round trips per second",
          value: Math.round(m.nexo),
          unit: "rt/s",
          samples: samples.nexo!.map((v) => Math.round(v)),
          ratios: { "nexo/bare": vsBare, "nexo/vscode": vsVscode },
          // Issue 15: >= 1.5 x vscode-jsonrpc up to 4 KiB, >= 1.0 x at 64 KiB (where both spend
          // their time moving and parsing the same bytes); issue 2's floor stays.
          goal: {
            ratio: `nexo/bare >= 0.8 and nexo/vscode >= ${minVsVscode(size)}`,
            min: 0.8,
            met: vsBare >= 0.8 && vsVscode >= minVsVscode(size),
          },
        });
      }
    }
  } finally {
    for (const c of Object.values(clients)) c.close();
    pipe.close();
  }
}
