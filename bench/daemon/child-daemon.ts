/**
 * A nexo daemon the way an operator runs it: `nexo start --config DIR` in its own process, on a
 * config dir written for the benchmark (one agent on the scripted model, bound to the loopback
 * channel plugin; the local broker or NATS). The benchmark reaches it only from outside: the
 * loopback plugin's HTTP endpoint, the daemon's /metrics, its log on stderr and /proc.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { NEXO_COMMAND, NEXO_ENTRY, nexoStartEnv } from "../lib.js";
import {
  descendants,
  isAlive,
  mallocHeapMB,
  type ResidentMemory,
  residentMemory,
  totalResident,
} from "./proc.js";
import { type MetricsSnapshot, scrape } from "./prometheus.js";

const LOOPBACK_PLUGIN = fileURLToPath(new URL("../../examples/plugins/loopback-channel", import.meta.url));
/** The agent every benchmark message is routed to. */
const BENCH_AGENT = "bench";
const BOOT_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
/** pino's numeric levels: 40 is warn. */
const WARN = 40;

/**
 * BENCH_DAEMON_NODE_ARGS: extra node flags for the daemon process, split on spaces — for profiling
 * it under the benchmark's load, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
 */
function nodeArgs(): string[] {
  return (process.env.BENCH_DAEMON_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "");
}

export type BrokerChoice = { type: "local" } | { type: "nats"; url: string };

export interface ChildDaemonOptions {
  /** Names the daemon in logs and errors, e.g. "local". */
  label: string;
  broker: BrokerChoice;
  /**
   * The scripted model's pause between text deltas: 0 answers as fast as the engine runs; more
   * stands in for a model's latency, so that many turns are in flight at once.
   */
  chunkDelayMs: number;
}

/** A warn or error line the daemon logged: during a benchmark each one is a problem to report. */
export interface LoggedProblem {
  level: number;
  msg: string;
}

function configFiles(options: ChildDaemonOptions): Record<string, string> {
  const broker =
    options.broker.type === "local"
      ? "broker:\n  type: local\n"
      : `broker:\n  type: nats\n  url: ${options.broker.url}\n  name: nexo-bench-${options.label}\n`;
  return {
    "agents.yaml": [
      "agents:",
      `  - id: ${BENCH_AGENT}`,
      "    model: { provider: bench_scripted, model: nexo-scripted-demo }",
      "    inbound_bindings:",
      "      - plugin: loopback",
      "",
    ].join("\n"),
    "llm.yaml": [
      "providers:",
      "  bench_scripted:",
      "    type: scripted",
      `    chunk_delay_ms: ${options.chunkDelayMs}`,
      "",
    ].join("\n"),
    "broker.yaml": broker,
    "plugins.yaml": `plugins:\n  - dir: ${JSON.stringify(LOOPBACK_PLUGIN)}\n`,
    "daemon.yaml": ["state_dir: ./state", "http:", "  bind: 127.0.0.1:0", "shutdown_grace_ms: 5000", ""].join(
      "\n",
    ),
  };
}

/**
 * Follows the daemon's JSON log on stderr: the metrics URL and the ready line during boot, every
 * warn or error line afterwards, and apart from those the lines that are not the logger's (Node's
 * own process warnings): worth reporting, but not a failed message.
 */
class DaemonLog {
  readonly problems: LoggedProblem[] = [];
  problemCount = 0;
  readonly processWarnings: string[] = [];
  metricsUrl: string | undefined;
  ready = false;
  /** The last few KiB, for the error when boot fails. */
  tail = "";

  constructor(stderr: Readable) {
    createInterface({ input: stderr, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) =>
      this.read(line),
    );
  }

  private read(line: string): void {
    this.tail = `${this.tail}${line}\n`.slice(-4000);
    let entry: { level?: number; msg?: string; url?: string };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      if (this.processWarnings.length < 20) this.processWarnings.push(line);
      return;
    }
    if (entry.msg === "health and metrics listening" && typeof entry.url === "string") {
      this.metricsUrl = entry.url;
    }
    if (entry.msg?.startsWith("nexo daemon ready")) this.ready = true;
    if ((entry.level ?? 0) >= WARN) {
      this.problemCount++;
      if (this.problems.length < 20) this.problems.push({ level: entry.level ?? WARN, msg: line });
    }
  }
}

