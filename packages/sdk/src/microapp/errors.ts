/**
 * The errors of a microapp, in three families:
 * - a tool handler throws `ToolFailure` when the tool ran and failed: the daemon gets the result
 *   `{error: message}` and the agent reads the message (a failed call to the daemon the handler
 *   does not catch is answered the same way, saying which call failed and why). The contract's
 *   coded errors
 *   (`MicroappToolInputInvalidError` -32001, `MicroappBackendUnavailableError` -32002,
 *   `MicroappRateLimitedError` -32003, `MicroappExternalAuthError` -32004,
 *   `MicroappInternalError` -32099) answer with a JSON-RPC error instead; any other exception
 *   becomes -32099 with its message, its stack on stderr;
 * - the microapp's own calls to the daemon (admin RPC, `nexo/dispatch`) reject with the daemon's
 *   error decoded: `CapabilityNotGrantedError` ({capability, method, microappId}),
 *   `InvalidParamsError`, `MethodNotFoundError`, `InternalError`, or `TimeoutError`,
 *   `ConnectionClosedError`, `MalformedReplyError` when no usable answer came;
 * - `MicroappDefinitionError`: a tool, hook or option breaking a rule, thrown where it is defined.
 */
import { PluginError } from "../errors.js";

/** The tool ran and failed; the agent sees `message` (the `{error}` result of tools/call). */
export class ToolFailure extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ToolFailure";
  }
}

/** A tool, hook or option that breaks a rule of the microapp contract, caught where it is defined. */
export class MicroappDefinitionError extends PluginError {
  constructor(message: string) {
    super(message);
    this.name = "MicroappDefinitionError";
  }
}

export {
  CapabilityNotGrantedError,
  ConnectionClosedError,
  InternalError,
  InvalidParamsError,
  MalformedReplyError,
  MethodNotFoundError,
  MicroappBackendUnavailableError,
  MicroappError,
  MicroappExternalAuthError,
  MicroappInternalError,
  MicroappRateLimitedError,
  MicroappToolInputInvalidError,
  RequestCancelledError,
  RpcError,
  TimeoutError,
} from "@nexo/wire";
