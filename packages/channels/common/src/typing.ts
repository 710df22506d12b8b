/**
 * "typing…" in a conversation while the agent works on its message. Every chat service shows the
 * indicator for a few seconds after each signal, so it is sent again every `everyMs` until the
 * reply goes out to that conversation (`stop`), or `forAtMostMs` pass: a turn that never answers
 * must not type forever. `hide` (where the service has an explicit "stopped typing", e.g.
 * WhatsApp's paused) is sent when a conversation that was typing stops. Failures are logged and
 * otherwise ignored: the indicator is a courtesy.
 */

export interface TypingOptions {
  /** Shows the indicator once; undefined when the channel is not connected right now. */
  show: (conversation: string) => Promise<unknown> | undefined;
  /** Takes it down, where the service has such a signal. */
  hide?: (conversation: string) => Promise<unknown> | undefined;
  /** How often it is shown again: a little less than the service keeps it up. */
  everyMs: number;
  /** When it stops by itself (default two minutes). */
  forAtMostMs?: number;
  log: (line: string) => void;
}

const DEFAULT_FOR_AT_MOST_MS = 120_000;

export class TypingIndicator {
  private readonly conversations = new Map<string, NodeJS.Timeout>();

  constructor(private readonly options: TypingOptions) {}

  /** Starts (or restarts) the indicator in `conversation`. */
  start(conversation: string): void {
    this.clear(conversation);
    const until = Date.now() + (this.options.forAtMostMs ?? DEFAULT_FOR_AT_MOST_MS);
    const renew = () => {
      // A round of an interval already cleared (a restart) must not touch its successor.
      if (this.conversations.get(conversation) !== timer) return;
      if (Date.now() > until) this.stop(conversation);
      else this.signal(this.options.show, conversation);
    };
    this.signal(this.options.show, conversation);
    const timer: NodeJS.Timeout = setInterval(renew, this.options.everyMs);
    timer.unref();
    this.conversations.set(conversation, timer);
  }

  /** Stops it in `conversation` (its reply went out); nothing when it was not typing there. */
  stop(conversation: string): void {
    if (!this.clear(conversation)) return;
    if (this.options.hide !== undefined) this.signal(this.options.hide, conversation);
  }

  /** Stops it everywhere without signalling (the channel is disconnecting). */
  stopAll(): void {
    for (const conversation of [...this.conversations.keys()]) this.clear(conversation);
  }

  /** Whether `conversation` shows the indicator now. */
  isTyping(conversation: string): boolean {
    return this.conversations.has(conversation);
  }

  private clear(conversation: string): boolean {
    const timer = this.conversations.get(conversation);
    if (timer === undefined) return false;
    clearInterval(timer);
    this.conversations.delete(conversation);
    return true;
  }

  private signal(send: (conversation: string) => Promise<unknown> | undefined, conversation: string): void {
    send(conversation)?.catch((error: Error) =>
      this.options.log(`typing indicator in ${conversation}: ${error.message}`),
    );
  }
}
