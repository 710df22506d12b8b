/**
 * The app's tokens through nexo's credential persister (`credentials/register` for the `slack`
 * channel runs these three). Payload: `{bot_token, app_token?}` — the bot token (xoxb-…) always,
 * the app-level token (xapp-…) for Socket Mode.
 *
 *   validate  the tokens' shapes, no I/O
 *   persist   written to $NEXO_STATE_DIR/credentials/<instance or _default>.json (0600); a running
 *             channel of that instance checks them with auth.test and switches to them
 *   probe     auth.test with the bot token: `ok` naming the bot and workspace, `auth_failed` when
 *             Slack refuses it, `connectivity_failed` when Slack cannot be reached
 *
 * Registered tokens win over SLACK_BOT_TOKEN / SLACK_APP_TOKEN, since registering is the later,
 * explicit act.
 */
import { CredentialFiles } from "@nexo/channels-common";
import { WebClient } from "@slack/web-api";
import type { CredentialParams, CredentialProbe, CredentialValidity } from "nexo-plugin-sdk";

export const BOT_TOKEN_SHAPE = /^xoxb-[A-Za-z0-9-]{10,250}$/;
export const APP_TOKEN_SHAPE = /^xapp-[A-Za-z0-9-]{10,250}$/;
/** Any Slack token anywhere in a text: what the log redaction also looks for. */
export const SLACK_TOKEN_ANYWHERE = /\bxox[abposr]-[A-Za-z0-9-]{10,250}|\bxapp-[A-Za-z0-9-]{10,250}/g;

export interface SlackTokens {
  botToken: string;
  appToken?: string;
}

function tokensOf(payload: unknown): { bot?: string; app?: string } {
  const p = (payload ?? {}) as { bot_token?: unknown; app_token?: unknown };
  return {
    ...(typeof p.bot_token === "string" ? { bot: p.bot_token.trim() } : {}),
    ...(typeof p.app_token === "string" ? { app: p.app_token.trim() } : {}),
  };
}

export function validateCredential({ payload }: CredentialParams): CredentialValidity {
  const { bot, app } = tokensOf(payload);
  if (bot === undefined || !BOT_TOKEN_SHAPE.test(bot)) {
    return {
      valid: false,
      reason_code: "invalid_payload",
      detail: "payload.bot_token must be the app's bot token (xoxb-…, OAuth & Permissions)",
    };
  }
  if (app !== undefined && !APP_TOKEN_SHAPE.test(app)) {
    return {
      valid: false,
      reason_code: "invalid_payload",
      detail: "payload.app_token must be an app-level token (xapp-…, Basic Information → App-Level Tokens)",
    };
  }
  return { valid: true };
}

export function tokensFromParams(params: CredentialParams): SlackTokens {
  if (!validateCredential(params).valid) throw new Error("payload is not a valid Slack token set");
  const { bot, app } = tokensOf(params.payload);
  return { botToken: bot!, ...(app === undefined ? {} : { appToken: app }) };
}

/** Each instance's registered tokens (the app-level token is optional: Events API mode needs none). */
export function credentialStore(stateDir: string): CredentialFiles<SlackTokens> {
  return new CredentialFiles(stateDir, {
    read: ({ bot_token, app_token }) => {
      if (typeof bot_token !== "string" || !BOT_TOKEN_SHAPE.test(bot_token)) return undefined;
      return {
        botToken: bot_token,
        ...(typeof app_token === "string" && APP_TOKEN_SHAPE.test(app_token) ? { appToken: app_token } : {}),
      };
    },
    write: (tokens) => ({ bot_token: tokens.botToken, app_token: tokens.appToken }),
  });
}

export interface Identity {
  userId: string;
  botId: string | undefined;
  user: string;
  team: string;
}

/** auth.test: who the bot token is; throws what Slack or the network said. */
export async function whoAmI(botToken: string, apiUrl: string): Promise<Identity> {
  const client = new WebClient(botToken, {
    slackApiUrl: apiUrl,
    retryConfig: { retries: 0 },
    timeout: 10_000,
  });
  const answer = await client.auth.test();
  return {
    userId: String(answer.user_id ?? ""),
    botId: answer.bot_id === undefined ? undefined : String(answer.bot_id),
    user: String(answer.user ?? ""),
    team: String(answer.team ?? ""),
  };
}

/** Slack said no to the token (as opposed to: Slack could not be reached). */
export function isAuthRefusal(error: unknown): boolean {
  const code = (error as { code?: string; data?: { error?: string } })?.data?.error;
  return (
    code === "invalid_auth" ||
    code === "not_authed" ||
    code === "account_inactive" ||
    code === "token_revoked" ||
    code === "token_expired"
  );
}

export async function probeCredential(apiUrl: string, params: CredentialParams): Promise<CredentialProbe> {
  const { bot } = tokensOf(params.payload);
  try {
    const me = await whoAmI(bot ?? "", apiUrl);
    return {
      probed: true,
      healthy: true,
      reason_code: "ok",
      detail: `authenticated as @${me.user} in ${me.team}`,
    };
  } catch (error) {
    if (isAuthRefusal(error)) {
      return {
        probed: true,
        healthy: false,
        reason_code: "auth_failed",
        detail: `Slack refused the token (${(error as { data?: { error?: string } }).data?.error})`,
      };
    }
    return {
      probed: true,
      healthy: false,
      reason_code: "connectivity_failed",
      detail: `cannot reach Slack at ${apiUrl}: ${(error as Error).message}`,
    };
  }
}
