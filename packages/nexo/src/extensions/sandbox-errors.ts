/**
 * Why a plugin was refused a sandboxed (or unsandboxed) start. Each refusal is its own class with a
 * stable `code`, so the plugin host and `nexo plugin check` can report it without matching text.
 * None of these is ever "warn and run anyway": a refused plugin does not start.
 */

export type SandboxErrorCode =
  | "sandbox_config_invalid"
  | "sandbox_required"
  | "sandbox_host_network_not_allowed"
  | "sandbox_path_rejected"
  | "sandbox_unavailable";

export class SandboxError extends Error {
  readonly code: SandboxErrorCode;
  constructor(code: SandboxErrorCode, message: string) {
    super(message);
    this.name = "SandboxError";
    this.code = code;
  }
}

/** An operator knob (NEXO_PLUGIN_SANDBOX_*) holds a value that is neither on nor off. */
export class SandboxConfigError extends SandboxError {
  readonly variable: string;
  constructor(variable: string, value: string) {
    super(
      "sandbox_config_invalid",
      `${variable}=${JSON.stringify(value)} is not understood; use 1 (on) or 0 (off)`,
    );
    this.name = "SandboxConfigError";
    this.variable = variable;
  }
}

/** NEXO_PLUGIN_SANDBOX_REQUIRE=1 and the manifest does not enable the sandbox. */
export class SandboxRequiredError extends SandboxError {
  constructor() {
    super(
      "sandbox_required",
      "NEXO_PLUGIN_SANDBOX_REQUIRE=1 refuses plugins without [plugin.sandbox] enabled = true",
    );
    this.name = "SandboxRequiredError";
  }
}

/** `network = "host"` without the operator's NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW=1. */
export class SandboxHostNetworkError extends SandboxError {
  constructor() {
    super(
      "sandbox_host_network_not_allowed",
      '[plugin.sandbox] network = "host" needs the operator to set NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW=1',
    );
    this.name = "SandboxHostNetworkError";
  }
}

/** A bind path is relative, missing, escapes the state dir, or touches the hard denylist. */
export class SandboxPathError extends SandboxError {
  /** The path as the manifest (or the host, for automatic binds) wrote it. */
  readonly path: string;
  constructor(path: string, problem: string) {
    super("sandbox_path_rejected", `sandbox path "${path}": ${problem}`);
    this.name = "SandboxPathError";
    this.path = path;
  }
}

/** The sandbox is enabled but cannot be provided here (no bwrap, not Linux). */
export class SandboxUnavailableError extends SandboxError {
  constructor(detail: string) {
    super(
      "sandbox_unavailable",
      `the plugin sandbox is enabled but unavailable: ${detail}; refusing to start it unsandboxed`,
    );
    this.name = "SandboxUnavailableError";
  }
}
