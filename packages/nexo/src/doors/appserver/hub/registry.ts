/**
 * The AppServers a hub started, one per workspace. `ensure` finds a healthy one or starts one:
 *
 * 1. the workspace path is made canonical (realpath), so two spellings of one directory are one
 *    workspace; a path that is not a directory is `workspaceNotFound`;
 * 2. calls for one workspace run one after the other, so two concurrent `ensure`s start one server
 *    (the second finds the first's);
 * 3. a managed server whose process runs and whose `/readyz` answers is reused as it is;
 * 4. another live process holding the workspace's lock (workspace-lock.ts) is `workspaceLocked`:
 *    the hub never starts a second server beside it;
 * 5. otherwise `nexo app-server --listen ws://127.0.0.1:<free port>` is spawned in the workspace
 *    with a fresh token (32 random bytes) in its environment and stdin = /dev/null, and is ready
 *    once `/readyz` answers and the workspace lock names its pid (15 s at most, else
 *    `appServerStartFailed` with the end of its stderr).
 *
 * The hub never restarts a server by itself; a later `ensure` or `restart` does. Stopping sends
 * SIGTERM and, after a grace period, SIGKILL. A health loop (`checkHealth`, every 10 s in the hub)
 * marks a running server `unhealthy` when its `/readyz` stops answering or its workspace lock no
 * longer names its pid, and `running` again when both hold; an exit is seen at once. Every change
 * is told to the hub's event stream (events.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { realpath, stat } from "node:fs/promises";
import { createServer } from "node:net";
import type { HubAppServer, HubAppServerState, HubErrorCode } from "@nexo/wire/schemas/appserver";
import type { Logger } from "../../../log.js";
import type { HubEvents } from "./events.js";
import { workspaceLockHolder } from "./workspace-lock.js";

const START_TIMEOUT_MS = 15_000;
const PROBE_TIMEOUT_MS = 2_000;
const STOP_GRACE_MS = 3_000;
const POLL_MS = 100;
/** Lines of a server's stderr kept for `recentStderr`. */
const STDERR_LINES = 40;

