import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { createLogger, resolveLevel } from "../src/log.js";
import { withoutLocalDateMethods } from "./helpers/local-date-methods.js";

function capture(level?: string) {
  const out = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  out.on("data", (d: Buffer) => {
    for (const l of d.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(l));
  });
  const logger = createLogger({ level, destination: out, env: {} });
  return { logger, lines };
}

test("NEXO_LOG picks the level; unknown names fall back to info with a warning", () => {
  assert.deepEqual(resolveLevel("DEBUG"), { level: "debug" });
  assert.deepEqual(resolveLevel(undefined), { level: "info" });
  const bad = resolveLevel("loud");
  assert.equal(bad.level, "info");
  assert.match(bad.warning ?? "", /NEXO_LOG=loud is not a level/);
});

test("levels below the threshold are not written", () => {
  const { logger, lines } = capture("warn");
  logger.info("hidden");
  logger.warn("shown");
  assert.deepEqual(
    lines.map((l) => l.msg),
    ["shown"],
  );
});

test("secrets under well-known keys are redacted", () => {
  const { logger, lines } = capture("info");
  logger.info(
    { api_key: "sk-live-123", provider: { apiKey: "k2", name: "x" }, headers: { authorization: "Bearer t" } },
    "calling",
  );
  const line = JSON.stringify(lines[0]);
  assert.doesNotMatch(line, /sk-live-123|k2|Bearer t/);
  assert.equal((lines[0]!.provider as { name: string }).name, "x");
  assert.equal(lines[0]!.api_key, "[REDACTED]");
});

test("every line carries its time as toISOString writes it, taken when the line is written", () => {
  const { logger, lines } = capture("info");
  const before = Date.now();
  // Without the Date methods that reach ICU's time-zone data (toISOString among them): the first
  // of them would page in ~0.9 MB of ICU for the process's life (src/iso-time.ts).
  withoutLocalDateMethods(() => logger.info("stamped"));
  const after = Date.now();
  const time = lines[0]!.time as string;
  assert.equal(typeof time, "string");
  assert.equal(new Date(time).toISOString(), time);
  const ms = Date.parse(time);
  assert.ok(ms >= before && ms <= after, `${time} not within the call`);
});
