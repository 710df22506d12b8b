/**
 * docs/admin-rpc.md keeps its promise of an example for every method: each JSON block is read frame
 * by frame (frames are separated by a blank line), every frame parses, every request's params pass
 * its method's schema, every result passes the result schema of the request before it with the
 * same id, and every method of the table (nexo/dispatch included) has a request and a result shown.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { formatIssues } from "@nexo/wire";
import { OUTBOUND_METHOD_NAMES, type OutboundMethodName, outboundMethods } from "../../src/admin/methods.js";

const DOC = new URL("../../../../docs/admin-rpc.md", import.meta.url);

interface Frame {
  id?: string | number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number };
}

function framesOf(markdown: string): Frame[] {
  const frames: Frame[] = [];
  for (const [, block] of markdown.matchAll(/```json\n([\s\S]*?)```/g))
    for (const chunk of block!.split(/\n\s*\n/)) {
      if (chunk.trim() === "") continue;
      try {
        frames.push(JSON.parse(chunk) as Frame);
      } catch (error) {
        assert.fail(`a JSON example does not parse (${(error as Error).message}):\n${chunk}`);
      }
    }
  return frames;
}

const known = (method: string | undefined): method is OutboundMethodName =>
  method !== undefined && Object.hasOwn(outboundMethods, method);

describe("docs/admin-rpc.md examples", () => {
  const frames = framesOf(readFileSync(DOC, "utf8"));

  it("every request and result shown passes its method's schemas", () => {
    const pending = new Map<string | number, OutboundMethodName>();
    let checked = 0;
    for (const frame of frames) {
      if (frame.method !== undefined) {
        if (!known(frame.method)) continue; // a notification or another protocol's frame
        const parsed = outboundMethods[frame.method].params.safeParse(frame.params);
        assert.ok(
          parsed.success,
          `${frame.method} params: ${parsed.success ? "" : formatIssues(parsed.error.issues, "(params)")}`,
        );
        if (frame.id !== undefined) pending.set(frame.id, frame.method);
        checked++;
        continue;
      }
      if (frame.result === undefined || frame.id === undefined) continue;
      const method = pending.get(frame.id);
      assert.ok(method, `the result of ${frame.id} follows no request with that id`);
      const parsed = outboundMethods[method].result.safeParse(frame.result);
      assert.ok(
        parsed.success,
        `${method} result: ${parsed.success ? "" : formatIssues(parsed.error.issues, "(result)")}`,
      );
      checked++;
    }
    assert.ok(checked > 100, `only ${checked} frames checked`);
  });

  it("shows a request and a result for every method of the table", () => {
    const requested = new Set<string>();
    const answered = new Set<string>();
    const pending = new Map<string | number, string>();
    for (const frame of frames) {
      if (known(frame.method)) {
        requested.add(frame.method);
        if (frame.id !== undefined) pending.set(frame.id, frame.method);
      } else if (frame.result !== undefined && frame.id !== undefined) {
        const method = pending.get(frame.id);
        if (method !== undefined) answered.add(method);
      }
    }
    assert.deepEqual(
      OUTBOUND_METHOD_NAMES.filter((method) => !requested.has(method)),
      [],
      "methods with no request example",
    );
    assert.deepEqual(
      OUTBOUND_METHOD_NAMES.filter((method) => !answered.has(method)),
      [],
      "methods with no result example",
    );
  });
});
