/**
 * The plugin host's own typed failures. Each carries a stable `code`, so the manager's status,
 * `nexo plugin check --json` and the tests branch on codes, never on message text.
 *
 * Handshake failures that a restart cannot cure (another plugin's id, a catalog that breaks the
 * manifest, a reply that is not an `initialize` result) extend the supervisor's FatalStartError:
 * the child is killed and the plugin is marked failed at once instead of crash-looping.
 */
import { FatalStartError } from "../supervisor-types.js";

export type PluginHostErrorCode =
  | "plugin_env_invalid"
  | "plugin_identity_mismatch"
  | "plugin_catalog_invalid"
  | "plugin_handshake_invalid"
  | "plugin_init_timeout"
  | "plugin_unavailable"
  | "plugin_protocol_error"
  | "plugin_shutdown_failed";

/** An operator env override (NEXO_PLUGIN_*_TIMEOUT_MS, …) holds an unusable value. */
export class PluginEnvError extends Error {
  readonly code = "plugin_env_invalid" as const;
  readonly variable: string;
  constructor(variable: string, value: string, problem: string) {
    super(`${variable}=${JSON.stringify(value)} ${problem}`);
    this.name = "PluginEnvError";
    this.variable = variable;
  }
}

/** The child answered `initialize` with another plugin's id (§4.1): possible impersonation. */
export class PluginIdentityError extends FatalStartError {
  readonly code = "plugin_identity_mismatch" as const;
  readonly expected: string;
  readonly got: string;
  constructor(expected: string, got: string) {
    super(
      `identity mismatch: the manifest declares plugin "${expected}" but the child answered initialize as "${got}"; refusing to load it`,
    );
    this.name = "PluginIdentityError";
    this.expected = expected;
    this.got = got;
  }
}

/** The advertised tool catalog breaks the rules of §4.1.1. */
export class PluginCatalogError extends FatalStartError {
  readonly code = "plugin_catalog_invalid" as const;
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`tool catalog rejected: ${problems.join("; ")}`);
    this.name = "PluginCatalogError";
    this.problems = problems;
  }
}

/** The `initialize` reply is an error or not the shape §4.1 defines. */
export class PluginHandshakeError extends FatalStartError {
  readonly code = "plugin_handshake_invalid" as const;
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`initialize failed: ${detail}`, options);
    this.name = "PluginHandshakeError";
  }
}

/**
 * No `initialize` reply within NEXO_PLUGIN_INIT_TIMEOUT_MS. Not fatal: a slow start may be
 * transient, so the restart policy decides.
 */
export class PluginInitTimeoutError extends Error {
  readonly code = "plugin_init_timeout" as const;
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`no initialize reply within ${timeoutMs} ms (NEXO_PLUGIN_INIT_TIMEOUT_MS)`);
    this.name = "PluginInitTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** A call was made while the plugin has no running, handshaken child (starting, restarting, stopped, failed). */
export class PluginUnavailableError extends Error {
  readonly code = "plugin_unavailable" as const;
  readonly pluginId: string;
  readonly state: string;
  constructor(pluginId: string, state: string) {
    super(`plugin "${pluginId}" is not running (state: ${state})`);
    this.name = "PluginUnavailableError";
    this.pluginId = pluginId;
    this.state = state;
  }
}

/** The child answered a host request with a result that is not the shape the contract defines. */
export class PluginProtocolError extends Error {
  readonly code = "plugin_protocol_error" as const;
  readonly method: string;
  constructor(method: string, detail: string) {
    super(`malformed ${method} reply: ${detail}`);
    this.name = "PluginProtocolError";
    this.method = method;
  }
}

/** The child answered `shutdown` with an error (§4.2: surfaced to the operator). */
export class PluginShutdownError extends Error {
  readonly code = "plugin_shutdown_failed" as const;
  constructor(detail: string) {
    super(`the plugin's shutdown handler failed: ${detail}`);
    this.name = "PluginShutdownError";
  }
}

/** Codes for the supervisor's and the peer's errors, which carry none of their own. */
const CODES_BY_NAME: Readonly<Record<string, string>> = {
  SupervisorFailedError: "plugin_failed",
  StartAbortedError: "plugin_stopped",
  TimeoutError: "timeout",
  ConnectionClosedError: "connection_closed",
  RequestCancelledError: "cancelled",
  FrameTooLargeError: "frame_too_large",
};

/** A short, stable code for any error the host reports: ours, the sandbox's, or the wire's. */
export function errorCodeOf(error: unknown): string {
  if (error !== null && typeof error === "object") {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" || typeof code === "number") return String(code);
    const name = (error as { name?: unknown }).name;
    if (typeof name === "string") return CODES_BY_NAME[name] ?? name;
  }
  return "unknown";
}
