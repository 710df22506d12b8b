/**
 * The AppServer's error replies. Each is `{code, message, data: {detail}}`: `message` is the short
 * name clients switch on (as the reference words it), `detail` the human explanation DotCraft
 * Desktop shows (`<message>: <detail>`). The codes are declared once in the wire schemas.
 */
import { RpcError } from "@nexo/wire";
import { AppServerErrorCode as Code } from "@nexo/wire/schemas/appserver";

function error(code: number, message: string, detail: string): RpcError {
  return new RpcError(code, message, { detail });
}

export const appServerErrors = {
  notInitialized: (method: string) =>
    error(
      Code.notInitialized,
      "Not initialized",
      `'${method}' was sent before 'initialize'; the first request on every connection must be 'initialize'`,
    ),
  alreadyInitialized: () =>
    error(
      Code.alreadyInitialized,
      "Already initialized",
      "this connection is already initialized; reconnect to initialize again",
    ),
  awaitingInitialized: (method: string) =>
    error(
      Code.invalidRequest,
      "Invalid request",
      `Server is awaiting the 'initialized' notification before '${method}'; send it right after the initialize response`,
    ),
  invalidParams: (detail: string) => error(Code.invalidParams, "Invalid params", detail),
  methodNotFound: (method: string) =>
    error(Code.methodNotFound, `Method not found: ${method}`, `this server does not implement '${method}'`),
  internal: (detail: string) => error(Code.internalError, "Internal error", detail),
  overloaded: (limit: number) =>
    error(
      Code.serverOverloaded,
      "Server overloaded; retry later.",
      `this connection already has ${limit} requests in flight; retry with exponential backoff and jitter`,
    ),
  threadNotFound: (threadId: string) =>
    error(
      Code.threadNotFound,
      `Thread not found: ${threadId}`,
      `no thread with id '${threadId}' exists in this workspace (it may have been deleted)`,
    ),
  threadNotActive: (threadId: string, status: string) =>
    error(
      Code.threadNotActive,
      `Thread is not active: ${threadId}`,
      `thread '${threadId}' is ${status}; resume it (thread/resume or thread/unarchive) before sending input`,
    ),
  turnInProgress: (threadId: string, turnId: string) =>
    error(
      Code.turnInProgress,
      `A turn is already in progress on thread: ${threadId}`,
      `turn '${turnId}' is still running; wait for turn/completed, queue the input with turn/enqueue, or interrupt it`,
    ),
  turnNotFound: (turnId: string, threadId: string) =>
    error(Code.turnNotFound, `Turn not found: ${turnId}`, `thread '${threadId}' has no turn '${turnId}'`),
  turnNotRunning: (turnId: string, status: string) =>
    error(Code.turnNotRunning, `Turn is not running: ${turnId}`, `turn '${turnId}' is already ${status}`),
  approvalTimeout: (seconds: number) =>
    error(
      Code.approvalTimeout,
      "Approval request timed out",
      `nobody answered the approval request within ${seconds} s`,
    ),
} as const;
