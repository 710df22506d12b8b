/**
 * A real nats-server for tests: started as a child on a free loopback port, waited for until it
 * greets a TCP client with INFO, stopped (and restartable on the same port) on demand.
 *
 * Missing nats-server is an error, not a reason to skip: CI installs it, and a NATS test that
 * silently skips proves nothing.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createConnection, createServer } from "node:net";
import { delimiter, join } from "node:path";

const WELL_KNOWN = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The nats-server binary: $NATS_SERVER_BIN when set (and then nothing else), else the first on
 * $PATH, else where Debian and manual installs put it.
 */
export function findNatsServer(
  env: NodeJS.ProcessEnv = process.env,
  wellKnown: readonly string[] = WELL_KNOWN,
): string {
  const explicit = env.NATS_SERVER_BIN;
  if (explicit !== undefined && explicit !== "") {
    if (isExecutable(explicit)) return explicit;
    throw new Error(`NATS_SERVER_BIN=${explicit} is not an executable file`);
  }
  const candidates = [
    ...(env.PATH ?? "")
      .split(delimiter)
      .filter((dir) => dir !== "")
      .map((dir) => join(dir, "nats-server")),
    ...wellKnown,
  ];
  const found = candidates.find(isExecutable);
  if (found === undefined) {
    throw new Error(
      "nats-server not found: the NATS broker tests need a real server. Install it " +
        "(Debian/Ubuntu: apt-get install nats-server) or set NATS_SERVER_BIN to its path. " +
        `Looked in: ${candidates.join(", ")}`,
    );
  }
  return found;
}

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves when something on `port` greets a new connection with NATS's INFO line. */
function greetsWithInfo(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("data", (data) => done(data.toString("utf8").startsWith("INFO ")));
    socket.once("error", () => done(false));
  });
}

export class NatsServer {
  readonly binary: string;
  readonly port: number;
  private child: ChildProcess | undefined;
  private stderrTail = "";

  /** Extra command-line arguments, e.g. `["--user", "u", "--pass", "p"]`. */
  readonly args: readonly string[];

  private constructor(binary: string, port: number, args: readonly string[]) {
    this.binary = binary;
    this.port = port;
    this.args = args;
  }

  /** Starts a server on a free port and waits until it accepts clients. */
  static async start(args: readonly string[] = []): Promise<NatsServer> {
    const server = new NatsServer(findNatsServer(), await freePort(), args);
    await server.start();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** (Re)starts the server on its port. */
  async start(timeoutMs = 10_000): Promise<void> {
    if (this.running) return;
    this.stderrTail = "";
    const child = spawn(this.binary, ["-a", "127.0.0.1", "-p", String(this.port), ...this.args], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    this.child = child;
    // If the test process dies without calling stop, the server must not outlive it.
    const killOnExit = () => child.kill("SIGKILL");
    process.once("exit", killOnExit);
    child.once("exit", () => process.removeListener("exit", killOnExit));
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-4000);
    });
    let spawnError: Error | undefined;
    child.once("error", (error) => {
      spawnError = error;
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (spawnError !== undefined) throw new Error(`cannot run ${this.binary}: ${spawnError.message}`);
      if (!this.running) {
        throw new Error(
          `nats-server exited (${child.exitCode ?? child.signalCode}) during start:\n${this.stderrTail}`,
        );
      }
      if (await greetsWithInfo(this.port)) return;
      if (Date.now() > deadline) {
        await this.stop();
        throw new Error(
          `nats-server did not accept connections on ${this.port} within ${timeoutMs} ms:\n${this.stderrTail}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === undefined || !this.running) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(killer);
  }
}
