/**
 * The two long-running gateways of the OpenClaw benchmark, each started the way an operator runs
 * it and reached only from outside, over loopback HTTP:
 *   nexo      `nexo start --config DIR`: one agent on the mock (Anthropic's Messages API), bound
 *             to the loopback channel plugin; a message is POST /messages on that channel, the
 *             answer the reply its long-poll (GET /messages) returns.
 *   OpenClaw  `openclaw gateway run` on Node 24: one agent on the mock (the same API), its
 *             chat-completions endpoint on; a message is one POST /v1/chat/completions (not
 *             streamed) whose response is the answer. The conversation is kept by the `user` field.
 * Both are ready when their own GET /readyz answers 200 (polled every 25 ms alike).
 * Each runs in its own process group, so the group is killed after the stop and nothing is left.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { LoopbackClient } from "../daemon/loopback-client.js";
import { NEXO_COMMAND } from "../lib.js";
import { completionText, type OpenClawInstall, openclawConfig, openclawEnv } from "./openclaw.js";

const LOOPBACK_PLUGIN = fileURLToPath(new URL("../../examples/plugins/loopback-channel", import.meta.url));
/** Start-up and a turn may take long on a loaded machine (OpenClaw's first turn loads its tools). */
const LIMIT_MS = Number(process.env.BENCH_OPENCLAW_LIMIT_S ?? 300) * 1000;
const STOP_TIMEOUT_MS = 20_000;
const POLL_MS = 25;

export interface Gateway {
  readonly pid: number;
  /** spawn → GET /readyz answered 200, ms. */
  readonly readyMs: number;
  /** Posts `text` in the conversation `session` and resolves with the answer's text once it is back. */
  turn(session: string, text: string): Promise<string>;
  /** SIGTERM, wait for the exit, then SIGKILL whatever of the process group is left. */
  stop(): Promise<{ exitCode: number | null; leftovers: boolean }>;
}

export interface GatewaySetup {
  mockUrl: string;
  model: string;
}

