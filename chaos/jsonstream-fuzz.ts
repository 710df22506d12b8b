/**
 * Attack: fuzzed frames against the real `nexo agent --json-stream` (issue 10.19).
 *
 * fast-check generates frames of six kinds — text that is not JSON, JSON that is not a command,
 * real commands with one field broken or missing, bytes that are not UTF-8, lines over the 1 MiB
 * limit, and deeply nested JSON — and keeps only the frames the protocol's own command schema
 * refuses (a frame that happens to be a valid command is not sent). They are written to one
 * process as fast as its stdin takes them, with a `ping` every 1,000 frames.
 *
 * Property: the process never exits; every bad frame is answered by exactly one typed `error`
 * event (`protocol_error`), every line on stdout is a valid protocol event, every ping gets its
 * pong, and afterwards a valid `message` still runs a whole turn against the mock LLM.
 */
import { isUtf8 } from "node:buffer";
import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { MockLlmServer } from "@nexo/mock-llm";
import * as jsonstream from "@nexo/wire/schemas/jsonstream";
import fc from "fast-check";
import { type Event, JsonStreamClient } from "../packages/nexo/test/helpers/jsonstream-client.js";
import { runAttack } from "./lib.js";

const MAX_FRAME = 1 << 20;
const PING_EVERY = 1_000;

/** One valid example of every command: the mutations start from these. */
const COMMANDS: Array<Record<string, unknown>> = [
  { type: "message", msg_id: "m", input: "hi" },
  { type: "message", msg_id: "m", content: "hi", files: ["a.txt"] },
  { type: "stop" },
  { type: "tool_approve", call_id: "c1", scope: "once" },
  { type: "tool_deny", call_id: "c1", reason: "no" },
  { type: "init_history", text: "earlier" },
  { type: "set_mode", mode: "yolo" },
  { type: "ping" },
  { type: "add_mcp_server", name: "s", transport: "stdio", command: "true", args: [], env: {} },
  { type: "set_config", model: "m2", thinking: "enabled", thinking_budget: 1000 },
];

const isValidCommand = (value: unknown) => jsonstream.JsonStreamCommandSchema.safeParse(value).success;

/** A command with one field replaced by a value of another kind, deleted, or its type misspelt. */
const brokenCommand = fc
  .tuple(fc.constantFrom(...COMMANDS), fc.nat(), fc.jsonValue(), fc.constantFrom("replace", "delete", "type"))
  .map(([command, pick, value, how]) => {
    const copy: Record<string, unknown> = { ...command };
    const keys = Object.keys(copy);
    const key = keys[pick % keys.length]!;
    if (how === "delete") delete copy[key];
    else if (how === "type") copy.type = `${String(copy.type)}${typeof value === "string" ? value : "_x"}`;
    else copy[key] = value;
    return JSON.stringify(copy);
  });

const notJson = fc.string({ unit: "grapheme", maxLength: 100 }).filter((text) => {
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
});

const notACommand = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value));

const notUtf8 = fc
  .uint8Array({ minLength: 1, maxLength: 64 })
  .map((bytes) => Buffer.from(bytes.map((b) => (b === 0x0a ? 0xff : b))))
  .filter((bytes) => !isUtf8(bytes));

const deepNesting = fc
  .integer({ min: 100, max: 5_000 })
  .map((depth) => `${"[".repeat(depth)}${"]".repeat(depth - 1)}`);

const oversize = fc
  .integer({ min: MAX_FRAME + 1, max: MAX_FRAME + 4096 })
  .map((size) => `{"type":"message","msg_id":"big","input":"${"x".repeat(size)}"}`);

/** A frame on one line: the newline would make it two frames. */
const oneLine = (text: string) => text.replace(/\n/g, " ");

/** True for what the decoder skips without a word (blank lines are allowed between frames). */
const blank = (frame: Buffer) => frame.every((b) => b === 0x20 || b === 0x09 || b === 0x0d);

function batch(size: number, seed: number, withOversize: boolean): Buffer[] {
  const arbitrary = fc.oneof(
    { weight: 4, arbitrary: brokenCommand },
    { weight: 3, arbitrary: notJson },
    { weight: 3, arbitrary: notACommand },
    { weight: 1, arbitrary: deepNesting },
  );
  const frames: Buffer[] = fc
    .sample(arbitrary, { numRuns: size, seed })
    .map((text) => Buffer.from(oneLine(text)))
    .filter((frame) => !blank(frame))
    .filter((frame) => {
      try {
        return !isValidCommand(JSON.parse(frame.toString("utf8")));
      } catch {
        return true;
      }
    });
  frames.push(...fc.sample(notUtf8, { numRuns: Math.ceil(size / 50), seed }).filter((f) => !blank(f)));
  if (withOversize) frames.push(Buffer.from(fc.sample(oversize, { numRuns: 1, seed })[0]!));
  return frames;
}

