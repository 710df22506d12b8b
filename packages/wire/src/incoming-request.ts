/**
 * What the peer keeps for a request it is serving (the request's context and the list of those
 * running), and the reply to a message it had to drop.
 */
import { InvalidRequestError, ParseError, type RpcError } from "./errors.js";
import type { JsonRpcId, RequestContext } from "./peer-types.js";
import type { TransportProblem } from "./transport.js";

/**
 * The context of one incoming request. Its AbortController is created only when a handler asks
 * for the signal: creating one per request cost about a tenth of the echo benchmark's CPU.
 */
export class IncomingRequest implements RequestContext {
  private controller: AbortController | undefined = undefined;
  private abortedWith: Error | undefined = undefined;
  /** Its neighbours in the peer's RunningRequests while its handler runs (see there). */
  previousRunning: IncomingRequest | undefined = undefined;
  nextRunning: IncomingRequest | undefined = undefined;
  isRunning = false;

  constructor(
    private readonly peer: { notify(method: string, params?: unknown): Promise<void> },
    readonly id: JsonRpcId | null,
    readonly method: string,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    this.abortedWith = reason;
    this.controller?.abort(reason);
  }

  sendDelta(method: string, params: Record<string, unknown>): Promise<void> {
    return this.peer.notify(method, { request_id: this.id, ...params });
  }
}

/**
 * The requests whose handler is running, in arrival order: a list threaded through the requests
 * themselves. A Set would store an identity hash on every request it holds (V8 creates one for
 * each new key object) and grow and rehash its table as requests come and go; here adding and
 * removing a request is a few field writes, and removing one that is no longer listed (its
 * handler settled after the peer closed) does nothing.
 */
export class RunningRequests {
  private first: IncomingRequest | undefined = undefined;
  private last: IncomingRequest | undefined = undefined;
  size = 0;

  add(request: IncomingRequest): void {
    request.isRunning = true;
    request.previousRunning = this.last;
    if (this.last) this.last.nextRunning = request;
    else this.first = request;
    this.last = request;
    this.size++;
  }

  delete(request: IncomingRequest): void {
    if (!request.isRunning) return;
    request.isRunning = false;
    const { previousRunning, nextRunning } = request;
    if (previousRunning) previousRunning.nextRunning = nextRunning;
    else this.first = nextRunning;
    if (nextRunning) nextRunning.previousRunning = previousRunning;
    else this.last = previousRunning;
    request.previousRunning = undefined;
    request.nextRunning = undefined;
    this.size--;
  }

  /**
   * Empties the list, then aborts each request that was on it, oldest first. Emptied first: an
   * abort listener may settle a handler or close things, and nothing it does touches the walk.
   */
  abortAll(reason: Error): void {
    let request = this.first;
    this.first = undefined;
    this.last = undefined;
    this.size = 0;
    while (request) {
      const next = request.nextRunning;
      request.isRunning = false;
      request.previousRunning = undefined;
      request.nextRunning = undefined;
      request.abort(reason);
      request = next;
    }
  }
}

/** The reply a dropped message gets under the `reply` policy. */
export function problemError(problem: TransportProblem): RpcError {
  switch (problem.kind) {
    case "oversize":
      return new InvalidRequestError(
        `frame of ${problem.bytes} bytes exceeds the ${problem.maxBytes}-byte limit`,
        { bytes: problem.bytes, max_bytes: problem.maxBytes },
      );
    case "invalid_utf8":
      return new ParseError("frame is not valid UTF-8");
    case "parse_error":
      return new ParseError("parse error", { detail: problem.detail });
    case "binary_message":
      return new InvalidRequestError("binary frames are not supported: send each message as a text frame");
  }
}
