/**
 * The AppServer door (issue 12.9), side by side with `codex app-server` (the peer a user would pick
 * instead), both against the same local mock of the model API (@nexo/mock-llm: Anthropic's API
 * for nexo, OpenAI's Responses API for Codex):
 *   1. spawn → first `initialize` response over stdio. Goal: nexo <= 1.5 x Codex's native binary.
 *   2. a 20-turn conversation, one file read per turn (nexo's Read tool; Codex's exec_command
 *      running `cat`), wall time. Goal: nexo <= 0.5 x Codex's.
 *   3. the text of a 5,000-delta answer received per second (in deltas' worth), over stdio and over WebSocket, measured on the
 *      thread's second turn (a short first turn pays the one-time costs of the first model call —
 *      loading the HTTP client, the vendor SDK — which are start-up, not streaming). Goal (issue 15,
 *      "already ahead, keep it so"): nexo >= Codex.
 *   4. peak RSS (VmHWM of the server process): after initialize, after the conversation. Goal
 *      (likewise): nexo <= Codex after the conversation. "After initialize" is read once a second
 *      `initialize` has been refused: nexo answers the first one before its door has loaded
 *      (cli/app-server-fast.ts), and only the door can refuse the second.
 * Codex is installed from npm on demand (appserver/codex.ts); when it cannot be, its side is
 * skipped with the reason, printed and recorded. Every repetition has a time limit (REP_LIMIT_MS);
 * one that runs out is stopped, counted in the row's `timed_out` and taken at the limit (a bound
 * that flatters the slow side). Both servers get a fresh, empty HOME, so neither pays for the
 * benchmarking user's shell start-up files: Codex runs each command in a login shell, and a
 * `pyenv init` in ~/.bashrc cost 4 s per command on the machine this was first run on.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
import { type BenchContext, interleave, median, NEXO_COMMAND, round } from "./lib.js";

const TURNS = 20;
const DELTAS = 5_000;
/** The longest a repetition may take (BENCH_AS_LIMIT_S overrides), by row. */
const REP_LIMIT_MS = {
  conversation: Number(process.env.BENCH_AS_LIMIT_S ?? 120) * 1000,
  stream: Number(process.env.BENCH_AS_LIMIT_S ?? 60) * 1000,
};

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

function nexoPeer(stateDir: string, home: string, mock: MockLlmServer): Peer {
  return {
    name: "nexo",
    command: NEXO_COMMAND,
    args: (over) => ["app-server", ...(over === "ws" ? ["--listen", "ws://127.0.0.1:0"] : [])],
    env: {
      PATH: process.env.PATH,
      HOME: home,
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

function codexPeer(binary: string, codexHome: string, home: string): Peer {
  return {
    name: "codex",
    command: binary,
    args: (over, port) => ["app-server", ...(over === "ws" ? ["--listen", `ws://127.0.0.1:${port}`] : [])],
    env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexHome, [CODEX_KEY_ENV]: "bench" },
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
  child.once("exit", (code, signal) => client.close(`${peer.name} exited (${signal ?? code})`));
  const session: Session = {
    child,
    client,
    close: async () => {
      socket?.close();
      await stop(child);
    },
  };
  try {
    await client.request("initialize", INITIALIZE_PARAMS);
  } catch (error) {
    await session.close();
    throw error;
  }
  client.notify("initialized", {});
  return session;
}

/** A repetition that ran out of time: its session was stopped. */
class TimedOut extends Error {}

/**
 * Runs one repetition under `limitMs`: when time runs out, the sessions it opened are stopped
 * (their waits fail at once) and it rejects with TimedOut.
 */
async function limited<T>(limitMs: number, rep: (opened: (s: Session) => Session) => Promise<T>): Promise<T> {
  const sessions: Session[] = [];
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new TimedOut(`over ${limitMs / 1000} s`));
      for (const s of sessions) void s.close();
    }, limitMs);
  });
  const running = rep((s) => {
    sessions.push(s);
    return s;
  });
  running.catch(() => undefined); // once expired, its failure is expected and already reported
  try {
    return await Promise.race([running, expired]);
  } finally {
    clearTimeout(timer);
  }
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

/** Spawn → the first `initialize` response over stdio, in ms, and the peak RSS once the server serves. */
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
  // Refused by the whole server (-32003, or Codex's own error): the memory of a server that serves.
  await client.request("initialize", INITIALIZE_PARAMS).catch(() => undefined);
  const rss = peakRssMiB(child.pid);
  await stop(child);
  return { ms, rss };
}

function spawnToExit(): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    // Only PATH, as nexo gets: an inherited NODE_EXTRA_CA_CERTS alone triples an empty node's start.
    const child = spawn(process.execPath, ["-e", ""], { env: { PATH: process.env.PATH }, stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve(performance.now() - t0));
  });
}

