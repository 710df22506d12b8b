/**
 * JSON-RPC frame helpers with the upstream SDK's names, for plugins and tests that build frames by
 * hand. The adapter itself speaks through `@nexo/wire`'s JsonRpcPeer; both serialize strictly:
 * NaN, ±Infinity and BigInt are refused instead of silently becoming `null`.
 */
import { DEFAULT_MAX_FRAME_BYTES, stringifyStrict } from "@nexo/wire";
import type {
  JsonRpcErrorResponse,
  JsonRpcIdValue,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcSuccess,
} from "@nexo/wire/schemas";
import { WireError } from "./errors.js";

export const JSONRPC_VERSION = "2.0";

/** The inbound line cap, newline excluded (1 MiB). */
export const MAX_FRAME_BYTES = DEFAULT_MAX_FRAME_BYTES;

/** A request id as upstream names it; `null` only ever appears in replies to unreadable requests. */
export type JsonRpcId = JsonRpcIdValue | null;

// The envelope shapes are the wire's (declared once, in @nexo/wire/schemas), under upstream's names.
export type { JsonRpcErrorResponse, JsonRpcNotification, JsonRpcRequest };
export type JsonRpcResponse = JsonRpcSuccess;
export type JsonRpcFrame = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse | JsonRpcErrorResponse;

/**
 * `JSON.stringify` that refuses what JSON cannot represent, naming where it was found
 * (`result.items[2].score is NaN, which JSON cannot represent`). Throws WireError.
 */
export function toStrictJson(value: unknown, what = "value"): string {
  let json: string | undefined;
  try {
    json = stringifyStrict(value);
  } catch (error) {
    const found = findUnrepresentable(value, what, new Set());
    const message = found
      ? `${found.path} is ${found.text}, which JSON cannot represent`
      : `${what} cannot be serialized: ${(error as Error).message}`;
    throw new WireError(message, { cause: error });
  }
  if (json === undefined) throw new WireError(`${what} cannot be represented as JSON`);
  return json;
}

// Runs only after serialization failed, to turn the failure into a path a plugin author can act on.
function findUnrepresentable(
  value: unknown,
  path: string,
  seen: Set<object>,
): { path: string; text: string } | undefined {
  if (typeof value === "number" && !Number.isFinite(value)) return { path, text: String(value) };
  if (typeof value === "bigint") return { path, text: `the BigInt ${value}n` };
  if (value === null || typeof value !== "object" || seen.has(value)) return undefined;
  seen.add(value);
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") return findUnrepresentable(toJSON.call(value), path, seen);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnrepresentable(value[i], `${path}[${i}]`, seen);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, child] of Object.entries(value)) {
    const found = findUnrepresentable(child, `${path}.${key}`, seen);
    if (found) return found;
  }
  return undefined;
}

/** One frame as a line: strict JSON plus `\n`. Throws WireError for NaN, ±Infinity or BigInt. */
export function serializeFrame(frame: JsonRpcFrame): string {
  return `${toStrictJson(frame, "frame")}\n`;
}

export function buildResponse(id: JsonRpcId, result: unknown): JsonRpcResponse {
  return { jsonrpc: JSONRPC_VERSION, id, result };
}

export function buildErrorResponse(
  id: JsonRpcId,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcErrorResponse {
  return data === undefined
    ? { jsonrpc: JSONRPC_VERSION, id, error: { code, message } }
    : { jsonrpc: JSONRPC_VERSION, id, error: { code, message, data } };
}
