/**
 * The bot token through nexo's credential persister (`credentials/register` for the `telegram`
 * channel runs these three):
 *
 *   validate  payload `{token}` must look like a bot token (`<bot id>:<35 characters>`), no I/O
 *   persist   the token is written to $NEXO_STATE_DIR/credentials/<instance or _default>.json
 *             (0600); a running channel of that instance switches to it at once (rotation)
 *   probe     getMe with that token: `ok` naming the bot, `auth_failed` when Telegram refuses
 *             the token, `connectivity_failed` when Telegram cannot be reached
 *
 * A registered token wins over TELEGRAM_BOT_TOKEN, since registering is the later, explicit act.
 */
import { CredentialFiles } from "@nexo/channels-common";
import { Api, GrammyError } from "grammy";
import type { CredentialParams, CredentialProbe, CredentialValidity } from "nexo-plugin-sdk";

/** What BotFather hands out: the bot's numeric id, a colon, and a 35-character secret. */
export const BOT_TOKEN_SHAPE = /^\d{5,20}:[A-Za-z0-9_-]{30,64}$/;
/** The same shape anywhere in a text: what the log redaction also looks for. */
export const BOT_TOKEN_ANYWHERE = /\b\d{5,20}:[A-Za-z0-9_-]{30,64}\b/g;

const PROBE_TIMEOUT_SECS = 10;

function tokenOf(payload: unknown): string | undefined {
  const token = (payload as { token?: unknown } | null)?.token;
  return typeof token === "string" ? token.trim() : undefined;
}

export function validateCredential({ payload }: CredentialParams): CredentialValidity {
  const token = tokenOf(payload);
  if (token === undefined || !BOT_TOKEN_SHAPE.test(token)) {
    return {
      valid: false,
      reason_code: "invalid_payload",
      detail: "payload.token must be a Telegram bot token as @BotFather gives it (<bot id>:<secret>)",
    };
  }
  return { valid: true };
}

/** Each instance's registered bot token. */
export function credentialStore(stateDir: string): CredentialFiles<string> {
  return new CredentialFiles(stateDir, {
    read: ({ token }) => (typeof token === "string" && BOT_TOKEN_SHAPE.test(token) ? token : undefined),
    write: (token) => ({ token }),
  });
}

export function tokenFromParams(params: CredentialParams): string {
  const token = tokenOf(params.payload);
  if (token === undefined || !BOT_TOKEN_SHAPE.test(token))
    throw new Error("payload.token is not a bot token");
  return token;
}

export async function probeCredential(apiRoot: string, params: CredentialParams): Promise<CredentialProbe> {
  const token = tokenOf(params.payload) ?? "";
  try {
    const me = await new Api(token, { apiRoot, timeoutSeconds: PROBE_TIMEOUT_SECS }).getMe();
    return {
      probed: true,
      healthy: true,
      reason_code: "ok",
      detail: `authenticated as @${me.username} (bot id ${me.id})`,
    };
  } catch (error) {
    if (error instanceof GrammyError && (error.error_code === 401 || error.error_code === 404)) {
      return {
        probed: true,
        healthy: false,
        reason_code: "auth_failed",
        detail: `Telegram refused the token (${error.description})`,
      };
    }
    return {
      probed: true,
      healthy: false,
      reason_code: "connectivity_failed",
      detail: `cannot reach the Bot API at ${apiRoot}: ${(error as Error).message}`,
    };
  }
}
