/**
 * The vocabulary of the microapp host: its options, one initialized incarnation (a session), what
 * its status reports and the events it emits.
 */
import type { JsonRpcPeer } from "@nexo/wire";
import type { LaunchInput } from "../launch.js";
import type { ProcessGroupRegistry } from "../reaper.js";
import type { RestartPolicy } from "../restart-policy.js";
import type { FailureInfo, StateChange, SupervisorLogger, SupervisorState } from "../supervisor.js";
import type { MicroappCatalog, MicroappHooks } from "./catalog.js";
import type { MicroappDefinition } from "./definition.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Frames are at most 1 MiB each way, as for plugins: a longer line is dropped and counted. */
export const MICROAPP_MAX_FRAME_BYTES = 1 << 20;

/** The contract's deadlines: `shutdown` answered within 5 s; SIGKILL 10 s after it was sent. */
export const MICROAPP_SHUTDOWN_ACK_MS = 5_000;
export const MICROAPP_KILL_AFTER_MS = 10_000;

/**
 * Crash → restart after 1 s, doubling to 16 s; more than 5 crashes within 5 minutes and the
 * microapp is marked failed (the reference daemon's numbers).
 */
export const MICROAPP_RESTART_POLICY: RestartPolicy = {
  respawn: true,
  maxRestarts: 5,
  windowMs: 300_000,
  initialDelayMs: 1_000,
  maxDelayMs: 16_000,
  factor: 2,
  jitter: 0.2,
};

export interface MicroappHostOptions {
  definition: MicroappDefinition;
  /** The microapp's own directory for persistent state: `initialize.state_dir`, HOME. Created 0700. */
  stateDir: string;
  /** The daemon's environment: sandbox knobs, PATH, the http_server token variable. Default `process.env`. */
  env?: Env;
  /** Overrides MICROAPP_RESTART_POLICY key by key (tests shorten the backoff). */
  restart?: Partial<RestartPolicy>;
  /** Default MICROAPP_SHUTDOWN_ACK_MS. */
  shutdownAckMs?: number;
  /** Default MICROAPP_KILL_AFTER_MS. */
  killAfterMs?: number;
  logger?: SupervisorLogger;
  processGroups?: ProcessGroupRegistry;
  findBwrap?: LaunchInput["findBwrap"];
  platform?: NodeJS.Platform;
}

/** One initialized incarnation. `catalog` is replaced when `tools/list` answers differently. */
export interface MicroappSession {
  readonly incarnation: number;
  readonly pid: number;
  readonly peer: JsonRpcPeer;
  readonly version: string | undefined;
  catalog: MicroappCatalog;
  readonly hooks: MicroappHooks;
  /** The exact text of the last tools/list (or initialize) tools array, for the stability check. */
  catalogText: string;
}

export interface MicroappErrorRecord {
  code: string;
  message: string;
  /** ISO time it happened. */
  at: string;
}

export interface MicroappExitRecord {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The host asked for this exit (stop, or tearing down a failed handshake). */
  requested: boolean;
}

export interface MicroappHostStatus {
  id: string;
  state: SupervisorState;
  pid: number | undefined;
  /** How many times the child was started again after the first start. */
  restarts: number;
  sandboxed: boolean | undefined;
  version: string | undefined;
  tools: string[];
  hooks: string[];
  /** Rejected tools, ignored hooks. */
  warnings: string[];
  lastError: MicroappErrorRecord | undefined;
  lastExit: MicroappExitRecord | undefined;
  stderrTail: string[];
  /** Unusable frames received from the child, by kind (oversize, parse_error, …). */
  protocolProblems: Record<string, number>;
}

export interface MicroappHostEvents {
  /** A new incarnation answered `initialize` and is running. */
  ready: [MicroappSession];
  /** `tools/list` answered a catalogue different from the one before. */
  tools: [MicroappSession];
  state: [StateChange];
  failed: [FailureInfo];
}

/** Installs handlers on a fresh peer; called once per incarnation, before `initialize`. */
export type PeerAttacher = (peer: JsonRpcPeer) => void;