/** 20 turns, each reading notes.txt with the peer's tool and answering: wall ms and peak RSS. */
async function conversation(
  peer: Peer,
  mock: MockLlmServer,
  workspace: string,
  opened: (s: Session) => Session,
) {
  mock.reset(
    Array.from({ length: TURNS }, (_, i): MockResponse[] => [
      { tool_calls: [peer.readCall(i)] },
      { text: `Turn ${i}: the notes say hello.` },
    ]).flat(),
  );
  const session = opened(await launch(peer, "stdio", workspace));
  try {
    const threadId = await startThread(peer, session.client, workspace);
    const t0 = performance.now();
    for (let i = 0; i < TURNS; i++) await runTurn(session.client, threadId, `read notes.txt (${i})`);
    return { ms: performance.now() - t0, rss: peakRssMiB(session.child.pid) };
  } finally {
    await session.close();
  }
}

/**
 * One 5,000-delta answer on the thread's second turn, timed from turn/started to turn/completed.
 * The rate is the answer's deltas' worth of text received per second: 5,000 x (characters received
 * in deltas / the answer's characters). It counts text rather than notifications because a server
 * may merge deltas for a client that falls behind (nexo's outbox does, rather than dropping any), so
 * a count of notifications would reward sending more, smaller ones; a server that drops deltas gets
 * only the text it delivered. `notifications` is how many delta notifications carried it, `whole`
 * whether their text was the whole answer.
 */
async function stream(
  peer: Peer,
  mock: MockLlmServer,
  workspace: string,
  over: Over,
  opened: (s: Session) => Session,
): Promise<{ rate: number; notifications: number; whole: boolean }> {
  // The mock sends two words a delta.
  const text = Array.from({ length: DELTAS * 2 }, (_, i) => `w${i % 89}`).join(" ");
  mock.reset([{ text: "Ready." }, { text }]);
  const session = opened(await launch(peer, over, workspace));
  try {
    const threadId = await startThread(peer, session.client, workspace);
    await runTurn(session.client, threadId, "warm up");
    let notifications = 0;
    const parts: string[] = [];
    let started = 0;
    session.client.onMessage = (m) => {
      if (m.method === "item/agentMessage/delta") {
        notifications++;
        parts.push(String((m.params as { delta?: unknown } | undefined)?.delta ?? ""));
      } else if (m.method === "turn/started") started = performance.now();
    };
    await runTurn(session.client, threadId, "talk");
    const seconds = (performance.now() - started) / 1000;
    const received = parts.join("");
    return {
      rate: (DELTAS * Math.min(1, received.length / text.length)) / seconds,
      notifications,
      whole: received === text,
    };
  } finally {
    await session.close();
  }
}

/** How many of a contender's repetitions ran out of time (each counted at the limit). */
interface Timed {
  timedOut: number;
}

/** Runs `rep` under `limitMs`; a repetition that times out yields `atLimit` and is counted. */
function underLimit<T>(
  limitMs: number,
  into: Timed,
  atLimit: T,
  rep: (opened: (s: Session) => Session) => Promise<T>,
  log: (line: string) => void,
  what: string,
): () => Promise<T> {
  return async () => {
    try {
      return await limited(limitMs, rep);
    } catch (error) {
      if (!(error instanceof TimedOut)) throw error;
      into.timedOut++;
      log(`${what}: timed out (${error.message}), stopped; counted at the limit`);
      return atLimit;
    }
  };
}

/** The smallest count, or -1 when no repetition finished. */
const fewest = (counts: number[]): number => (counts.length === 0 ? -1 : Math.min(...counts));

