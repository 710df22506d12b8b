/**
 * The microapp host's typed failures, each with a stable `code` for the status, `nexo microapp
 * check --json` and the tests. An `initialize` reply that is an error or not an initialize result
 * is fatal (a restart would get the same answer): the supervisor kills the child and marks the
 * microapp failed instead of crash-looping.
 */
import { FatalStartError } from "../supervisor-types.js";

/** The microapp answered `initialize` with an error, or with something that is not its result. */
export class MicroappHandshakeError extends FatalStartError {
  readonly code = "microapp_handshake_invalid" as const;
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`initialize failed: ${detail}`, options);
    this.name = "MicroappHandshakeError";
  }
}

/** No `initialize` reply within the microapp's timeout. Not fatal: the restart policy decides. */
export class MicroappInitTimeoutError extends Error {
  readonly code = "microapp_init_timeout" as const;
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`no initialize reply within ${timeoutMs} ms (extensions.yaml timeout_secs)`);
    this.name = "MicroappInitTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** A call was made while the microapp has no running, initialized process. */
export class MicroappUnavailableError extends Error {
  readonly code = "microapp_unavailable" as const;
  readonly microappId: string;
  readonly state: string;
  constructor(microappId: string, state: string) {
    super(`microapp "${microappId}" is not running (state: ${state})`);
    this.name = "MicroappUnavailableError";
    this.microappId = microappId;
    this.state = state;
  }
}

/**
 * The operator did not grant a capability the microapp's plugin.toml requires: the microapp is
 * never spawned. Names each missing capability.
 */
export class MicroappRefusedError extends Error {
  readonly code = "microapp_refused" as const;
  readonly microappId: string;
  readonly missing: readonly string[];
  constructor(microappId: string, missing: readonly string[]) {
    super(
      `microapp ${microappId} is refused: its plugin.toml requires ${missing.join(", ")}, which extensions.yaml does not grant (capabilities_grant)`,
    );
    this.name = "MicroappRefusedError";
    this.microappId = microappId;
    this.missing = missing;
  }
}
