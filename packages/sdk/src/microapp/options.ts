/**
 * What a microapp gives `new Microapp(...)`, and what `initialize` hands it.
 */
type Awaitable<T> = T | Promise<T>;

/** The structural part of a zod schema `options.config` needs, so the SDK needs no zod of its own. */
export interface SafeParser<T> {
  safeParse(value: unknown):
    | { success: true; data: T }
    | {
        success: false;
        error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> };
      };
}

/** What the daemon said in `initialize`, after `config` passed the microapp's own check. */
export interface MicroappInit<Config = unknown> {
  /** The extensions.yaml key; equal to the microapp's id. */
  readonly extensionId: string;
  /** A directory the microapp owns for its persistent state (created if missing). */
  readonly stateDir: string;
  /** extensions.yaml `entries.<id>.config`, checked by `options.config` when given. */
  readonly config: Config;
}

export interface MicroappOptions<Config = unknown> {
  /**
   * The extension id: the key of the microapp's extensions.yaml entry and `[plugin] id` in its
   * plugin.toml. Every tool is named `<id>_<tool>`, the id's `-` written `_`.
   */
  id: string;
  /** Sent in the `initialize` reply. */
  version?: string;
  /**
   * Checks `initialize.params.config` (a zod schema fits: anything with `safeParse`). A config
   * that fails answers `initialize` with -32602 naming the fields, so the daemon logs why.
   */
  config?: SafeParser<Config>;
  /** Runs before `initialize` is answered (open a database in `stateDir`, …). A throw fails it. */
  onInitialize?(init: MicroappInit<Config>): Awaitable<void>;
  /** Runs before `shutdown` is answered, within `shutdownDrainTimeoutMs`. */
  onShutdown?(): Awaitable<void>;
  /** Timeout of each admin / dispatch call, ms. Default 30 000. */
  callTimeoutMs?: number;
  /**
   * How long shutdown waits for in-flight handlers, then for `onShutdown`, ms. Default 2000: both
   * together stay inside the 5 s the daemon gives the `shutdown` reply.
   */
  shutdownDrainTimeoutMs?: number;
  /**
   * Exit the process once stopped (after the `shutdown` reply, stdin EOF or a signal). Default
   * true: a microapp lives exactly as long as its daemon connection, whatever timers or sockets
   * it left open. `run()` resolves instead when false.
   */
  exitOnStop?: boolean;
  /** Divert `console.log` & co. to stderr so they cannot corrupt the protocol. Default true. */
  enableStdoutGuard?: boolean;
  /** Treat SIGTERM / SIGINT as "stop gracefully". Default true. */
  handleProcessSignals?: boolean;
  /** Largest frame read from stdin, bytes (newline excluded). Default 1 MiB. */
  maxFrameBytes?: number;
  /** Largest frame written to stdout; a larger reply becomes an error reply. Default 1 MiB. */
  maxOutgoingFrameBytes?: number;
}

export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
export const DEFAULT_MICROAPP_DRAIN_TIMEOUT_MS = 2_000;