export default async function appServer(ctx: BenchContext): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-bench-as-"));
  const workspace = mkdtempSync(join(tmpdir(), "nexo-bench-as-ws-"));
  const home = mkdtempSync(join(tmpdir(), "nexo-bench-as-home-"));
  writeFileSync(join(workspace, "notes.txt"), "hello from the notes\n".repeat(50));
  const mock = new MockLlmServer();
  await mock.start();
  const codexHomeDir = codexHome(mock.url);
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
    const peers: Peer[] = [nexoPeer(stateDir, home, mock)];
    if ("path" in codex) peers.push(codexPeer(codex.path, codexHomeDir, home));
    const codexLabel = `codex app-server ${CODEX_VERSION} (native)`;
    const label = (peer: Peer) => (peer.name === "nexo" ? "nexo app-server" : codexLabel);
    const timedOut = (t: Timed | undefined) => (t && t.timedOut > 0 ? { timed_out: t.timedOut } : {});

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
    const talked: Record<string, Timed> = {};
    const peaks: Record<string, number[]> = {};
    const talks: Record<string, () => Promise<number>> = {};
    for (const peer of peers) {
      const into: Timed = { timedOut: 0 };
      talked[peer.name] = into;
      peaks[peer.name] = [];
      talks[peer.name] = underLimit(
        REP_LIMIT_MS.conversation,
        into,
        REP_LIMIT_MS.conversation,
        async (opened) => {
          const r = await conversation(peer, mock, workspace, opened);
          peaks[peer.name]!.push(r.rss);
          return r.ms;
        },
        ctx.log,
        `${TURNS}-turn conversation, ${peer.name}`,
      );
    }
    const walls = await interleave(ctx.reps, talks);
    const wallRatio = walls.codex ? round(median(walls.nexo!) / median(walls.codex)) : undefined;
    const peakRatio =
      peaks.codex && peaks.codex.length > 0 && peaks.nexo!.length > 0
        ? round(median(peaks.nexo!) / median(peaks.codex))
        : undefined;
    for (const peer of peers) {
      const mine = peer.name === "nexo";
      record(
        `${TURNS}-turn conversation, one file read per turn, ${label(peer)}`,
        "milliseconds",
        "ms",
        walls[peer.name]!.map(Math.round),
        mine && wallRatio !== undefined
          ? {
              ratios: { "nexo/codex": wallRatio, ...timedOut(talked.codex) },
              goal: { ratio: "nexo/codex", max: 0.5, met: wallRatio <= 0.5 && talked.nexo!.timedOut === 0 },
            }
          : { ...(talked[peer.name]!.timedOut > 0 ? { ratios: timedOut(talked[peer.name]) } : {}) },
      );
      record(
        `peak RSS after the ${TURNS}-turn conversation, ${peer.name}`,
        "MiB",
        "MiB",
        peaks[peer.name]!,
        mine && peakRatio !== undefined
          ? {
              ratios: { "nexo/codex": peakRatio },
              goal: { ratio: "nexo/codex (keep ahead)", max: 1, met: peakRatio <= 1 },
            }
          : {},
      );
    }
    ctx.log(
      `${TURNS}-turn conversation with a file read per turn: nexo ${Math.round(median(walls.nexo!))} ms, ${walls.codex ? `codex ${Math.round(median(walls.codex))} ms, ratio ${wallRatio}` : `codex skipped (${skip})`}; peak RSS nexo ${median(peaks.nexo!)} MiB${peaks.codex ? `, codex ${median(peaks.codex)} MiB` : ""}`,
    );

    // 3. events per second of a 5,000-delta answer
    const floorRate = DELTAS / (REP_LIMIT_MS.stream / 1000);
    for (const over of ["stdio", "ws"] as const) {
      const streamed: Record<string, Timed> = {};
      const delivered: Record<string, number[]> = {};
      const whole: Record<string, number> = {};
      const streams: Record<string, () => Promise<number>> = {};
      for (const peer of peers) {
        const into: Timed = { timedOut: 0 };
        streamed[peer.name] = into;
        delivered[peer.name] = [];
        whole[peer.name] = 0;
        streams[peer.name] = underLimit(
          REP_LIMIT_MS.stream,
          into,
          floorRate,
          async (opened) => {
            const r = await stream(peer, mock, workspace, over, opened);
            delivered[peer.name]!.push(r.notifications);
            if (r.whole) whole[peer.name]!++;
            return r.rate;
          },
          ctx.log,
          `${DELTAS}-delta answer over ${over}, ${peer.name}`,
        );
      }
      const rates = await interleave(ctx.reps, streams);
      const transport = over === "ws" ? "WebSocket" : "stdio";
      const rateRatio = rates.codex ? round(median(rates.nexo!) / median(rates.codex)) : undefined;
      for (const peer of peers) {
        const mine = peer.name === "nexo";
        const counts = {
          notifications_min: fewest(delivered[peer.name]!),
          whole_text_reps: whole[peer.name]!,
          ...timedOut(streamed[peer.name]),
        };
        record(
          `${DELTAS}-delta answer over ${transport}, ${label(peer)}`,
          "the answer's deltas' worth of text received per second (5,000 x text received / whole text), turn/started to turn/completed (second turn)",
          "events/s",
          rates[peer.name]!.map(Math.round),
          mine && rateRatio !== undefined
            ? {
                ratios: { "nexo/codex": rateRatio, ...counts },
                goal: { ratio: "nexo/codex (keep ahead)", min: 1, met: rateRatio >= 1 },
              }
            : { ratios: counts },
        );
      }
      ctx.log(
        `${DELTAS}-delta answer over ${transport}: nexo ${Math.round(median(rates.nexo!))} events/s, ${rates.codex ? `codex ${Math.round(median(rates.codex))} events/s, ratio ${rateRatio}` : `codex skipped (${skip})`}; fewest delta notifications: nexo ${fewest(delivered.nexo!)}${delivered.codex ? `, codex ${fewest(delivered.codex)}` : ""}; repetitions with the whole text: nexo ${whole.nexo}${whole.codex === undefined ? "" : `, codex ${whole.codex}`}`,
      );
    }
  } finally {
    await mock.close();
    for (const dir of [stateDir, workspace, home, codexHomeDir])
      rmSync(dir, { recursive: true, force: true });
  }
}
