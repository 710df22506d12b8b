/**
 * What `nexo chat` talks to, and starting it when needed:
 *
 * - `--connect ws://HOST:PORT/ws` — a running AppServer (a daemon's or `nexo app-server --listen`);
 * - `--config DIR` — the daemon of that config directory: the running one when its state dir has an
 *   AppServer endpoint file (appserver.json) with a live pid, else a daemon started here
 *   (`nexo start --config DIR --appserver ws://127.0.0.1:0`, a fresh token, its log in the state
 *   dir's daemon.log) and stopped again when the chat that started it ends — a second chat on the
 *   same directory joins that daemon and leaves it running;
 * - neither — a private `nexo app-server` on stdio, working in the current directory with the
 *   built-in tools and the provider of the flags or the environment (the offline scripted model
 *   when no key is set).
 *
 * Every child is this same nexo, run by this same node, so the chat and what it starts are always
 * the same version. It starts as the `nexo` command would start it: through the launcher beside
 * the entry (bin/nexo, which gives `nexo start` its start-time node flags), told to run this node.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, readSync, realpathSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { LineTransport, type MessageTransport, WebSocketTransport } from "@nexo/wire";
import { WebSocket } from "ws";
import { ConfigError, writeFileAtomic } from "../config/index.js";
import { loadDaemonConfig } from "../daemon/config/index.js";
import { APPSERVER_ENDPOINT_FILE } from "../paths.js";

export interface ChatTargetFlags {
  connect?: string;
  token?: string;
  config?: string;
  agent?: string;
  stateDir?: string;
  workspace?: string;
  provider?: string;
  model?: string;
  baseUrl?: string;
}

export interface ChatTarget {
  transport: MessageTransport;
  /** One line for the banner: what the chat is talking to. */
  description: string;
  /** Where threads say they work (a daemon's agent works in its own workspace whatever this says). */
  workspace: string;
  /** Stops what the chat started (nothing for a server it only connected to). */
  stop(): Promise<void>;
  /** The last lines a server started here logged, to explain why it went away. */
  recentLog?(): string;
  /** A config directory's daemon: its state directory (where its microapps keep their files). */
  stateDir?: string;
}

/**
 * Long steps of opening a target (starting a daemon takes a second or more on a first start, with
 * its plugins and migrations): shown to the person so the chat does not look stuck.
 */
export interface ChatProgress {
  start(message: string): void;
  stop(message: string, failed?: boolean): void;
}

const NO_PROGRESS: ChatProgress = { start() {}, stop() {} };

/** Why the chat could not reach anything to talk to; `exitCode` 2 for a usage or config problem. */
export class ChatLaunchError extends Error {
  override readonly name = "ChatLaunchError";
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

/**
 * The AppServer token of a daemon a chat started (0600 in the user's state dir, beside the database
 * it protects): how a second `nexo chat --config DIR` joins that daemon.
 */
const CHAT_TOKEN_FILE = "chat-appserver.token";

/** How long a daemon started here may take to serve its AppServer. */
const DAEMON_START_TIMEOUT_MS = 60_000;
/** How long a child may take to leave after being asked, before it is killed. */
const CHILD_STOP_GRACE_MS = 15_000;

export async function openChatTarget(
  flags: ChatTargetFlags,
  env: NodeJS.ProcessEnv,
  progress: ChatProgress = NO_PROGRESS,
): Promise<ChatTarget> {
  const workspace = resolve(flags.workspace ?? process.cwd());
  if (flags.connect !== undefined) {
    if (flags.config !== undefined) throw new ChatLaunchError("--connect and --config exclude each other", 2);
    const token = flags.token ?? (env.NEXO_APPSERVER_TOKEN || undefined);
    return {
      transport: webSocketTransport(flags.connect, token),
      description: flags.connect,
      workspace,
      stop: async () => {},
    };
  }
  if (flags.config !== undefined) return daemonTarget(resolve(flags.config), flags, env, workspace, progress);
  return appServerTarget(flags, env, workspace);
}

function webSocketTransport(url: string, token: string | undefined): MessageTransport {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ChatLaunchError(`--connect ${url}: not a URL (expected ws://HOST:PORT/ws)`, 2);
  }
  if (target.protocol !== "ws:" && target.protocol !== "wss:") {
    throw new ChatLaunchError(`--connect ${url}: expected a ws:// or wss:// URL`, 2);
  }
  if (target.pathname === "/" || target.pathname === "") target.pathname = "/ws";
  if (token !== undefined && !target.searchParams.has("token")) target.searchParams.set("token", token);
  return new WebSocketTransport(new WebSocket(target));
}

