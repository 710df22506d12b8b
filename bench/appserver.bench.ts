/**
 * The AppServer door (issue 12.9), side by side with `codex app-server` (the peer a user would pick
 * instead), both against the same local mock of the model API (@nexo/mock-llm: Anthropic's API
 * for nexo, OpenAI's Responses API for Codex):
 *   1. spawn → first `initialize` response over stdio. Goal: nexo <= 1.5 x Codex's native binary.
 *   2. a 20-turn conversation, one file read per turn (nexo's Read tool; Codex's exec_command
 *      running `cat`), wall time. Goal: nexo <= 0.5 x Codex's.
 *   3. events per second of a 5,000-delta answer, over stdio and over WebSocket.
 *   4. peak RSS (VmHWM of the server process): after initialize, after the conversation.
 * Codex is installed from npm on demand (appserver/codex.ts); when it cannot be, its side is
 * skipped with the reason, printed and recorded.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MockLlmServer, type MockResponse } from "@nexo/mock-llm";
import WebSocket from "ws";
import { CODEX_VERSION, codexBinary } from "./appserver/codex.js";
import { CODEX_KEY_ENV, codexHome } from "./appserver/codex-home.js";
import {
  INITIALIZE_PARAMS,
  LineClient,
  type Message,
  peakRssMiB,
  stop,
  WAIT_MS,
} from "./appserver/line-client.js";
import { type BenchContext, interleave, median, round } from "./lib.js";

const NEXO = fileURLToPath(new URL("../packages/nexo/bin/nexo.js", import.meta.url));
const TURNS = 20;
const DELTAS = 5_000;

type Over = "stdio" | "ws";

/** How to start one server and talk to it; everything else is the same protocol. */
interface Peer {
  name: "nexo" | "codex";
  command: string;
  args(over: Over, port: number): string[];
  env: NodeJS.ProcessEnv;
  /** The WebSocket URL the server prints on stderr once it listens. */
  listening(stderr: string): string | undefined;
  threadParams(workspace: string): unknown;
  /** The model's call that reads notes.txt with this server's own tool. */
  readCall(turn: number): { id: string; name: string; input: Record<string, unknown> };
}

function nexoPeer(stateDir: string, mock: MockLlmServer): Peer {
  return {
    name: "nexo",
    command: process.execPath,
    args: (over) => [NEXO, "app-server", ...(over === "ws" ? ["--listen", "ws://127.0.0.1:0"] : [])],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NEXO_STATE_DIR: stateDir,
      NEXO_LOG: "warn",
      ANTHROPIC_API_KEY: "bench",
      ANTHROPIC_BASE_URL: mock.url,
    },
    listening: (stderr) => /listening on (ws:\/\/\S+\/ws)/.exec(stderr)?.[1],
    threadParams: (workspace) => ({
      identity: { channelName: "bench", userId: "bench", workspacePath: workspace },
    }),
    readCall: (turn) => ({ id: `toolu_read_${turn}`, name: "Read", input: { file_path: "notes.txt" } }),
  };
}

function codexPeer(binary: string, home: string): Peer {
  return {
    name: "codex",
    command: binary,
    args: (over, port) => ["app-server", ...(over === "ws" ? ["--listen", `ws://127.0.0.1:${port}`] : [])],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, CODEX_HOME: home, [CODEX_KEY_ENV]: "bench" },
    listening: (stderr) => /listening on: (ws:\/\/\S+)/.exec(stderr)?.[1],
    threadParams: (workspace) => ({ cwd: workspace, approvalPolicy: "never", sandbox: "danger-full-access" }),
    readCall: (turn) => ({ id: `call_read_${turn}`, name: "exec_command", input: { cmd: "cat notes.txt" } }),
  };
}

/** A port nothing listens on now (Codex takes an explicit one). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

interface Session {
  child: ChildProcess;
  client: LineClient;
  close(): Promise<void>;
}

async function connect(url: string): Promise<WebSocket> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const ws = new WebSocket(url);
    try {
      await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
      return ws;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Starts `peer` in `workspace`, connected over `over` and initialized. */
