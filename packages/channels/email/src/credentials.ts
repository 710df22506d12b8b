/**
 * The mailbox login through nexo's credential persister (`credentials/register` for the `email`
 * channel runs these three):
 *
 *   validate  payload `{user, password, smtp_user?, smtp_password?}`: non-empty, one line each,
 *             no I/O (`smtp_*` when the SMTP server has a login of its own)
 *   persist   written to $NEXO_STATE_DIR/credentials/<instance or _default>.json (0600); a running
 *             channel of that instance checks it by logging in, then reconnects with it (rotation)
 *   probe     logs in to the IMAP server and to the SMTP server: `ok`, `auth_failed` when either
 *             refuses the login, `connectivity_failed` when one cannot be reached
 *
 * A registered login wins over EMAIL_USER / EMAIL_PASSWORD, since registering is the later act.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "@nexo/channels-common";
import { ImapFlow, type ImapFlowOptions } from "imapflow";
import type { CredentialParams, CredentialProbe, CredentialValidity } from "nexo-plugin-sdk";
import type { EmailConfig, Login } from "./config.js";
import { smtpTransport } from "./outbound.js";

const FIELD = { user: 320, password: 1024 } as const;

function field(
  payload: Record<string, unknown>,
  name: string,
  max: number,
  required: boolean,
): string | undefined | null {
  const value = payload[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== "string" || value === "" || value.length > max || /[\r\n\0]/.test(value)) return null;
  return value;
}

/** The login in a payload, or the reason it is not one. */
export function loginOf(payload: unknown): Login | string {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload))
    return "payload must be an object {user, password, smtp_user?, smtp_password?}";
  const p = payload as Record<string, unknown>;
  const user = field(p, "user", FIELD.user, true);
  const password = field(p, "password", FIELD.password, true);
  const smtpUser = field(p, "smtp_user", FIELD.user, false);
  const smtpPassword = field(p, "smtp_password", FIELD.password, false);
  if (user == null) return "payload.user must be the mailbox's login name, one line";
  if (password == null) return "payload.password must be a non-empty password, one line";
  if (smtpUser === null || smtpPassword === null)
    return "payload.smtp_user / smtp_password must be non-empty, one line";
  if ((smtpUser === undefined) !== (smtpPassword === undefined))
    return "payload.smtp_user and payload.smtp_password go together";
  return {
    user: user.trim(),
    password,
    ...(smtpUser === undefined ? {} : { smtp_user: smtpUser.trim(), smtp_password: smtpPassword! }),
  };
}

export function validateCredential({ payload }: CredentialParams): CredentialValidity {
  const login = loginOf(payload);
  return typeof login === "string"
    ? { valid: false, reason_code: "invalid_payload", detail: login }
    : { valid: true };
}

export function loginFromParams(params: CredentialParams): Login {
  const login = loginOf(params.payload);
  if (typeof login === "string") throw new Error(login);
  return login;
}

/** The secrets of a login, for the log redactor. */
export const secretsOf = (login: Login | undefined): string[] =>
  login === undefined
    ? []
    : [login.password, ...(login.smtp_password === undefined ? [] : [login.smtp_password])];

export class CredentialStore {
  constructor(private readonly stateDir: string) {}

  private file(instance: string | null | undefined): string {
    const name = instance ?? "_default";
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw new Error(`invalid instance name "${name}"`);
    return join(this.stateDir, "credentials", `${name}.json`);
  }

  /** The registered login of an instance, if any. */
  login(instance: string | null | undefined): Login | undefined {
    try {
      const saved = loginOf(JSON.parse(readFileSync(this.file(instance), "utf8")));
      return typeof saved === "string" ? undefined : saved;
    } catch {
      return undefined;
    }
  }

  save(instance: string | null | undefined, login: Login): void {
    writeFileAtomic(
      this.file(instance),
      `${JSON.stringify({ ...login, saved_at: new Date().toISOString() })}\n`,
    );
  }
}

export type LoginCheck = { ok: true; detail: string } | { ok: false; auth: boolean; detail: string };

const IMAP_TIMEOUT_MS = 20_000;

export function imapClient(config: EmailConfig, login: Login): ImapFlow {
  const options: ImapFlowOptions & { doSTARTTLS?: boolean } = {
    host: config.imap.host,
    port: config.imap.port,
    secure: config.imap.security === "tls",
    // imapflow's own option (not in its types): true requires STARTTLS, false never tries it.
    ...(config.imap.security === "tls" ? {} : { doSTARTTLS: config.imap.security === "starttls" }),
    auth: { user: login.user, pass: login.password },
    tls: { rejectUnauthorized: config.rejectUnauthorized },
    // imapflow logs to stdout by default, and stdout is this plugin's JSON-RPC channel.
    logger: false,
    connectionTimeout: IMAP_TIMEOUT_MS,
    greetingTimeout: IMAP_TIMEOUT_MS,
    // IDLE starts after a second without commands; it is restarted every poll interval (some
    // servers drop a long IDLE silently), and on a server without IDLE the same interval polls.
    autoIdleDelay: 1000,
    maxIdleTime: config.pollSecs * 1000,
  };
  return new ImapFlow(options);
}

/** Logs in to both servers with `login`; says which refused or could not be reached. */
export async function checkLogin(config: EmailConfig, login: Login): Promise<LoginCheck> {
  const imap = imapClient(config, login);
  imap.on("error", () => undefined);
  try {
    await imap.connect();
    await imap.logout();
  } catch (error) {
    imap.close();
    const failed = (error as { authenticationFailed?: boolean }).authenticationFailed === true;
    return {
      ok: false,
      auth: failed,
      detail: failed
        ? `the IMAP server ${config.imap.host} refused the login of ${login.user}`
        : `cannot reach the IMAP server ${config.imap.host}:${config.imap.port}: ${(error as Error).message}`,
    };
  }
  const smtp = smtpTransport(config, login);
  try {
    await smtp.verify();
  } catch (error) {
    const auth = (error as { code?: string }).code === "EAUTH";
    return {
      ok: false,
      auth,
      detail: auth
        ? `the SMTP server ${config.smtp.host} refused the login of ${login.smtp_user ?? login.user}`
        : `cannot reach the SMTP server ${config.smtp.host}:${config.smtp.port}: ${(error as Error).message}`,
    };
  } finally {
    smtp.close();
  }
  return {
    ok: true,
    detail: `logged in as ${login.user} to IMAP ${config.imap.host} and SMTP ${config.smtp.host}`,
  };
}

export async function probeCredential(
  config: EmailConfig | string,
  params: CredentialParams,
): Promise<CredentialProbe> {
  if (typeof config === "string")
    return { probed: false, healthy: false, reason_code: "connectivity_failed", detail: config };
  const login = loginOf(params.payload);
  if (typeof login === "string")
    return { probed: false, healthy: false, reason_code: "auth_failed", detail: login };
  const check = await checkLogin(config, login);
  if (check.ok) return { probed: true, healthy: true, reason_code: "ok", detail: check.detail };
  return {
    probed: true,
    healthy: false,
    reason_code: check.auth ? "auth_failed" : "connectivity_failed",
    detail: check.detail,
  };
}