export class HubError extends Error {
  constructor(
    readonly code: HubErrorCode,
    readonly status: number,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** How the hub starts an AppServer: the executable and the arguments before `app-server`. */
export interface AppServerCommand {
  command: string;
  args: readonly string[];
  /** Extra arguments after `app-server --listen …` (e.g. `--config DIR`). */
  extraArgs: readonly string[];
  /** The environment servers get (the CLI's start-up view, so provider keys reach them). */
  env: NodeJS.ProcessEnv;
}

interface Managed {
  workspacePath: string;
  canonical: string;
  state: HubAppServerState;
  child: ChildProcess | undefined;
  port: number | undefined;
  token: string | undefined;
  exitCode: number | null;
  lastError: string | null;
  stderr: string[];
  exited: Promise<void> | undefined;
}

export class ManagedAppServers {
  private readonly entries = new Map<string, Managed>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly launch: AppServerCommand,
    private readonly version: string,
    private readonly logger: Logger,
    private readonly events: HubEvents,
  ) {}

  async ensure(workspacePath: string, startIfMissing = true): Promise<HubAppServer> {
    const canonical = await canonicalWorkspace(workspacePath);
    return this.serially(canonical, async () => {
      let entry = this.entries.get(canonical);
      if (entry !== undefined && entry.state === "running" && (await this.healthy(entry))) {
        return this.describe(entry, workspacePath);
      }
      if (!startIfMissing) return this.describe(entry ?? this.blank(workspacePath, canonical), workspacePath);
      if (entry?.child !== undefined) await this.stopProcess(entry);
      const holder = workspaceLockHolder(canonical);
      if (holder !== undefined) {
        throw new HubError(
          "workspaceLocked",
          409,
          `workspace ${canonical} already has an AppServer (pid ${holder}) that this hub did not start; connect to it or stop it first`,
          { pid: holder },
        );
      }
      entry = this.blank(workspacePath, canonical);
      this.entries.set(canonical, entry);
      await this.start(entry);
      return this.describe(entry, workspacePath);
    });
  }

  /** Stops the workspace's server if this hub runs one, and starts a new one. */
  async restart(workspacePath: string): Promise<HubAppServer> {
    const canonical = await canonicalWorkspace(workspacePath);
    return this.serially(canonical, async () => {
      const previous = this.entries.get(canonical);
      if (previous !== undefined) await this.stopProcess(previous);
      const holder = workspaceLockHolder(canonical);
      if (holder !== undefined) {
        throw new HubError(
          "workspaceLocked",
          409,
          `workspace ${canonical} has an AppServer (pid ${holder}) that this hub did not start; stop it first`,
          { pid: holder },
        );
      }
      const entry = this.blank(workspacePath, canonical);
      this.entries.set(canonical, entry);
      await this.start(entry);
      return this.describe(entry, workspacePath);
    });
  }

  /** One round of the health loop over every server this hub runs. */
  async checkHealth(): Promise<void> {
    const entries = [...this.entries.values()].filter(
      (entry) => entry.child !== undefined && (entry.state === "running" || entry.state === "unhealthy"),
    );
    await Promise.all(
      entries.map(async (entry) => {
        const pid = entry.child?.pid;
        const reason = !(await this.healthy(entry))
          ? "/readyz does not answer"
          : workspaceLockHolder(entry.canonical) !== pid
            ? "the workspace lock does not name its pid"
            : undefined;
        if (entry.child?.pid !== pid || (entry.state !== "running" && entry.state !== "unhealthy")) return;
        if (reason !== undefined && entry.state === "running") {
          entry.state = "unhealthy";
          entry.lastError = `unhealthy: ${reason}`;
          this.logger.warn({ workspace: entry.canonical, pid, reason }, "hub: AppServer unhealthy");
          this.events.emit("appserver.unhealthy", entry.canonical, { pid, reason });
        } else if (reason === undefined && entry.state === "unhealthy") {
          entry.state = "running";
          this.events.emit("appserver.running", entry.canonical, { pid, port: entry.port });
        }
      }),
    );
  }

  list(): HubAppServer[] {
    return [...this.entries.values()].map((entry) => this.describe(entry, entry.workspacePath));
  }

  /** What the hub knows about the workspace, without starting anything. */
  async inspect(workspacePath: string): Promise<HubAppServer> {
    const canonical = await canonicalWorkspace(workspacePath);
    return this.describe(this.entries.get(canonical) ?? this.blank(workspacePath, canonical), workspacePath);
  }

  async stop(workspacePath: string): Promise<HubAppServer> {
    const canonical = await canonicalWorkspace(workspacePath);
    return this.serially(canonical, async () => {
      const entry = this.entries.get(canonical);
      if (entry === undefined) return this.describe(this.blank(workspacePath, canonical), workspacePath);
      await this.stopProcess(entry);
      entry.state = "stopped";
      return this.describe(entry, workspacePath);
    });
  }

  /** Stops every server (the hub is leaving). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => this.stopProcess(entry)));
  }

  private blank(workspacePath: string, canonical: string): Managed {
    return {
      workspacePath,
      canonical,
      state: "stopped",
      child: undefined,
      port: undefined,
      token: undefined,
      exitCode: null,
      lastError: null,
      stderr: [],
      exited: undefined,
    };
  }

  private async start(entry: Managed): Promise<void> {
    const port = await freeLoopbackPort();
    const token = randomBytes(32).toString("base64url");
    entry.state = "starting";
    entry.port = port;
    entry.token = token;
    this.events.emit("port.allocated", entry.canonical, { port });
    const child = spawn(
      this.launch.command,
      [...this.launch.args, "app-server", "--listen", `ws://127.0.0.1:${port}`, ...this.launch.extraArgs],
      {
        cwd: entry.canonical,
        env: { ...this.launch.env, NEXO_APPSERVER_TOKEN: token, NEXO_HUB_MANAGED: "1" },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    entry.child = child;
    this.events.emit("appserver.starting", entry.canonical, { pid: child.pid ?? null });
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      entry.stderr.push(...text.split("\n").filter((line) => line.length > 0));
      entry.stderr.splice(0, Math.max(0, entry.stderr.length - STDERR_LINES));
    });
    entry.exited = new Promise((resolve) => {
      child.once("close", (code) => {
        entry.exitCode = code;
        if (entry.child === child) {
          entry.child = undefined;
          if (entry.state !== "stopping" && entry.state !== "stopped") entry.state = "exited";
        }
        this.events.emit("appserver.exited", entry.canonical, { pid: child.pid ?? null, exitCode: code });
        resolve();
      });
      child.once("error", (error) => {
        entry.lastError = `cannot start nexo app-server: ${error.message}`;
        resolve();
      });
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline && entry.child === child) {
      if ((await readyz(port)) && workspaceLockHolder(entry.canonical) === child.pid) {
        entry.state = "running";
        this.logger.info({ workspace: entry.canonical, pid: child.pid, port }, "hub: AppServer running");
        this.events.emit("appserver.running", entry.canonical, { pid: child.pid ?? null, port });
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const why =
      entry.child === child
        ? `it was not ready within ${START_TIMEOUT_MS / 1000} s`
        : `it exited with status ${entry.exitCode}`;
    await this.stopProcess(entry);
    entry.state = "exited";
    entry.lastError = entry.lastError ?? `nexo app-server did not start for ${entry.canonical}: ${why}`;
    throw new HubError("appServerStartFailed", 500, entry.lastError, {
      recentStderr: entry.stderr.join("\n"),
    });
  }

  private async healthy(entry: Managed): Promise<boolean> {
    return entry.child !== undefined && entry.port !== undefined && (await readyz(entry.port));
  }

  private async stopProcess(entry: Managed): Promise<void> {
    const child = entry.child;
    if (child === undefined) return;
    entry.state = "stopping";
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await entry.exited;
    clearTimeout(killer);
    entry.state = "stopped";
  }

  private describe(entry: Managed, workspacePath: string): HubAppServer {
    const running = entry.state === "running" && entry.port !== undefined && entry.token !== undefined;
    const url = running ? `ws://127.0.0.1:${entry.port}/ws?token=${entry.token}` : undefined;
    return {
      workspacePath,
      canonicalWorkspacePath: entry.canonical,
      state: entry.state,
      pid: entry.child?.pid ?? null,
      endpoints: url === undefined ? {} : { appServerWebSocket: url },
      serviceStatus: {
        appServerWebSocket: url === undefined ? { state: entry.state } : { state: "running", url },
      },
      serverVersion: this.version,
      startedByHub: entry.child !== undefined || entry.exitCode !== null,
      exitCode: entry.exitCode,
      lastError: entry.lastError,
      recentStderr: entry.stderr.length > 0 ? entry.stderr.join("\n") : null,
    };
  }

  /** Runs `task` after every earlier task for the same workspace. */
  private serially<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return next;
  }
}

async function canonicalWorkspace(path: string): Promise<string> {
  try {
    const canonical = await realpath(path);
    if ((await stat(canonical)).isDirectory()) return canonical;
  } catch {
    // Reported below, with the path as given.
  }
  throw new HubError("workspaceNotFound", 404, `workspace ${path} is not a directory`);
}

/** A port nothing listens on now (bound and released; the server binds it right after). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (error) =>
      reject(new HubError("portUnavailable", 500, `no free port: ${error.message}`)),
    );
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether the server on `port` answers `/readyz` (no token needed) within the probe timeout. */
async function readyz(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`, {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    return response.ok;
  } catch {
    return false;
  }
}