/** The running daemon of `configDir`, or one started for this chat. */
async function daemonTarget(
  configDir: string,
  flags: ChatTargetFlags,
  env: NodeJS.ProcessEnv,
  workspace: string,
  progress: ChatProgress,
): Promise<ChatTarget> {
  const configEnv = flags.stateDir === undefined ? env : { ...env, NEXO_STATE_DIR: resolve(flags.stateDir) };
  let config: Awaited<ReturnType<typeof loadDaemonConfig>>;
  try {
    config = await loadDaemonConfig(configDir, { env: configEnv });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ChatLaunchError(`the config in ${configDir} is not valid:\n${error.message}`, 2);
  }
  const stateDir = flags.stateDir === undefined ? config.daemon.state_dir : resolve(flags.stateDir);
  const fileToken = config.appserver?.websocket.token;

  const tokenFile = join(stateDir, CHAT_TOKEN_FILE);
  const running = readEndpoint(stateDir);
  if (running !== undefined && isAlive(running.pid)) {
    const token = flags.token ?? fileToken ?? (env.NEXO_APPSERVER_TOKEN || undefined) ?? readToken(tokenFile);
    return {
      transport: webSocketTransport(running.url, token),
      description: `the running daemon (pid ${running.pid}, agent ${running.agent})`,
      workspace,
      stateDir,
      stop: async () => {},
    };
  }

  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const log = join(stateDir, "daemon.log");
  const logFd = openSync(log, "a");
  const logStart = statSync(log).size;
  // The file's token if it has one (the daemon keeps it), else a fresh one, kept where only this
  // user can read it so a second chat can join this daemon.
  let token = fileToken;
  if (token === undefined) {
    token = randomBytes(24).toString("base64url");
    await writeFileAtomic(tokenFile, `${token}\n`, { mode: 0o600 });
  }
  const startedAt = Date.now();
  progress.start(`starting the daemon for ${configDir}`);
  const args = ["start", "--config", configDir, "--appserver", "ws://127.0.0.1:0"];
  if (flags.agent !== undefined) args.push("--appserver-agent", flags.agent);
  if (flags.stateDir !== undefined) args.push("--state-dir", stateDir);
  // Its own process group: a Ctrl-C at the terminal is the chat's (it stops a turn), not the daemon's.
  const daemon = spawnNexo(args, { ...env, NEXO_APPSERVER_TOKEN: token }, ["ignore", logFd, logFd], true);
  closeSync(logFd);
  const exited = new Promise<string>((done) =>
    daemon.once("exit", (code, signal) => done(signal ?? `exit ${code}`)),
  );

  const polling = new AbortController();
  const endpoint = await Promise.race([
    waitForEndpoint(stateDir, daemon.pid!, polling.signal),
    exited.then((how) => {
      const reasons = startReasons(log, logStart);
      throw new ChatLaunchError(
        `the daemon stopped (${how})${reasons.length > 0 ? `:\n  ${reasons.join("\n  ")}` : ""}\nfull log: ${log}`,
      );
    }),
  ])
    .catch(async (error: unknown) => {
      progress.stop("the daemon did not start", true);
      await stopChild(daemon, "SIGTERM");
      throw error;
    })
    .finally(() => polling.abort());
  progress.stop(`daemon ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  return {
    transport: webSocketTransport(endpoint.url, token),
    description: `a daemon started for this chat (pid ${daemon.pid}, agent ${endpoint.agent}; log ${log})`,
    workspace,
    stateDir,
    stop: () => stopChild(daemon, "SIGTERM"),
  };
}

/** A private `nexo app-server` on stdio. */
async function appServerTarget(
  flags: ChatTargetFlags,
  env: NodeJS.ProcessEnv,
  workspace: string,
): Promise<ChatTarget> {
  const args = ["app-server", "--workspace", workspace];
  if (flags.provider !== undefined) args.push("--provider", flags.provider);
  if (flags.model !== undefined) args.push("--model", flags.model);
  if (flags.baseUrl !== undefined) args.push("--base-url", flags.baseUrl);
  if (flags.stateDir !== undefined) args.push("--state-dir", resolve(flags.stateDir));
  const child = spawnNexo(args, env, ["pipe", "pipe", "pipe"]);
  // Its log lines are kept (the last few) to explain a failure, not shown over the chat.
  const tail: string[] = [];
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    tail.push(...chunk.split("\n").filter((line) => line.trim() !== ""));
    tail.splice(0, Math.max(0, tail.length - 20));
  });
  const transport = new LineTransport({ input: child.stdout!, output: child.stdin! });
  return {
    transport,
    description: `a private nexo app-server (pid ${child.pid}) in ${workspace}`,
    workspace,
    stop: async () => {
      child.stdin!.end();
      await stopChild(child, undefined);
    },
    recentLog: () => tail.join("\n"),
  };
}

/**
 * `nexo ARGS` started as a user's `nexo` starts it: through the POSIX sh launcher beside the entry
 * (bin/nexo: `--v8-pool-size=1` and `MALLOC_ARENA_MAX=2` for the daemon, and whatever else it
 * decides for a command), with NEXO_NODE naming this process's node so the launcher runs that one
 * rather than the first node on PATH. The launcher `exec`s node: the child's pid is node's. Where
 * there is no launcher (Windows, or the entry run from elsewhere than bin/), the entry with this
 * node directly.
 */
function spawnNexo(
  args: string[],
  env: NodeJS.ProcessEnv,
  stdio: ["ignore" | "pipe", "pipe" | number, "pipe" | number],
  detached = false,
): ChildProcess {
  const entry = realpathSync(process.argv[1]!);
  const launcher = join(dirname(entry), "nexo");
  if (process.platform !== "win32" && isFile(launcher)) {
    return spawn("/bin/sh", [launcher, ...args], {
      env: { ...env, NEXO_NODE: process.execPath },
      stdio,
      detached,
    });
  }
  return spawn(process.execPath, [entry, ...args], { env, stdio, detached });
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

interface Endpoint {
  url: string;
  pid: number;
  agent: string;
}

function readEndpoint(stateDir: string): Endpoint | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(stateDir, APPSERVER_ENDPOINT_FILE), "utf8")) as Endpoint;
    return typeof parsed.url === "string" && Number.isInteger(parsed.pid) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function readToken(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The endpoint file written by the daemon with process id `pid`, polled until it appears. */
async function waitForEndpoint(stateDir: string, pid: number, signal: AbortSignal): Promise<Endpoint> {
  const deadline = Date.now() + DAEMON_START_TIMEOUT_MS;
  while (Date.now() < deadline && !signal.aborted) {
    const endpoint = readEndpoint(stateDir);
    if (endpoint?.pid === pid) return endpoint;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new ChatLaunchError(
    `the daemon did not serve its AppServer within ${DAEMON_START_TIMEOUT_MS / 1000} s (see ${join(stateDir, "daemon.log")})`,
  );
}

/** The daemon's own summary lines (`nexo start: …`) written during this run. */
function startReasons(log: string, from: number): string[] {
  const fd = openSync(log, "r");
  try {
    const length = Math.max(0, statSync(log).size - from);
    const buffer = Buffer.alloc(Math.min(length, 1 << 20));
    readSync(fd, buffer, 0, buffer.length, from + length - buffer.length);
    return buffer
      .toString("utf8")
      .split("\n")
      .filter((line) => line.startsWith("nexo start:"))
      .slice(-5);
  } finally {
    closeSync(fd);
  }
}

/** Asks a child to leave (a signal, or nothing when its stdin was closed) and kills it if it lingers. */
async function stopChild(child: ChildProcess, signal: NodeJS.Signals | undefined): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((done) => child.once("exit", () => done()));
  if (signal !== undefined) child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_STOP_GRACE_MS);
  await gone;
  clearTimeout(timer);
}