async function launch(peer: Peer, over: Over, workspace: string): Promise<Session> {
  const child = spawn(peer.command, peer.args(over, over === "ws" ? await freePort() : 0), {
    cwd: workspace,
    env: peer.env,
    stdio: [over === "ws" ? "ignore" : "pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  let client: LineClient;
  let socket: WebSocket | undefined;
  if (over === "stdio") {
    client = new LineClient((line) => child.stdin?.write(`${line}\n`));
    child.stdout?.setEncoding("utf8").on("data", (d: string) => client.feed(d));
  } else {
    const deadline = Date.now() + WAIT_MS;
    let url = peer.listening(stderr);
    while (url === undefined) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`${peer.name}: no listening line: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      url = peer.listening(stderr);
    }
    const ws = await connect(url);
    socket = ws;
    client = new LineClient((line) => ws.send(line));
    ws.on("message", (data) => client.feed(`${data.toString()}\n`));
  }
  await client.request("initialize", INITIALIZE_PARAMS);
  client.notify("initialized", {});
  return {
    child,
    client,
    close: async () => {
      socket?.close();
      await stop(child);
    },
  };
}

async function startThread(peer: Peer, client: LineClient, workspace: string): Promise<string> {
  const reply = await client.request("thread/start", peer.threadParams(workspace));
  return (reply.result as { thread: { id: string } }).thread.id;
}

async function runTurn(client: LineClient, threadId: string, text: string): Promise<Message> {
  const end = client.waitFor(
    (m) => m.method === "turn/completed" || m.method === "turn/failed" || m.method === "turn/cancelled",
    "the end of the turn",
  );
  await client.request("turn/start", { threadId, input: [{ type: "text", text, text_elements: [] }] });
  const last = await end;
  const status = (last.params?.turn as { status?: string } | undefined)?.status;
  if (last.method !== "turn/completed" || (status !== undefined && status !== "completed")) {
    throw new Error(
      `turn ended with ${last.method} (${status}): ${JSON.stringify(last.params).slice(0, 500)}`,
    );
  }
  return last;
}

/** Spawn → the first `initialize` response over stdio, in ms, and the peak RSS at that moment. */
async function spawnToInitialize(peer: Peer, cwd: string): Promise<{ ms: number; rss: number }> {
  const t0 = performance.now();
  const child = spawn(peer.command, peer.args("stdio", 0), {
    cwd,
    env: peer.env,
    stdio: ["pipe", "pipe", "ignore"],
  });
  const client = new LineClient((line) => child.stdin.write(`${line}\n`));
  child.stdout.setEncoding("utf8").on("data", (d: string) => client.feed(d));
  await client.request("initialize", INITIALIZE_PARAMS);
  const ms = performance.now() - t0;
  const rss = peakRssMiB(child.pid);
  await stop(child);
  return { ms, rss };
}

function spawnToExit(): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve(performance.now() - t0));
  });
}

/** 20 turns, each reading notes.txt with the peer's tool and answering: wall ms and peak RSS. */
async function conversation(peer: Peer, mock: MockLlmServer, workspace: string) {
  mock.reset(
    Array.from({ length: TURNS }, (_, i): MockResponse[] => [
      { tool_calls: [peer.readCall(i)] },
      { text: `Turn ${i}: the notes say hello.` },
    ]).flat(),
  );
  const session = await launch(peer, "stdio", workspace);
  try {
    const threadId = await startThread(peer, session.client, workspace);
    const t0 = performance.now();
    for (let i = 0; i < TURNS; i++) await runTurn(session.client, threadId, `read notes.txt (${i})`);
    return { ms: performance.now() - t0, rss: peakRssMiB(session.child.pid) };
  } finally {
    await session.close();
  }
}

/** Deltas per second of one 5,000-delta answer, from turn/started to turn/completed. */
async function stream(peer: Peer, mock: MockLlmServer, workspace: string, over: Over): Promise<number> {
  // The mock sends two words a delta.
  const text = Array.from({ length: DELTAS * 2 }, (_, i) => `w${i % 89}`).join(" ");
  mock.reset([{ text }]);
  const session = await launch(peer, over, workspace);
  try {
    const threadId = await startThread(peer, session.client, workspace);
    let deltas = 0;
    let started = 0;
    session.client.onMessage = (m) => {
      if (m.method === "item/agentMessage/delta") deltas++;
      else if (m.method === "turn/started") started = performance.now();
    };
    await runTurn(session.client, threadId, "talk");
    return deltas / ((performance.now() - started) / 1000);
  } finally {
    await session.close();
  }
}

export default async function appServer(ctx: BenchContext): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-bench-as-"));
  const workspace = mkdtempSync(join(tmpdir(), "nexo-bench-as-ws-"));
  writeFileSync(join(workspace, "notes.txt"), "hello from the notes\n".repeat(50));
  const mock = new MockLlmServer();
  await mock.start();
  const home = codexHome(mock.url);
  const record = (name: string, metric: string, unit: string, samples: number[], extra: object = {}) =>
    ctx.record({
      benchmark: "appserver",
      name,
      metric,
      value: round(median(samples), 1),
      unit,
      samples,
      ...extra,
    });
  try {
    const codex = await codexBinary();
    const skip = "skip" in codex ? codex.skip : undefined;
    if (skip !== undefined) ctx.log(`codex app-server: skipped (${skip})`);
    const peers: Peer[] = [nexoPeer(stateDir, mock)];
    if ("path" in codex) peers.push(codexPeer(codex.path, home));
    const codexLabel = `codex app-server ${CODEX_VERSION} (native)`;

    // 1. spawn → initialize, with node -e "" as the floor under nexo's figure
    for (const peer of peers) await spawnToInitialize(peer, workspace); // warm the file cache
    const rss: Record<string, number[]> = { nexo: [], codex: [] };
    const contenders: Record<string, () => Promise<number>> = { node: () => spawnToExit() };
    for (const peer of peers) {
      contenders[peer.name] = async () => {
        const r = await spawnToInitialize(peer, workspace);
        rss[peer.name]!.push(r.rss);
        return r.ms;
      };
    }
    const init = await interleave(Math.max(ctx.reps * 2, 7), contenders);
    const samples = (values: number[]) => values.map((v) => round(v, 1));
    record('spawn to exit, node -e "" (the floor under nexo)', "milliseconds", "ms", samples(init.node!));
    const initRatio = init.codex ? round(median(init.nexo!) / median(init.codex)) : undefined;
    if (init.codex)
      record(`spawn to initialize response, ${codexLabel}`, "milliseconds", "ms", samples(init.codex));
    record(
      "spawn to initialize response, nexo app-server",
      "milliseconds",
      "ms",
      samples(init.nexo!),
      initRatio === undefined
        ? {}
        : {
            ratios: { "nexo/codex": initRatio },
            goal: { ratio: "nexo/codex", max: 1.5, met: initRatio <= 1.5 },
          },
    );
    ctx.log(
      `spawn → initialize: node -e "" ${median(init.node!).toFixed(1)} ms, nexo ${median(init.nexo!).toFixed(1)} ms, ${init.codex ? `codex ${median(init.codex).toFixed(1)} ms, ratio ${initRatio}` : `codex skipped (${skip})`}`,
    );
    for (const peer of peers) {
      const ratio =
        peer.name === "nexo" && rss.codex!.length > 0
          ? round(median(rss.nexo!) / median(rss.codex!))
          : undefined;
      record(
        `peak RSS after initialize, ${peer.name}`,
        "MiB",
        "MiB",
        rss[peer.name]!,
        ratio === undefined ? {} : { ratios: { "nexo/codex": ratio } },
      );
    }

    // 2. 20 turns with a file read each (interleaved: a noisy neighbour hurts both alike)
    const runs: Record<string, Array<{ ms: number; rss: number }>> = { nexo: [], codex: [] };
    const talks: Record<string, () => Promise<number>> = {};
    for (const peer of peers) {
      talks[peer.name] = async () => {
        const r = await conversation(peer, mock, workspace);
        runs[peer.name]!.push(r);
        return r.ms;
      };
    }
    const walls = await interleave(ctx.reps, talks);
    const wallRatio = walls.codex ? round(median(walls.nexo!) / median(walls.codex)) : undefined;
    for (const peer of peers) {
      const mine = peer.name === "nexo";
      record(
        `${TURNS}-turn conversation, one file read per turn, ${mine ? "nexo app-server" : codexLabel}`,
        "milliseconds",
        "ms",
        walls[peer.name]!.map(Math.round),
        mine && wallRatio !== undefined
          ? {
              ratios: { "nexo/codex": wallRatio },
              goal: { ratio: "nexo/codex", max: 0.5, met: wallRatio <= 0.5 },
            }
          : {},
      );
      const peaks = runs[peer.name]!.map((r) => r.rss);
      const codexPeaks = runs.codex!.map((r) => r.rss);
      record(
        `peak RSS after the ${TURNS}-turn conversation, ${peer.name}`,
        "MiB",
        "MiB",
        peaks,
        mine && codexPeaks.length > 0
          ? { ratios: { "nexo/codex": round(median(peaks) / median(codexPeaks)) } }
          : {},
      );
    }
    ctx.log(
      `${TURNS}-turn conversation with a file read per turn: nexo ${Math.round(median(walls.nexo!))} ms, ${walls.codex ? `codex ${Math.round(median(walls.codex))} ms, ratio ${wallRatio}` : `codex skipped (${skip})`}`,
    );

    // 3. events per second of a 5,000-delta answer
    for (const over of ["stdio", "ws"] as const) {
      const streams: Record<string, () => Promise<number>> = {};
      for (const peer of peers) streams[peer.name] = () => stream(peer, mock, workspace, over);
      const rates = await interleave(ctx.reps, streams);
      const transport = over === "ws" ? "WebSocket" : "stdio";
      const rateRatio = rates.codex ? round(median(rates.nexo!) / median(rates.codex)) : undefined;
      for (const peer of peers) {
        const mine = peer.name === "nexo";
        record(
          `${DELTAS}-delta answer over ${transport}, ${mine ? "nexo app-server" : codexLabel}`,
          "events per second",
          "events/s",
          rates[peer.name]!.map(Math.round),
          mine && rateRatio !== undefined ? { ratios: { "nexo/codex": rateRatio } } : {},
        );
      }
      ctx.log(
        `${DELTAS}-delta answer over ${transport}: nexo ${Math.round(median(rates.nexo!))} events/s, ${rates.codex ? `codex ${Math.round(median(rates.codex))} events/s, ratio ${rateRatio}` : `codex skipped (${skip})`}`,
      );
    }
  } finally {
    await mock.close();
    for (const dir of [stateDir, workspace, home]) rmSync(dir, { recursive: true, force: true });
  }
}
