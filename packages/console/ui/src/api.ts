/**
 * The browser's side of the console's API: login, the session (its CSRF token goes on every POST)
 * and `rpc(method, params)`, typed from the admin method table the microapp SDK derives.
 */
import { signal } from "@preact/signals";
import type { AdminCallParams, AdminCallResult, AdminMethod } from "nexo-plugin-sdk/microapp";

export interface SessionInfo {
  csrf: string;
  /** The operator's public id (the login token's hash), stamped on takeovers and resolutions. */
  operator: string;
  version: string;
  /** The console's own extension id (its row on the Extensions page). */
  id: string;
}

/** undefined while the page asks whether a session exists; null when logged out. */
export const session = signal<SessionInfo | null | undefined>(undefined);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: number,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

async function request(path: string, body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  const csrf = session.value?.csrf;
  if (csrf !== undefined) headers["x-nexo-csrf"] = csrf;
  const res = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const payload = (await res.json().catch(() => ({}))) as {
    error?: { message?: string; code?: number; data?: unknown };
  };
  if (!res.ok) {
    if (res.status === 401 && path !== "/api/login") session.value = null;
    const error = payload.error ?? {};
    throw new ApiError(res.status, error.message ?? `HTTP ${res.status}`, error.code, error.data);
  }
  return payload;
}

export async function restoreSession(): Promise<void> {
  try {
    session.value = (await request("/api/session")) as SessionInfo;
  } catch {
    session.value = null;
  }
}

export async function login(token: string): Promise<void> {
  session.value = (await request("/api/login", { token })) as SessionInfo;
}

export async function logout(): Promise<void> {
  await request("/api/logout", {}).catch(() => undefined);
  session.value = null;
}

export async function rpc<M extends AdminMethod>(
  method: M,
  params?: Omit<AdminCallParams<M>, "operator_token_hash">,
): Promise<AdminCallResult<M>> {
  const payload = (await request(`/api/rpc/${method}`, params ?? {})) as { result: AdminCallResult<M> };
  return payload.result;
}

/** The located problems of an invalid config change, as the daemon reports them. */
export interface ConfigIssue {
  file?: string;
  line?: number;
  key?: string;
  message: string;
}

export function configIssues(error: unknown): ConfigIssue[] {
  if (!(error instanceof ApiError)) return [];
  const issues = (error.data as { issues?: unknown } | undefined)?.issues;
  return Array.isArray(issues) ? (issues as ConfigIssue[]) : [];
}

export function describe(error: unknown): string {
  if (error instanceof ApiError && error.code === -32004) {
    const capability = (error.data as { capability?: string } | undefined)?.capability;
    return `not granted: the operator has not given the console the capability ${capability ?? "?"}`;
  }
  return error instanceof Error ? error.message : String(error);
}
