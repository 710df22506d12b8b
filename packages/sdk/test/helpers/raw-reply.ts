/**
 * Reading a reply as the child wrote it: the raw stdout line, parsed, and checked key by key —
 * what strict hosts compare (issue 10.2), which a decoded RpcError would hide.
 */
import assert from "node:assert/strict";
import type { ScriptedHost } from "./scripted-host.js";

export type Frame = { jsonrpc?: unknown; id?: unknown; error?: Record<string, unknown>; result?: unknown };

/** Sends a raw request and returns the raw reply line the child wrote for it, parsed. */
export async function rawReply(
  host: ScriptedHost,
  id: number | string | null,
  method: string,
  params?: unknown,
): Promise<Frame> {
  host.writeRaw(
    `${JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })}\n`,
  );
  const line = await host.until(`the reply to id ${JSON.stringify(id)}`, () =>
    host.stdoutLines.find((l) => (JSON.parse(l) as Frame).id === id),
  );
  return JSON.parse(line) as Frame;
}

/** The frame is an error reply of `code` with exactly `{code, message}`, or `data` of exactly `dataKeys`. */
export function assertErrorKeys(frame: Frame, code: number, dataKeys?: string[]): void {
  assert.deepEqual(Object.keys(frame).sort(), ["error", "id", "jsonrpc"], JSON.stringify(frame));
  const error = frame.error!;
  assert.equal(error.code, code, JSON.stringify(frame));
  assert.equal(typeof error.message, "string");
  if (dataKeys === undefined) {
    assert.deepEqual(Object.keys(error).sort(), ["code", "message"], JSON.stringify(frame));
  } else {
    assert.deepEqual(Object.keys(error).sort(), ["code", "data", "message"], JSON.stringify(frame));
    assert.deepEqual(Object.keys(error.data as object).sort(), dataKeys.sort(), JSON.stringify(frame));
  }
}