export class ChildDaemon {
  /** The loopback channel's HTTP endpoint, e.g. http://127.0.0.1:40123. */
  readonly channelUrl: string;

  private constructor(
    readonly options: ChildDaemonOptions,
    private readonly child: ChildProcessByStdio<null, null, Readable>,
    private readonly dir: string,
    private readonly log: DaemonLog,
    /** The daemon's health and metrics listener. */
    readonly metricsUrl: string,
    channel: { url: string },
    private readonly killOnExit: () => void,
  ) {
    this.channelUrl = channel.url;
  }

  static async start(options: ChildDaemonOptions): Promise<ChildDaemon> {
    const dir = mkdtempSync(join(tmpdir(), `nexo-bench-daemon-${options.label}-`));
    mkdirSync(join(dir, "state"), { mode: 0o700 });
    for (const [name, text] of Object.entries(configFiles(options))) writeFileSync(join(dir, name), text);
    const args = nodeArgs();
    const [command, commandArgs] =
      args.length === 0 ? [NEXO_COMMAND, []] : [process.execPath, [...args, NEXO_ENTRY]];
    const child = spawn(command, [...commandArgs, "start", "--config", dir], {
      env: nexoStartEnv(),
      stdio: ["ignore", "ignore", "pipe"],
    });
    // If the benchmark dies without stopping it, the daemon must not outlive it (it stops its plugins).
    const killOnExit = () => child.kill("SIGTERM");
    process.once("exit", killOnExit);
    const log = new DaemonLog(child.stderr);
    const fail = (why: string, signal?: NodeJS.Signals): never => {
      if (signal) child.kill(signal);
      process.removeListener("exit", killOnExit);
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`the ${options.label} daemon ${why}:\n${log.tail}`);
    };

    const deadline = Date.now() + BOOT_TIMEOUT_MS;
    const endpointFile = join(dir, "state", "plugins", "loopback", "endpoint.json");
    while (!(log.ready && log.metricsUrl !== undefined && existsSync(endpointFile))) {
      if (child.exitCode !== null || child.signalCode !== null) {
        fail(`exited during boot (${child.exitCode ?? child.signalCode})`);
      }
      if (Date.now() > deadline) fail(`was not ready within ${BOOT_TIMEOUT_MS} ms`, "SIGKILL");
      await sleep(25);
    }
    const channel = JSON.parse(readFileSync(endpointFile, "utf8")) as { url: string };
    return new ChildDaemon(options, child, dir, log, log.metricsUrl!, channel, killOnExit);
  }

  /** Warn and error lines the daemon logged so far; the first 20 of them. */
  get problems(): { count: number; first: readonly LoggedProblem[] } {
    return { count: this.log.problemCount, first: this.log.problems };
  }

  /** The first 20 stderr lines that were not log lines (e.g. Node's MaxListenersExceededWarning). */
  get processWarnings(): readonly string[] {
    return this.log.processWarnings;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The daemon process alone, without its plugins. */
  memory(): ResidentMemory {
    return residentMemory(this.pid);
  }

  /** glibc's main malloc heap of the daemon process, resident, MB. */
  mallocHeapMB(): number {
    return mallocHeapMB(this.pid);
  }

  /** The plugin processes the daemon runs (here: the loopback channel), summed. */
  pluginMemory(): ResidentMemory {
    return totalResident(descendants(this.pid));
  }

  metrics(): Promise<MetricsSnapshot> {
    return scrape(this.metricsUrl);
  }

  /**
   * SIGTERM, as an operator stops it, and waits for the exit. Resolves with the plugin processes
   * that survived the shutdown (there should be none) and the exit code.
   */
  async stop(): Promise<{ exitCode: number | null; survivors: number[] }> {
    const plugins = descendants(this.pid);
    const exited = new Promise<void>((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) resolve();
      else this.child.once("exit", () => resolve());
    });
    this.child.kill("SIGTERM");
    const killer = setTimeout(() => this.child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(killer);
    process.removeListener("exit", this.killOnExit);
    // The daemon waits for its plugins before it exits; give the kernel a moment to reap them.
    await sleep(50);
    const survivors = plugins.filter(isAlive);
    rmSync(this.dir, { recursive: true, force: true });
    return { exitCode: this.child.exitCode, survivors };
  }
}
