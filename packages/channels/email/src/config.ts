/**
 * The email channel's settings, all from the plugin's environment (`env:` for the plugin in
 * plugins.yaml). Read at every `channel.start`, so a bad value is reported there, naming it. A
 * mailbox registered through the credential methods (./credentials.ts) brings its own address,
 * login and servers, which then win over EMAIL_ADDRESS, the login and the IMAP/SMTP settings.
 *
 *   EMAIL_ADDRESS             the agent's address: replies come from it           required
 *   EMAIL_FROM_NAME           the display name on replies                         default none
 *   EMAIL_IMAP_HOST / _PORT   the IMAP server                                     port 993
 *   EMAIL_IMAP_SECURITY       tls | starttls | none (none: loopback hosts only)   default tls
 *   EMAIL_SMTP_HOST / _PORT   the SMTP server (submission)                        port 465
 *   EMAIL_SMTP_SECURITY       tls | starttls | none (none: loopback hosts only)   default tls
 *   EMAIL_USER / EMAIL_PASSWORD            the mailbox login (IMAP and SMTP)   user default EMAIL_ADDRESS
 *   EMAIL_SMTP_USER / EMAIL_SMTP_PASSWORD  a different SMTP login, when the provider has one
 *   EMAIL_TLS_REJECT_UNAUTHORIZED  false accepts a server's self-signed certificate  default true
 *   EMAIL_MAILBOX             the folder read                                     default INBOX
 *   EMAIL_POLL_SECS           how often the folder is checked besides IDLE (also the only way
 *                             on a server without IDLE)                           default 60
 *   EMAIL_ALLOWED_SENDERS     who may write to the agent: addresses, domains (`example.org`
 *                             for everyone there), `*`                            default nobody
 *   EMAIL_OUTBOUND_ALLOWED    whom the agent may write to: known | * | addresses  default known
 *   EMAIL_RATE_PER_MINUTE     inbound mails per sender per minute                 default 10
 *   EMAIL_SEND_PER_MINUTE     outbound mails per recipient per minute             default 10
 *   EMAIL_MAX_BYTES           largest mail read (and attachment saved)            default 26214400
 *   EMAIL_MEDIA_DIRS          local directories files may be attached from        default $NEXO_STATE_DIR/media/out
 *   EMAIL_SEND_WAIT_MS        how long channel.send_outbound waits for the SMTP server before it
 *                             answers "queued"                                    default 15000
 *   EMAIL_SUBJECT             the subject of a thread the agent starts            default "Message from <name or address>"
 */
import { isIP } from "node:net";
import { join } from "node:path";
import { Allowlist, ChannelConfigError, envInteger, envOneOf } from "@nexo/channels-common";

type Env = Readonly<Record<string, string | undefined>>;

export type Security = "tls" | "starttls" | "none";

export interface ServerConfig {
  host: string;
  port: number;
  security: Security;
}

export interface Login {
  user: string;
  password: string;
  smtp_user?: string;
  smtp_password?: string;
}

/** A mailbox as `credentials/register` gives it: its address, login and servers. */
export interface Registered {
  address: string;
  login: Login;
  imap: ServerConfig;
  smtp: ServerConfig;
}

export interface EmailConfig {
  stateDir: string;
  address: string;
  fromName: string | undefined;
  imap: ServerConfig;
  smtp: ServerConfig;
  /** The login to use: the registered one, else EMAIL_USER / EMAIL_PASSWORD. */
  login: Login | undefined;
  rejectUnauthorized: boolean;
  mailbox: string;
  pollSecs: number;
  allowedSenders: Allowlist;
  outboundAllowed: string | undefined;
  ratePerMinute: number;
  sendPerMinute: number;
  maxBytes: number;
  mediaDirs: string[];
  sendWaitMs: number;
  subject: string;
}

/** Loose on purpose: the server decides what it delivers; this catches typos and header injection. */
export const ADDRESS_SHAPE =
  /^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$|^[^\s@<>()",;:]+@localhost$/i;

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "1" || raw === "yes") return true;
  if (raw === "false" || raw === "0" || raw === "no") return false;
  throw new ChannelConfigError(name, `must be true or false, got "${raw}"`);
}

const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."));

export const HOST_SHAPE = /^[A-Za-z0-9.:-]+$/;

