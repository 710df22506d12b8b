/**
 * The bot token through nexo's credential persister (`credentials/register` for the `discord`
 * channel runs these three). Payload: `{bot_token}` — the token from the Developer Portal's Bot page.
 *
 *   validate  the token's shape, no I/O
 *   persist   written to $NEXO_STATE_DIR/credentials/<instance or _default>.json (0600); a running
 *             channel of that instance checks it with GET /users/@me and reconnects with it
 *   probe     GET /users/@me with the token: `ok` naming the bot, `auth_failed` when Discord
 *             refuses it, `connectivity_failed` when Discord cannot be reached
 *
 * A registered token wins over DISCORD_BOT_TOKEN, since registering is the later, explicit act.
 */
import { CredentialFiles } from "@nexo/channels-common";
import type { CredentialParams, CredentialProbe, CredentialValidity } from "nexo-plugin-sdk";

/** A bot token: the bot's id in base64, a timestamp part and an HMAC part, joined by dots. */
export const BOT_TOKEN_SHAPE = /^[A-Za-z0-9_-]{20,40}\.[A-Za-z0-9_-]{5,10}\.[A-Za-z0-9_-]{25,60}$/;
/** Any bot token anywhere in a text: what the log redaction also looks for. */
export const DISCORD_TOKEN_ANYWHERE =
  /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{20,40}\.[A-Za-z0-9_-]{5,10}\.[A-Za-z0-9_-]{25,60}(?![A-Za-z0-9_-])/g;

const PROBE_TIMEOUT_MS = 15_000;

function tokenOf(payload: unknown): string | undefined {
  const p = (payload ?? {}) as { bot_token?: unknown };
  return typeof p.bot_token === "string" ? p.bot_token.trim() : undefined;
}

export function validateCredential({ payload }: CredentialParams): CredentialValidity {
  const token = tokenOf(payload);
  if (token === undefined || !BOT_TOKEN_SHAPE.test(token)) {
    return {
      valid: false,
      reason_code: "invalid_payload",
      detail:
        "payload.bot_token must be the bot's token (Developer Portal → your application → Bot → Reset Token)",
    };
  }
  return { valid: true };
}

export function tokenFromParams(params: CredentialParams): string {
  if (!validateCredential(params).valid) throw new Error("payload is not a valid Discord bot token");
  return tokenOf(params.payload)!;
}

/** Each instance's registered bot token. */
export function credentialStore(stateDir: string): CredentialFiles<string> {
  return new CredentialFiles(stateDir, {
    read: ({ bot_token }) =>
      typeof bot_token === "string" && BOT_TOKEN_SHAPE.test(bot_token) ? bot_token : undefined,
    write: (token) => ({ bot_token: token }),
  });
}

export interface Identity {
  id: string;
  username: string;
}

/** Discord answered 401: the token is wrong or was reset. */
export class TokenRefusedError extends Error {
  constructor(readonly status: number) {
    super(`Discord refused the token (HTTP ${status})`);
    this.name = "TokenRefusedError";
  }
}

/** GET /users/@me: who the token is. Throws TokenRefusedError, or what the network said. */
export async function whoAmI(token: string, apiUrl: string): Promise<Identity> {
  const response = await fetch(`${apiUrl}/v10/users/@me`, {
    headers: { authorization: `Bot ${token}` },
    redirect: "error",
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
  });
  if (response.status === 401 || response.status === 403) throw new TokenRefusedError(response.status);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const me = (await response.json()) as { id?: unknown; username?: unknown };
  if (typeof me.id !== "string") throw new Error("GET /users/@me answered without an id");
  return { id: me.id, username: String(me.username ?? me.id) };
}

export async function probeCredential(apiUrl: string, params: CredentialParams): Promise<CredentialProbe> {
  try {
    const me = await whoAmI(tokenOf(params.payload) ?? "", apiUrl);
    return { probed: true, healthy: true, reason_code: "ok", detail: `authenticated as @${me.username}` };
  } catch (error) {
    if (error instanceof TokenRefusedError) {
      return { probed: true, healthy: false, reason_code: "auth_failed", detail: error.message };
    }
    return {
      probed: true,
      healthy: false,
      reason_code: "connectivity_failed",
      detail: `cannot reach Discord at ${apiUrl}: ${(error as Error).message}`,
    };
  }
}
