/**
 * Where a Slack conversation lives, as one string nexo's router can key sessions on and hand back
 * as a reply's `to`: a conversation id (`D…` a direct message, `C…`/`G…` a channel), plus the
 * thread's root timestamp when the conversation is a thread — `C0123:1700000000.000100`. Each
 * thread is its own nexo conversation; a direct message outside threads is one conversation.
 */

export interface SlackAddress {
  channel: string;
  threadTs: string | undefined;
}

const ADDRESS = /^([CDG][A-Z0-9]{2,30})(?::(\d{6,12}\.\d{1,8}))?$/;

export function formatAddress({ channel, threadTs }: SlackAddress): string {
  return threadTs === undefined ? channel : `${channel}:${threadTs}`;
}

/** The address a `to` names, or undefined when it is not one. */
export function parseAddress(to: string): SlackAddress | undefined {
  const match = ADDRESS.exec(to.trim());
  if (match === null) return undefined;
  return { channel: match[1]!, threadTs: match[2] };
}
