/**
 * The vocabulary of the plugin host: its options, one handshaken incarnation (a session), what
 * its status reports, and the events it emits.
 */
import type { JsonRpcPeer } from "@nexo/wire";
import type { plugin } from "@nexo/wire/schemas";
import type { ProcessGroupRegistry } from "../../process/registry.js";
import type { LaunchInput } from "../launch.js";
import type { RestartPolicy } from "../restart-policy.js";
import type { FailureInfo, StateChange, SupervisorLogger, SupervisorState } from "../supervisor.js";
import type { ToolCatalog } from "./catalog.js";
import type { LoadedPluginManifest } from "./manifest.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The inbound line cap the SDKs apply; the host refuses to send them anything larger. */
export const PLUGIN_MAX_FRAME_BYTES = 1 << 20;

export interface PluginHostOptions {
  manifest: LoadedPluginManifest;
  /** The plugin's per-instance state root: HOME and `${state_dir}`; created (0700) if missing. */
  stateDir: string;
  /** The daemon's environment: sandbox knobs, NEXO_PLUGIN_*_TIMEOUT_MS, PATH. Default `process.env`. */
  env?: Env;
  /** Extra variables the operator gives this plugin (they win over the manifest's). */
  operatorEnv?: Readonly<Record<string, string>>;
  /** Names copied from the daemon's environment into the plugin's, when set there. */
  passthroughEnv?: readonly string[];
  /** Sent as `initialize.nexo_version`. Default: this nexo's version. */
  nexoVersion?: string;
  /** Sent as `initialize.host_features`: nexo's optional features served to this plugin. Default none. */
  hostFeatures?: readonly plugin.HostFeature[];
  /** Overrides the restart policy the manifest's `[plugin.supervisor]` asks for. */
  restart?: Partial<RestartPolicy>;
  /** How long `shutdown` may take to be acknowledged. Default 5 s. */
  shutdownTimeoutMs?: number;
  /** How long the child may take to exit after the acknowledgement before SIGKILL. Default 1 s. */
  exitGraceMs?: number;
  logger?: SupervisorLogger;
  processGroups?: ProcessGroupRegistry;
  /** For tests: how bwrap is found, and the platform the sandbox decision assumes. */
  findBwrap?: LaunchInput["findBwrap"];
  platform?: NodeJS.Platform;
}

/** One handshaken incarnation. */
export interface PluginSession {
  readonly incarnation: number;
  readonly pid: number;
  readonly peer: JsonRpcPeer;
  readonly serverVersion: string;
  readonly catalog: ToolCatalog;
  readonly warnings: readonly string[];
  /** nexo's optional channel features this incarnation advertised in its `initialize` reply. */
  readonly channelFeatures: ReadonlySet<plugin.ChannelFeature>;
}

export interface PluginErrorRecord {
  code: string;
  message: string;
  /** ISO time it happened. */
  at: string;
}

/** How the last child process ended; `signal: "SIGKILL"` after a stop means it had to be killed. */
export interface PluginExitRecord {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The host asked for this exit (stop, or tearing down a failed handshake). */
  requested: boolean;
}

export interface PluginHostStatus {
  id: string;
  version: string;
  state: SupervisorState;
  pid: number | undefined;
  /** When the running process finished its handshake; undefined while none is running. */
  startedAt: Date | undefined;
  /** How many times the child was started again after the first start. */
  restarts: number;
  sandboxed: boolean | undefined;
  serverVersion: string | undefined;
  tools: string[];
  warnings: string[];
  lastError: PluginErrorRecord | undefined;
  lastExit: PluginExitRecord | undefined;
  stderrTail: string[];
  /** Unusable frames received from the child, by kind (oversize, parse_error, …). */
  protocolProblems: Record<string, number>;
}

export interface PluginHostEvents {
  /** A new incarnation finished its handshake and is running. */
  ready: [PluginSession];
  state: [StateChange];
  failed: [FailureInfo];
}

/** Installs handlers on a fresh peer; called once per incarnation, before `initialize`. */
export type PeerAttacher = (peer: JsonRpcPeer) => void;
