/**
 * One MCP stdio server run by the extension supervisor, the launcher every child of the daemon
 * goes through (see stdio-transport.ts for why).
 *
 * The first attempt is what `McpConnection.open` waits for and reports: when it fails (the
 * server exits, the handshake fails or times out) the server is stopped and the failure is
 * final, as a connect error the operator can act on. Once a server has connected, a crash is
 * handled like a plugin's: the supervisor restarts it after a backoff and runs the handshake
 * again on the new process, or gives up when it crash-loops (mcp.yaml's `restart:`, the same keys
 * and defaults as plugins.yaml's).
 */
import type { ProcessGroupRegistry } from "../../process/registry.js";
import { settlesWithin } from "../bounded-wait.js";
import type { RestartPolicy } from "../restart-policy.js";
import {
  type ExitEvent,
  FatalStartError,
  type Incarnation,
  type SpawnSpec,
  Supervisor,
  type SupervisorLogger,
} from "../supervisor.js";
import { IncarnationTransport } from "./stdio-transport.js";

/** The stderr lines kept per server, across its restarts. */
export const STDERR_TAIL_LINES = 20;
/** How long a server gets to exit after stdin closes, and again after SIGTERM. */
export const DEFAULT_CLOSE_GRACE_MS = 2000;
/** How long a server whose stdout ended gets to exit before its failed start is reported. */
export const EXIT_AFTER_EOF_WAIT_MS = 2_000;
/** The supervisor's own bound on a start step, past the handshake's deadline (which fires first). */
const START_STEP_MARGIN_MS = 5_000;

export interface StdioServerOptions {
  /** The server's name in mcp.yaml; its processes are registered as `mcp:<name>`. */
  readonly name: string;
  readonly spec: SpawnSpec;
  readonly restart: Partial<RestartPolicy>;
  readonly startupTimeoutMs: number;
  readonly closeGraceMs?: number;
  readonly logger: SupervisorLogger;
  readonly registry?: ProcessGroupRegistry;
  /**
   * Runs the MCP handshake (and first tool listing) over a new process; resolves when it is ready
   * for calls. `signal` aborts when the process goes away.
   */
  readonly handshake: (transport: IncarnationTransport, signal: AbortSignal, first: boolean) => Promise<void>;
  /** A connected server crashed and will be started again after `delayMs`. */
  readonly onRestarting: (reason: string, delayMs: number) => void;
  /** A restarted server completed its handshake. */
  readonly onRestored: () => void;
  /** The server stopped for good (crash loop, or restarts are off). */
  readonly onFailed: (reason: string) => void;
}

export class StdioServer {
  private readonly supervisor: Supervisor;
  private connectedOnce = false;
  private lastExitSeen: ExitEvent | undefined;

  constructor(private readonly options: StdioServerOptions) {
    const grace = options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
    this.supervisor = new Supervisor({
      id: `mcp:${options.name}`,
      spawn: options.spec,
      restart: options.restart,
      onStarted: (incarnation) => this.startStep(incarnation),
      // MCP's stdio shutdown: close the server's stdin and wait; then SIGTERM, wait, SIGKILL.
      shutdown: (incarnation) => {
        incarnation.stdin.end();
        return incarnation.exited;
      },
      termAfterShutdown: true,
      gracefulTimeoutMs: grace,
      exitGraceMs: grace,
      startTimeoutMs: options.startupTimeoutMs + START_STEP_MARGIN_MS,
      stderrTailLines: STDERR_TAIL_LINES,
      logger: options.logger,
      ...(options.registry === undefined ? {} : { registry: options.registry }),
    });
    this.supervisor.on("exit", (exit) => {
      this.lastExitSeen = exit;
    });
    this.supervisor.on("state", (change) => {
      if (change.to === "backoff" && this.connectedOnce) {
        this.options.onRestarting(change.reason ?? "it went away", change.delayMs ?? 0);
      }
    });
    this.supervisor.on("running", () => {
      if (this.connectedOnce) this.options.onRestored();
      this.connectedOnce = true;
    });
    this.supervisor.on("failed", (failure) => {
      if (this.connectedOnce) this.options.onFailed(failure.reason);
    });
  }

  /**
   * Starts the server and waits for its first handshake only. Rejects when that attempt failed;
   * the server is then stopped (nothing is left running) and `lastExit` says how it ended.
   */
  async start(): Promise<void> {
    try {
      await this.supervisor.start({ firstAttemptOnly: true });
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Stops the server and everything it started; waits until they are gone. */
  stop(): Promise<void> {
    return this.supervisor.stop({ reason: "the MCP server is closed" });
  }

  /** The live process's pid (the leader of its process group). */
  get pid(): number | undefined {
    return this.supervisor.incarnation?.pid;
  }

  /** How the last process ended, when it ended by itself (undefined if it was stopped or runs). */
  get lastExit(): ExitEvent | undefined {
    const exit = this.lastExitSeen;
    return exit === undefined || exit.requested ? undefined : exit;
  }

  /** The last stderr lines, across restarts, oldest first. */
  get stderrTail(): string[] {
    return this.supervisor.stderrTail();
  }

  /** The live process, while there is one. */
  get incarnation(): Incarnation | undefined {
    return this.supervisor.incarnation;
  }

  private async startStep(incarnation: Incarnation): Promise<void> {
    const first = !this.connectedOnce;
    const transport = new IncarnationTransport(incarnation);
    try {
      await this.options.handshake(transport, incarnation.signal, first);
    } catch (error) {
      // The server closed its stdout: it is exiting. Let the supervisor see the exit first, so the
      // failure is reported as the exit it is (code, stderr) rather than as a closed connection.
      if (transport.closed) await settlesWithin(incarnation.exited, EXIT_AFTER_EOF_WAIT_MS);
      // A server that never connected is reported as it is; restarting it would only hide why.
      if (first) throw new FatalStartError((error as Error).message, { cause: error });
      throw error;
    }
  }
}
