/**
 * The loopback channel's credential persister (nexo's optional `credentials` feature), what
 * `credentials/register` runs for the `loopback` channel:
 *
 *   validate  payload `{token}`: the bearer token clients use (16+ characters);
 *             metadata `{host?}`: when given, a loopback address — checked without any I/O
 *   probe     one authenticated request to the running listener with that token:
 *             200 → healthy (`ok`), 401 → `auth_failed`, no listener / no answer → `connectivity_failed`
 *
 * There is no persist step: the channel reads its token from its environment (LOOPBACK_TOKEN).
 */
import type { CredentialParams, CredentialProbe, CredentialValidity } from "nexo-plugin-sdk";
import { isLoopbackHost, MIN_TOKEN_LENGTH } from "./config.js";

const PROBE_TIMEOUT_MS = 5_000;

export function validateCredential({ payload, metadata }: CredentialParams): CredentialValidity {
  const token = (payload as { token?: unknown } | null)?.token;
  if (typeof token !== "string" || token.length < MIN_TOKEN_LENGTH)
    return {
      valid: false,
      reason_code: "invalid_payload",
      detail: `payload.token must be a string of at least ${MIN_TOKEN_LENGTH} characters`,
    };
  const host = metadata.host;
  if (host !== undefined && (typeof host !== "string" || !isLoopbackHost(host)))
    return {
      valid: false,
      reason_code: "invalid_metadata",
      detail: "metadata.host must be a loopback address (127.0.0.0/8, ::1 or localhost)",
    };
  return { valid: true };
}

/** Probes `url` (the running listener, or undefined when the channel is not started). */
export async function probeCredential(
  url: string | undefined,
  params: CredentialParams,
): Promise<CredentialProbe> {
  if (url === undefined)
    return {
      probed: true,
      healthy: false,
      reason_code: "connectivity_failed",
      detail: "the loopback channel is not listening (no agent is bound to it, or it was stopped)",
    };
  const token = (params.payload as { token: string }).token;
  let status: number;
  try {
    const res = await fetch(`${url}/messages?to=nexo-credential-probe&timeout=0`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    await res.body?.cancel();
    status = res.status;
  } catch (error) {
    return {
      probed: true,
      healthy: false,
      reason_code: "connectivity_failed",
      detail: `${url}: ${(error as Error).message}`,
    };
  }
  if (status === 401)
    return { probed: true, healthy: false, reason_code: "auth_failed", detail: `${url} refused the token` };
  if (status !== 200)
    return {
      probed: true,
      healthy: false,
      reason_code: "connectivity_failed",
      detail: `${url} answered ${status}`,
    };
  return { probed: true, healthy: true, reason_code: "ok", detail: `authenticated at ${url}` };
}
