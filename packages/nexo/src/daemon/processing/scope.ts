/**
 * How an operator names a conversation: the admin RPC's `conversation` scope
 * `{agent_id, channel, account_id, contact_id}` is the router's session key spelled on the wire —
 * `channel` is `<kind>` or `<kind>.<instance>` (as bindings and sessions spell it), `account_id`
 * the account of ours the person wrote to, or NO_ACCOUNT when the channel names none, and
 * `contact_id` the person. Both sides reduce to one key string, so the router's check is a lookup.
 */
import type { admin } from "@nexo/wire/schemas";
import type { Session } from "../../store/index.js";
import type { SessionKey } from "../routing/router.js";

export type ConversationScope = Extract<admin.ProcessingScope, { kind: "conversation" }>;

/** `account_id` of a conversation on a channel that names no account of ours. */
export const NO_ACCOUNT = "default";

/** The key of a conversation, whichever side names it. */
export function conversationKey(agentId: string, channel: string, account: string, contact: string): string {
  return ["conversation", agentId, channel, account, contact].join("\u0000");
}

export function scopeKey(scope: ConversationScope): string {
  return conversationKey(scope.agent_id, scope.channel, scope.account_id, scope.contact_id);
}

export function keyOfSession(key: SessionKey): string {
  return conversationKey(key.agentId, key.channel, key.account ?? NO_ACCOUNT, key.contact);
}

export function scopeOfSession(key: SessionKey): ConversationScope {
  return {
    kind: "conversation",
    agent_id: key.agentId,
    channel: key.channel,
    account_id: key.account ?? NO_ACCOUNT,
    contact_id: key.contact,
  };
}

/** The router's key of a conversation scope. */
export function sessionKeyOf(scope: ConversationScope): SessionKey {
  return {
    agentId: scope.agent_id,
    channel: scope.channel,
    account: scope.account_id === NO_ACCOUNT ? undefined : scope.account_id,
    contact: scope.contact_id,
  };
}

/**
 * The scope an escalation raised in this session is about: its conversation when it is a channel
 * conversation, else (an AppServer thread, a JSON-stream session) the session itself as a
 * `custom` scope, which operators can list and resolve but not pause.
 */
export function scopeOfRecord(session: Session): admin.ProcessingScope {
  if (session.channel !== null && session.contact !== null)
    return scopeOfSession({
      agentId: session.agentId,
      channel: session.channel,
      account: session.account ?? undefined,
      contact: session.contact,
    });
  return { kind: "custom", agent_id: session.agentId, scope_kind: "session", scope_id: session.id };
}

/** The key of any scope: conversations as above, the other kinds by their identifying fields. */
export function anyScopeKey(scope: admin.ProcessingScope): string {
  if (scope.kind === "conversation") return scopeKey(scope);
  const { kind, agent_id, ...rest } = scope as { kind: string; agent_id: string } & Record<string, unknown>;
  const ids = Object.keys(rest)
    .sort()
    .map((name) => `${name}=${String(rest[name])}`);
  return [kind, agent_id, ...ids].join("\u0000");
}