/** Why a server setting may not be used, or undefined. */
export function serverProblem(server: ServerConfig): string | undefined {
  if (!HOST_SHAPE.test(server.host)) return `"${server.host}" is not a host name`;
  // A password sent in the clear over a network is not a default anyone should get by a typo.
  if (server.security === "none" && !isLoopback(server.host))
    return `security none is allowed for a server on this machine only (the password would cross the network in the clear to ${server.host})`;
  return undefined;
}

function server(env: Env, prefix: "IMAP" | "SMTP", defaultPort: number, fallbackHost?: string): ServerConfig {
  const host = env[`EMAIL_${prefix}_HOST`]?.trim() || fallbackHost;
  if (host === undefined || !HOST_SHAPE.test(host)) {
    throw new ChannelConfigError(
      `EMAIL_${prefix}_HOST`,
      `must be the ${prefix} server's host name, got "${host ?? ""}"`,
    );
  }
  const security = envOneOf(env, `EMAIL_${prefix}_SECURITY`, ["tls", "starttls", "none"] as const, "tls");
  const config = { host, port: envInteger(env, `EMAIL_${prefix}_PORT`, defaultPort, 1, 65535), security };
  const problem = serverProblem(config);
  if (problem !== undefined) throw new ChannelConfigError(`EMAIL_${prefix}_SECURITY`, problem);
  return config;
}

function envLogin(env: Env, address: string): Login | undefined {
  const user = env.EMAIL_USER?.trim() || address;
  const password = env.EMAIL_PASSWORD;
  if (!password) return undefined;
  const smtpUser = env.EMAIL_SMTP_USER?.trim();
  const smtpPassword = env.EMAIL_SMTP_PASSWORD;
  return {
    user,
    password,
    ...(smtpUser && smtpPassword ? { smtp_user: smtpUser, smtp_password: smtpPassword } : {}),
  };
}

export function readEmailConfig(env: Env, registered?: Registered): EmailConfig {
  const stateDir = env.NEXO_STATE_DIR?.trim() || process.cwd();
  const address = registered?.address ?? env.EMAIL_ADDRESS?.trim() ?? "";
  if (!ADDRESS_SHAPE.test(address)) {
    throw new ChannelConfigError("EMAIL_ADDRESS", `must be the agent's email address, got "${address}"`);
  }
  const fromName = env.EMAIL_FROM_NAME?.trim() || undefined;
  if (fromName !== undefined && /[\r\n]/.test(fromName)) {
    throw new ChannelConfigError("EMAIL_FROM_NAME", "must be one line");
  }
  const imap = registered?.imap ?? server(env, "IMAP", 993);
  const mediaDirs = (env.EMAIL_MEDIA_DIRS ?? "")
    .split(",")
    .map((dir) => dir.trim())
    .filter((dir) => dir !== "");
  const subject = env.EMAIL_SUBJECT?.trim() || `Message from ${fromName ?? address}`;
  if (/[\r\n]/.test(subject)) throw new ChannelConfigError("EMAIL_SUBJECT", "must be one line");
  return {
    stateDir,
    address,
    fromName,
    imap,
    smtp: registered?.smtp ?? server(env, "SMTP", 465, imap.host),
    login: registered?.login ?? envLogin(env, address),
    rejectUnauthorized: boolean(env, "EMAIL_TLS_REJECT_UNAUTHORIZED", true),
    mailbox: env.EMAIL_MAILBOX?.trim() || "INBOX",
    pollSecs: envInteger(env, "EMAIL_POLL_SECS", 60, 1, 86_400),
    allowedSenders: Allowlist.parse(env.EMAIL_ALLOWED_SENDERS),
    outboundAllowed: env.EMAIL_OUTBOUND_ALLOWED,
    ratePerMinute: envInteger(env, "EMAIL_RATE_PER_MINUTE", 10, 1, 10_000),
    sendPerMinute: envInteger(env, "EMAIL_SEND_PER_MINUTE", 10, 1, 10_000),
    maxBytes: envInteger(env, "EMAIL_MAX_BYTES", 25 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    mediaDirs: mediaDirs.length > 0 ? mediaDirs : [join(stateDir, "media", "out")],
    sendWaitMs: envInteger(env, "EMAIL_SEND_WAIT_MS", 15_000, 0, 300_000),
    subject,
  };
}