await runAttack("jsonstream-fuzz", async (attack) => {
  const target = attack.pick(5_000, 100_000);
  const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 2 ** 31);
  attack.note(`seed ${seed} (CHAOS_SEED=${seed} replays this run)`);

  const mock = new MockLlmServer({ script: [{ text: "still answering after the fuzz" }] });
  await mock.start();
  attack.defer(() => mock.close());
  const workspace = attack.tempDir("fuzz-ws");
  const client = new JsonStreamClient(
    ["--provider", "anthropic", "--model", "claude-test", "--workspace", workspace],
    {
      env: { ANTHROPIC_API_KEY: "chaos-key", ANTHROPIC_BASE_URL: mock.url },
      stateDir: attack.tempDir("fuzz-state"),
    },
  );
  attack.defer(() => client.kill("SIGKILL"));
  await client.waitFor((e) => e.type === "ready", 30_000);
  const afterReady = client.events.length;

  let sent = 0;
  let pings = 0;
  let bytes = 0;
  let oversized = 0;
  let generating = 0;
  const started = performance.now();
  for (let round = 0; sent < target; round++) {
    // An oversize line costs a mebibyte: one in every tenth batch.
    const genStart = performance.now();
    const frames = batch(Math.min(2_000, target - sent), seed + round, round % 10 === 0);
    generating += performance.now() - genStart;
    let chunk: Buffer[] = [];
    for (const frame of frames) {
      if (frame.length > MAX_FRAME) oversized++;
      chunk.push(frame, Buffer.from("\n"));
      bytes += frame.length + 1;
      sent++;
      if (sent % PING_EVERY === 0) {
        chunk.push(Buffer.from('{"type":"ping"}\n'));
        pings++;
      }
      if (chunk.length >= 512) {
        await client.write(Buffer.concat(chunk));
        chunk = [];
      }
    }
    await client.write(Buffer.concat(chunk));
    if (!client.running) break;
  }
  // The last ping: its pong comes after the answer to every frame before it.
  await client.write('{"type":"ping"}\n');
  pings++;
  const allAnswered = await pongsReach(client, pings, 300_000);
  const seconds = (performance.now() - started) / 1000;

  const events: Event[] = client.events.slice(afterReady);
  const errors = events.filter((e) => e.type === "error");
  const typed = errors.filter((e) => (e.error as { code?: string } | undefined)?.code === "protocol_error");
  const invalid = events.filter((e) => !jsonstream.JsonStreamEventSchema.safeParse(e).success);
  const others = events.filter((e) => e.type !== "error" && e.type !== "pong");

  attack.figure("bad frames sent", sent);
  attack.figure("of them over the 1 MiB limit", oversized);
  attack.figure("bytes sent", bytes, "B");
  attack.figure("frames per second", sent / seconds, "/s");
  attack.figure("of the time, generating frames", generating / 1000, "s");
  attack.figure("protocol_error events", typed.length);
  attack.figure("pongs", events.filter((e) => e.type === "pong").length);
  attack.expect(sent >= target, `only ${sent} of ${target} frames could be sent`);
  attack.expect(client.running, `the process exited: ${client.stderr.slice(-2000)}`);
  attack.expect(allAnswered, `the last ping was never answered (${pings} sent)`);
  attack.expect(typed.length === sent, `${sent} bad frames got ${typed.length} protocol_error events`);
  attack.expect(errors.length === typed.length, `${errors.length - typed.length} errors of another code`);
  attack.expect(invalid.length === 0, `${invalid.length} lines on stdout are not protocol events`);
  attack.expect(others.length === 0, `${others.length} unexpected events, e.g. ${JSON.stringify(others[0])}`);

  // Still a working agent.
  const turnStart = performance.now();
  const turn = await client.turn("after-fuzz", "are you still there?").catch((error: Error) => error);
  const answered =
    !(turn instanceof Error) &&
    turn.some((e) => e.type === "text_delta" && String(e.text).includes("still answering"));
  attack.figure("valid turn afterwards", performance.now() - turnStart, "ms");
  attack.expect(answered, `a valid message afterwards was not answered: ${String(turn)}`);
  const status = client.pid === undefined ? "" : await readFile(`/proc/${client.pid}/status`, "utf8");
  const rss = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  attack.figure("peak RSS of the agent process", rss / 1024, "MiB");
  client.end();
  const exit = await Promise.race([client.exited, new Promise((r) => setTimeout(r, 20_000, undefined))]);
  attack.expect(
    (exit as { code?: number } | undefined)?.code === 0,
    `stdin EOF did not end the process with 0: ${JSON.stringify(exit)}`,
  );
});

/** Waits until `count` pongs have arrived (pongs come in order, after everything sent before). */
async function pongsReach(client: JsonStreamClient, count: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let seen = 0;
  let scanned = 0;
  while (Date.now() < deadline && client.running) {
    for (; scanned < client.events.length; scanned++) if (client.events[scanned]!.type === "pong") seen++;
    if (seen >= count) return true;
    await sleep(50);
  }
  return false;
}
