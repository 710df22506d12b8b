/**
 * What the browser may ask of the daemon: a fixed list of admin methods, each called through the
 * microapp's own admin client — so the daemon's capability gate decides and its audit log records
 * every call, granted or denied. The console adds nothing of its own: the operator identity on
 * takeovers and resolutions is stamped by the client, and results go back redacted.
 */
import { RpcError } from "@nexo/wire";
import type { admin } from "@nexo/wire/schemas";
import type { AdminClient, AdminMethod } from "nexo-plugin-sdk/microapp";
import { pairingForBrowser } from "./pairing.js";
import { redactForBrowser } from "./redact.js";

export const BROWSER_METHODS: ReadonlySet<string> = new Set<AdminMethod>([
  "agents/list",
  "agents/get",
  "agents/upsert",
  "agents/delete",
  "agent_events/list",
  "agent_events/read",
  "agent_events/search",
  "processing/state",
  "processing/pause",
  "processing/intervention",
  "processing/resume",
  "escalations/list",
  "escalations/resolve",
  "plugins/doctor",
  "plugins/restart",
  "microapps/list",
  "microapps/restart",
  "llm_providers/list",
  "llm_providers/upsert",
  "llm_providers/delete",
  "llm/complete",
  "mcp/list",
  "mcp/get",
  "mcp/upsert",
  "mcp/delete",
  "microapp_audit/tail",
  "pairing/start",
  "pairing/status",
  "pairing/cancel",
]);

export type RpcOutcome =
  | { ok: true; result: unknown }
  | { ok: false; status: number; error: { code: number; message: string; data?: unknown } };

export async function callForBrowser(
  client: AdminClient,
  method: string,
  params: unknown,
): Promise<RpcOutcome> {
  if (!BROWSER_METHODS.has(method)) {
    return {
      ok: false,
      status: 404,
      error: { code: -32601, message: `the console does not offer ${method}` },
    };
  }
  try {
    const call = client.call as (m: string, p: unknown) => Promise<unknown>;
    const result = await call(method, params ?? {});
    // A challenge's state reaches the page in the same trimmed shape as its live pushes.
    const shown = method === "pairing/status" ? pairingForBrowser(result as admin.PairingStatus) : result;
    return { ok: true, result: redactForBrowser(shown) };
  } catch (error) {
    if (error instanceof RpcError) {
      const body = { code: error.code, message: error.message, data: redactForBrowser(error.data) };
      return { ok: false, status: error.code === -32004 ? 403 : 422, error: body };
    }
    return { ok: false, status: 502, error: { code: -32603, message: (error as Error).message } };
  }
}