/** A port the system had free a moment ago (the gateway binds it itself). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One HTTP exchange over a keep-alive agent: status and body. */
function exchange(
  agent: Agent,
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent,
        headers:
          body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

class Child {
  readonly process: ChildProcess;
  private tailText = "";
  private readonly killGroup: () => void;

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
    this.process = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const keep = (chunk: Buffer) => {
      this.tailText = (this.tailText + chunk.toString("utf8")).slice(-4000);
    };
    this.process.stdout?.on("data", keep);
    this.process.stderr?.on("data", keep);
    // If the benchmark dies first, its gateways must not outlive it.
    this.killGroup = () => {
      try {
        process.kill(-this.process.pid!, "SIGKILL");
      } catch {
        // the group is gone already
      }
    };
    process.once("exit", this.killGroup);
  }

  get pid(): number {
    return this.process.pid!;
  }

  get exited(): boolean {
    return this.process.exitCode !== null || this.process.signalCode !== null;
  }

  tail(): string {
    return this.tailText.trim().slice(-1500);
  }

  /** Polls `url` until it answers 200; fails when the process exits or the limit passes. */
  async waitReady(url: string, started: number, what: string): Promise<number> {
    const agent = new Agent({ keepAlive: false });
    try {
      for (;;) {
        if (this.exited)
          throw new Error(`${what} exited during start-up (${this.process.exitCode}): ${this.tail()}`);
        if (performance.now() - started > LIMIT_MS)
          throw new Error(`${what} was not ready in ${LIMIT_MS / 1000} s: ${this.tail()}`);
        const answered = await exchange(agent, url, "GET", {}).catch(() => undefined);
        if (answered?.status === 200) return performance.now() - started;
        await sleep(POLL_MS);
      }
    } finally {
      agent.destroy();
    }
  }

  async stop(): Promise<{ exitCode: number | null; leftovers: boolean }> {
    const exited = new Promise<void>((resolve) => {
      if (this.exited) resolve();
      else this.process.once("exit", () => resolve());
    });
    this.process.kill("SIGTERM");
    const killer = setTimeout(() => this.process.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(killer);
    let leftovers = false;
    try {
      process.kill(-this.pid, 0);
      leftovers = true;
      process.kill(-this.pid, "SIGKILL");
    } catch {
      // no process of the group is left
    }
    process.removeListener("exit", this.killGroup);
    return { exitCode: this.process.exitCode, leftovers };
  }
}

/** Fails `work` after the limit, or at once if the process exits. */
async function limited<T>(child: Child, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onExit: ((code: number | null, signal: NodeJS.Signals | null) => void) | undefined;
  const failed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${LIMIT_MS / 1000} s`)), LIMIT_MS);
    onExit = (code, signal) =>
      reject(new Error(`${what}: the process exited (${signal ?? code}): ${child.tail()}`));
    child.process.once("exit", onExit);
  });
  try {
    return await Promise.race([work, failed]);
  } finally {
    clearTimeout(timer);
    if (onExit) child.process.off("exit", onExit);
  }
}

/** nexo's daemon: the files of its config dir (a pure function of the setup, for the test). */
export function nexoConfigFiles(
  setup: GatewaySetup & { httpPort: number; pluginDir: string },
): Record<string, string> {
  return {
    "agents.yaml": [
      "agents:",
      "  - id: bench",
      `    model: { provider: mock, model: ${setup.model} }`,
      "    inbound_bindings:",
      "      - plugin: loopback",
      "",
    ].join("\n"),
    "llm.yaml": [
      "providers:",
      "  mock:",
      "    type: anthropic",
      `    base_url: ${setup.mockUrl}`,
      "    api_key: bench",
      "",
    ].join("\n"),
    "broker.yaml": "broker:\n  type: local\n",
    "plugins.yaml": `plugins:\n  - dir: ${JSON.stringify(setup.pluginDir)}\n`,
    "daemon.yaml": `state_dir: ./state\nhttp:\n  bind: 127.0.0.1:${setup.httpPort}\n`,
  };
}

export async function startNexo(setup: GatewaySetup): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), "nexo-bench-claw-nexo-"));
  const home = join(dir, "home");
  mkdirSync(home);
  mkdirSync(join(dir, "state"), { mode: 0o700 });
  const httpPort = await freePort();
  for (const [name, text] of Object.entries(
    nexoConfigFiles({ ...setup, httpPort, pluginDir: LOOPBACK_PLUGIN }),
  ))
    writeFileSync(join(dir, name), text);
  const started = performance.now();
  const child = new Child(
    NEXO_COMMAND,
    ["start", "--config", dir],
    { PATH: process.env.PATH, HOME: home, LANG: process.env.LANG },
    dir,
  );
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  let readyMs: number;
  let client: LoopbackClient;
  try {
    readyMs = await child.waitReady(`http://127.0.0.1:${httpPort}/readyz`, started, "nexo start");
    // Ready means every plugin is; the channel's endpoint file is written when it starts.
    const endpointFile = join(dir, "state", "plugins", "loopback", "endpoint.json");
    if (!existsSync(endpointFile)) throw new Error(`nexo is ready but ${endpointFile} is missing`);
    client = new LoopbackClient((JSON.parse(readFileSync(endpointFile, "utf8")) as { url: string }).url);
  } catch (error) {
    await child.stop();
    cleanup();
    throw error;
  }
  return {
    pid: child.pid,
    readyMs,
    turn: (session, text) =>
      limited(
        child,
        "nexo turn",
        (async () => {
          await client.post(session, text);
          for (;;) {
            const replies = await client.poll(session, 30_000);
            const answer = replies.find((reply) => reply.kind === "text");
            if (answer) return answer.text ?? "";
          }
        })(),
      ),
    stop: async () => {
      client.close();
      const stopped = await child.stop();
      cleanup();
      return stopped;
    },
  };
}

export async function startOpenClaw(install: OpenClawInstall, setup: GatewaySetup): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), "nexo-bench-claw-openclaw-"));
  const home = join(dir, "home");
  const stateDir = join(dir, "state");
  const workspace = join(dir, "workspace");
  for (const d of [home, join(home, "tmp"), stateDir, workspace])
    mkdirSync(d, { recursive: true, mode: 0o700 });
  const port = await freePort();
  const token = `bench-${process.pid}-${port}-token`;
  writeFileSync(
    join(stateDir, "openclaw.json"),
    `${JSON.stringify(openclawConfig({ port, token, mockUrl: setup.mockUrl, model: setup.model, workspace, stateDir }), null, 2)}\n`,
  );
  const started = performance.now();
  const child = new Child(install.node, [install.entry, "gateway", "run"], openclawEnv(home, stateDir), dir);
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const base = `http://127.0.0.1:${port}`;
  let readyMs: number;
  try {
    readyMs = await child.waitReady(`${base}/readyz`, started, "openclaw gateway");
  } catch (error) {
    await child.stop();
    cleanup();
    throw error;
  }
  const agent = new Agent({ keepAlive: true });
  return {
    pid: child.pid,
    readyMs,
    turn: (session, text) =>
      limited(
        child,
        "OpenClaw turn",
        (async () => {
          const answered = await exchange(
            agent,
            `${base}/v1/chat/completions`,
            "POST",
            { authorization: `Bearer ${token}`, "content-type": "application/json" },
            JSON.stringify({ model: "openclaw", user: session, messages: [{ role: "user", content: text }] }),
          );
          if (answered.status !== 200)
            throw new Error(`OpenClaw answered HTTP ${answered.status}: ${answered.body.slice(0, 300)}`);
          return completionText(answered.body);
        })(),
      ),
    stop: async () => {
      agent.destroy();
      const stopped = await child.stop();
      cleanup();
      return stopped;
    },
  };
}
