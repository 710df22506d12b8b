/**
 * The mailbox through nexo's credential persister (`credentials/register` for the `email`
 * channel runs these three), in the shape nexo's admin RPC defines for email:
 *
 *   payload   {address, password, user?}   `user` when the login name is not the address;
 *             (an `xoauth2_token` instead of the password is refused: not supported yet)
 *   metadata  {imap: {host, port, tls}, smtp: {host, port, tls}, provider?}   `tls` is
 *             implicit_tls | starttls | none (none: a server on this machine only)
 *
 *   validate  the shapes above, no I/O
 *   persist   written to $NEXO_STATE_DIR/credentials/<instance or _default>.json (0600); a running
 *             channel of that instance first logs in with it, then reconnects with it (rotation)
 *   probe     logs in to the IMAP server and to the SMTP server: `ok`, `auth_failed` when either
 *             refuses the login, `tls_failed` on a TLS handshake or certificate failure,
 *             `connectivity_failed` when one cannot be reached
 *
 * A registered mailbox wins over the EMAIL_* settings of plugins.yaml, since registering is the
 * later act.
 */
import { CredentialFiles } from "@nexo/channels-common";
import { ImapFlow, type ImapFlowOptions } from "imapflow";
import type { CredentialParams, CredentialProbe, CredentialValidity } from "nexo-plugin-sdk";
import {
  ADDRESS_SHAPE,
  type EmailConfig,
  type Login,
  type Registered,
  type Security,
  type ServerConfig,
  serverProblem,
} from "./config.js";
import { smtpTransport } from "./outbound.js";

const TLS_MODES: Record<string, Security> = { implicit_tls: "tls", starttls: "starttls", none: "none" };

const oneLine = (value: unknown, max: number): value is string =>
  typeof value === "string" && value !== "" && value.length <= max && !/[\r\n\0]/.test(value);

function serverOf(value: unknown, name: string): ServerConfig | string {
  const server = value as { host?: unknown; port?: unknown; tls?: unknown } | null;
  if (typeof server !== "object" || server === null) return `metadata.${name} must be {host, port, tls}`;
  const security = typeof server.tls === "string" ? TLS_MODES[server.tls] : undefined;
  if (!oneLine(server.host, 253)) return `metadata.${name}.host must be a host name`;
  if (!Number.isInteger(server.port) || (server.port as number) < 1 || (server.port as number) > 65535)
    return `metadata.${name}.port must be a port number`;
  if (security === undefined) return `metadata.${name}.tls must be implicit_tls, starttls or none`;
  const config = { host: server.host.trim(), port: server.port as number, security };
  const problem = serverProblem(config);
  return problem === undefined ? config : `metadata.${name}: ${problem}`;
}

/** The mailbox in a register call, or which half is wrong and why. */
export function registeredOf(
  payload: unknown,
  metadata: unknown,
): Registered | { reason: "invalid_payload" | "invalid_metadata"; detail: string } {
  const p = (typeof payload === "object" && payload !== null ? payload : {}) as Record<string, unknown>;
  const bad = (detail: string) => ({ reason: "invalid_payload" as const, detail });
  if (p.xoauth2_token !== undefined)
    return bad("xoauth2_token is not supported by this plugin yet: register the mailbox's (app) password");
  if (!oneLine(p.address, 320) || !ADDRESS_SHAPE.test(p.address.trim()))
    return bad("payload.address must be the mailbox's email address");
  if (!oneLine(p.password, 1024)) return bad("payload.password must be a non-empty password, one line");
  if (p.user !== undefined && !oneLine(p.user, 320))
    return bad("payload.user must be the login name, one line");
  const m = (typeof metadata === "object" && metadata !== null ? metadata : {}) as Record<string, unknown>;
  const imap = serverOf(m.imap, "imap");
  if (typeof imap === "string") return { reason: "invalid_metadata", detail: imap };
  const smtp = serverOf(m.smtp, "smtp");
  if (typeof smtp === "string") return { reason: "invalid_metadata", detail: smtp };
  const address = p.address.trim();
  return {
    address,
    login: { user: typeof p.user === "string" ? p.user.trim() : address, password: p.password },
    imap,
    smtp,
  };
}

export function validateCredential({ payload, metadata }: CredentialParams): CredentialValidity {
  const registered = registeredOf(payload, metadata);
  return "reason" in registered
    ? { valid: false, reason_code: registered.reason, detail: registered.detail }
    : { valid: true };
}

export function registeredFromParams(params: CredentialParams): Registered {
  const registered = registeredOf(params.payload, params.metadata);
  if ("reason" in registered) throw new Error(registered.detail);
  return registered;
}

/** The secrets of a login, for the log redactor. */
export const secretsOf = (login: Login | undefined): string[] =>
  login === undefined
    ? []
    : [login.password, ...(login.smtp_password === undefined ? [] : [login.smtp_password])];

/** Each instance's registered mailbox, checked again as it is read (a hand-edited file may be wrong). */
export function credentialStore(stateDir: string): CredentialFiles<Registered> {
  return new CredentialFiles(stateDir, {
    read: (file) => {
      const saved = file as Partial<Registered>;
      const checked = registeredOf(
        { address: saved.address, password: saved.login?.password, user: saved.login?.user },
        {
          imap: { ...saved.imap, tls: tlsName(saved.imap?.security) },
          smtp: { ...saved.smtp, tls: tlsName(saved.smtp?.security) },
        },
      );
      return "reason" in checked ? undefined : checked;
    },
    write: (registered) => ({ ...registered }),
  });
}

const tlsName = (security: Security | undefined): string | undefined =>
  Object.entries(TLS_MODES).find(([, mode]) => mode === security)?.[0];

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

const TLS_TROUBLE = /certificate|self[- ]signed|ssl|tls|handshake|EPROTO/i;

export async function probeCredential(
  config: (registered: Registered) => EmailConfig | string,
  params: CredentialParams,
): Promise<CredentialProbe> {
  const registered = registeredOf(params.payload, params.metadata);
  if ("reason" in registered)
    return { probed: false, healthy: false, reason_code: registered.reason, detail: registered.detail };
  const settings = config(registered);
  if (typeof settings === "string")
    return { probed: false, healthy: false, reason_code: "not_probed", detail: settings };
  const check = await checkLogin(settings, registered.login);
  if (check.ok) return { probed: true, healthy: true, reason_code: "ok", detail: check.detail };
  return {
    probed: true,
    healthy: false,
    reason_code: check.auth
      ? "auth_failed"
      : TLS_TROUBLE.test(check.detail)
        ? "tls_failed"
        : "connectivity_failed",
    detail: check.detail,
  };
}
