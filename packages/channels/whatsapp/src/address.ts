/**
 * Who a WhatsApp chat is, as one string nexo's router keys sessions on and hands back as a
 * reply's `to`: the chat's JID. A person is `<number>@s.whatsapp.net` (or `<id>@lid`, WhatsApp's
 * privacy id), a group `<id>@g.us`. Operators write phone numbers; they are turned into JIDs here
 * so `+44 7700 900123`, `447700900123` and `447700900123@s.whatsapp.net` are the same contact.
 */

const USER_SERVER = "s.whatsapp.net";
const JID = /^[0-9A-Za-z._-]{3,64}(?::\d{1,4})?@(s\.whatsapp\.net|g\.us|lid|bot)$/;

/** The JID a `to` (a JID or a phone number) names, or undefined when it is neither. */
export function toJid(to: string): string | undefined {
  const value = to.trim();
  if (JID.test(value)) return stripDevice(value);
  const digits = value.replace(/[\s()+.-]/g, "");
  if (/^\d{6,15}$/.test(digits)) return `${digits}@${USER_SERVER}`;
  return undefined;
}

/** `447700900123:12@s.whatsapp.net` (one device of an account) → the account's JID. */
export function stripDevice(jid: string): string {
  const at = jid.indexOf("@");
  if (at < 0) return jid;
  const user = jid.slice(0, at).split(":")[0]!;
  return `${user}${jid.slice(at)}`;
}

export const isGroup = (jid: string): boolean => jid.endsWith("@g.us");

/** An allowlist written with phone numbers, as the JIDs those numbers are (`*` and JIDs kept). */
export function normalisePhoneList(raw: string | undefined): string {
  return (raw ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => (part === "*" ? part : (toJid(part) ?? part)))
    .join(",");
}

/** A file-name-safe folder for a chat. */
export const folderOf = (jid: string): string => jid.replace(/[^A-Za-z0-9]/g, "-");
