/**
 * Why an operator-takeover call was refused, typed so each door maps them to its own codes (the
 * admin RPC: not implemented -32601, not paused -32004 `not_paused`, bad input -32602).
 */

/** A scope kind or action the daemon accepts on the wire but does not serve yet. */
export class TakeoverNotImplementedError extends Error {
  override readonly name = "TakeoverNotImplementedError";
}

/** An intervention on a conversation the agent is still running: two parties would answer. */
export class NotPausedError extends Error {
  override readonly name = "NotPausedError";
  constructor() {
    super("not_paused: the scope is not paused; pause it before intervening");
  }
}

/** The call's own content is wrong (reason is a stable code for it). */
export class TakeoverInputError extends Error {
  override readonly name = "TakeoverInputError";
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(`${reason}: ${message}`);
  }
}
