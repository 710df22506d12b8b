#!/usr/bin/env node
// The ONE generic child of the plugin conformance kit: it plays the child side of a scenario
// exactly, step by step, with no SDK (plain Node, JSON lines on stdin/stdout). See
// docs/plugins.md, "Conformance scenarios".
//
//   node scripted-child.mjs <scenario.json>        (or CONFORMANCE_SCENARIO=<scenario.json>)
//
// CONFORMANCE_REPORT=<file>: progress is appended there as JSON lines (start, step, done,
// complete, mismatch, unexpected, exit). The same file counts the spawns, so the n-th spawn plays
// `child.runs[n]` (the last run repeats). Without it the report goes to stderr and
// CONFORMANCE_RUN picks the run (default 0).
//
// A frame that breaks the script is reported as a mismatch, after which the child exits with
// code 97 (MISMATCH_EXIT): a host test sees the report, not a hang.
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { match, show } from "./match.mjs";

const MISMATCH_EXIT = 97;
const TERMINAL_STEPS = new Set(["hang", "linger", "stop_reading"]);
/** The step being played, for reports; -1 before the first. */
let currentStep = -1;

const scenarioPath = process.argv[2] ?? process.env.CONFORMANCE_SCENARIO;
if (!scenarioPath) {
  process.stderr.write("usage: scripted-child.mjs <scenario.json> (or CONFORMANCE_SCENARIO)\n");
  process.exit(2);
}
const scenario = JSON.parse(readFileSync(scenarioPath, "utf8"));
const reportPath = process.env.CONFORMANCE_REPORT;
const runIndex = reportPath ? countStarts(reportPath) : Number(process.env.CONFORMANCE_RUN ?? 0);
const runs = scenario.child?.runs ?? [];
const run = runs[Math.min(runIndex, runs.length - 1)];
if (run === undefined) fail("the scenario has no child.runs");
const manifestPlugin = scenario.manifest?.plugin ?? {};

function countStarts(path) {
  if (!existsSync(path)) return 0;
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "" && JSON.parse(line).event === "start").length;
}

function report(entry) {
  const line = `${JSON.stringify({ run: runIndex, ...entry })}\n`;
  // Synchronous, so the report survives process.exit and SIGKILL.
  if (reportPath) appendFileSync(reportPath, line);
  else process.stderr.write(`conformance: ${line}`);
}

function fail(problem, extra = {}) {
  report({ event: "mismatch", step: currentStep, problem, ...extra });
  process.stderr.write(`conformance: step ${currentStep}: ${problem}\n`);
  process.exit(MISMATCH_EXIT);
}

// --- output ------------------------------------------------------------------------------------

/** Writes bytes and resolves once the pipe took them, so frames keep the script's order. */
function write(data) {
  return new Promise((resolve) => process.stdout.write(data, () => resolve()));
}
const send = (frame) => write(`${JSON.stringify({ jsonrpc: "2.0", ...frame })}\n`);

// --- input ---------------------------------------------------------------------------------------

/** Host requests and notifications, in arrival order; each `expect_*` step takes the first. */
const inbox = [];
/** The child's own requests by id: {label, sentAt, deltas, response, arrivedAt}. */
const ownRequests = new Map();
const labels = new Map();
let wake = () => {};
let mode = "script"; // script → (complete | hang | linger | stopped)
let inputEnded = false;
let rest = Buffer.alloc(0);

function onData(chunk) {
  rest = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
  for (let newline = rest.indexOf(0x0a); newline !== -1; newline = rest.indexOf(0x0a)) {
    const line = rest.subarray(0, newline).toString("utf8").trim();
    rest = rest.subarray(newline + 1);
    if (line !== "") onLine(line);
  }
}

function onLine(line) {
  if (mode === "hang" || mode === "linger") return;
  let frame;
  try {
    frame = JSON.parse(line);
  } catch {
    fail(`the host sent a line that is not JSON: ${show(line)}`);
  }
  if (typeof frame.method !== "string") {
    const own = ownRequests.get(frame.id);
    if (own === undefined || own.response !== undefined) {
      fail(`the host answered an id the child never used (or answered twice): ${show(frame)}`);
    }
    own.response = frame;
    own.arrivedAt = Date.now();
  } else if (frame.method.endsWith(".delta") && ownRequests.has(frame.params?.request_id)) {
    ownRequests.get(frame.params.request_id).deltas.push(frame.params.chunk);
  } else {
    inbox.push(frame);
  }
  if (mode === "complete") serveAfterScript();
  wake();
}

process.stdin.on("data", onData);
process.stdin.on("end", () => {
  inputEnded = true;
  if (mode === "complete") {
    report({ event: "exit", code: 0, why: "stdin closed" });
    process.exit(0);
  }
  wake();
});

/** Resolves with `check()` once it returns something other than undefined. */
async function until(what, check) {
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (inputEnded && mode === "script") fail(`stdin closed while waiting for ${what}`);
    await new Promise((resolve) => {
      wake = resolve;
    });
  }
}

// --- steps ---------------------------------------------------------------------------------------

let ownIds = 0;

function checkMatch(what, expected, actual, frame) {
  if (expected === undefined) return;
  const problems = match(expected, actual);
  if (problems.length > 0) fail(`${what}: ${problems.join("; ")}`, { frame });
}

async function nextHostFrame(what) {
  return until(what, () => inbox.shift());
}

/** Sends the reply a step scripted for host request `id` (after `delay_ms`, without blocking). */
function scheduleReply(id, method, reply) {
  if (reply === undefined) return;
  const go = async () => {
    for (const chunk of reply.deltas ?? []) {
      await send({ method: `${method}.delta`, params: { request_id: id, chunk } });
    }
    if (reply.none === true) return;
    if ("error" in reply) await send({ id, error: reply.error });
    else await send({ id, result: reply.result });
  };
  if (reply.delay_ms > 0) setTimeout(go, reply.delay_ms);
  else return go();
}

async function expectRequest(step) {
  const frame = await nextHostFrame(`a ${step.method} request`);
  if (frame.method !== step.method || frame.id === undefined || frame.id === null) {
    fail(`expected a ${step.method} request, got ${show(frame)}`, { frame });
  }
  checkMatch(`${step.method} params`, step.params, frame.params, frame);
  if (step.as !== undefined) labels.set(step.as, { id: frame.id, method: frame.method });
  checkpoint();
  await scheduleReply(frame.id, frame.method, step.reply);
}

const STEPS = {
  handshake: async (step) => {
    const id = step.id ?? manifestPlugin.id;
    const version = step.version ?? manifestPlugin.version ?? "0.1.0";
    await expectRequest({
      method: "initialize",
      params: step.params ?? { nexo_version: { $type: "string" } },
      reply: {
        result: {
          manifest: { plugin: { id, version } },
          server_version: step.server_version ?? `${id}-${version}`,
          ...(step.tools === undefined ? {} : { tools: step.tools }),
        },
      },
    });
  },

  expect_request: expectRequest,

  expect_notification: async (step) => {
    for (let i = 0; i < (step.count ?? 1); i++) {
      const frame = await nextHostFrame(`a ${step.method} notification`);
      if (frame.method !== step.method || (frame.id !== undefined && frame.id !== null)) {
        fail(`expected a ${step.method} notification, got ${show(frame)}`, { frame });
      }
      checkMatch(`${step.method} params`, step.params, frame.params, frame);
    }
  },

  reply: async (step) => {
    const target = labels.get(step.to);
    if (target === undefined) fail(`reply to unknown label "${step.to}"`);
    checkpoint();
    await scheduleReply(target.id, target.method, step);
  },

  send_request: async (step) => {
    const id = ++ownIds;
    ownRequests.set(id, { label: step.as, sentAt: Date.now(), deltas: [], response: undefined });
    labels.set(step.as, { own: id });
    checkpoint();
    await send({ id, method: step.method, params: step.params });
  },

  expect_response: async (step) => {
    const own = ownRequests.get(labels.get(step.to)?.own);
    if (own === undefined) fail(`expect_response for unknown label "${step.to}"`);
    const frame = await until(`the host's answer to "${step.to}"`, () => own.response);
    if (step.error !== undefined) {
      if (frame.error === undefined || frame.error === null) fail(`expected an error, got ${show(frame)}`);
      checkMatch("error", step.error, frame.error, frame);
    } else if (frame.error !== undefined && frame.error !== null) {
      fail(`expected a result, got the error ${show(frame.error)}`, { frame });
    }
    checkMatch("result", step.result, frame.result, frame);
    checkMatch("deltas", step.deltas, own.deltas, frame);
    const took = own.arrivedAt - own.sentAt;
    if (step.within_ms !== undefined && took > step.within_ms) {
      fail(`the answer to "${step.to}" took ${took} ms, more than ${step.within_ms} ms`);
    }
  },

  send_notification: (step) => {
    checkpoint();
    return send({ method: step.method, params: step.params });
  },

  send_raw: (step) => {
    let bytes;
    if (step.pad_to_bytes !== undefined) {
      // "{pad}" in the text grows with "x" until the line (newline excluded) is pad_to_bytes long.
      const fixed = Buffer.byteLength(step.text.replace("{pad}", ""), "utf8");
      bytes = Buffer.from(step.text.replace("{pad}", "x".repeat(step.pad_to_bytes - fixed)), "utf8");
    } else if (step.text !== undefined) bytes = Buffer.from(step.text, "utf8");
    else if (step.hex !== undefined) bytes = Buffer.from(step.hex.replace(/\s+/g, ""), "hex");
    else bytes = Buffer.alloc(step.fill.count, step.fill.byte ?? "x");
    checkpoint();
    return write(step.newline === false ? bytes : Buffer.concat([bytes, Buffer.from("\n")]));
  },

  sleep: (step) => new Promise((resolve) => setTimeout(resolve, step.ms)),

  exit: async (step) => {
    checkpoint();
    report({ event: "exit", code: step.code, why: "scripted" });
    await write("");
    process.exit(step.code);
  },

  kill_self: async (step) => {
    checkpoint();
    report({ event: "exit", signal: step.signal, why: "scripted" });
    await write("");
    process.kill(process.pid, step.signal);
  },

  // Terminal steps: the child stays alive until the host ends it.
  hang: () => {
    mode = "hang";
    keepAlive();
  },
  linger: () => {
    mode = "linger";
    process.on("SIGTERM", () => report({ event: "sigterm_ignored" }));
    keepAlive();
  },
  stop_reading: () => {
    mode = "stopped";
    process.stdin.pause();
    keepAlive();
  },
};

let checkpointed = false;

/**
 * The current step passed its checks. Reported BEFORE the step's last write: that write may
 * make the host kill this process (a refused handshake, a crash scenario), and the report must
 * still show that the child did its part. The last step of a run also completes the run.
 */
function checkpoint() {
  if (checkpointed) return;
  checkpointed = true;
  report({ event: "done", step: currentStep });
  if (currentStep === run.steps.length - 1) report({ event: "complete", last: run.steps[currentStep].do });
}

function keepAlive() {
  setInterval(() => {}, 60_000);
}

/** After the last step: answer `shutdown` and exit; anything else was not in the script. */
function serveAfterScript() {
  while (inbox.length > 0) {
    const frame = inbox.shift();
    if (frame.method === "shutdown" && frame.id !== undefined && frame.id !== null) {
      report({ event: "shutdown_acknowledged" });
      send({ id: frame.id, result: { ok: true } }).then(() => {
        report({ event: "exit", code: 0, why: "shutdown" });
        process.exit(0);
      });
      return;
    }
    report({ event: "unexpected", frame });
    process.stderr.write(`conformance: unexpected frame after the script: ${show(frame)}\n`);
  }
}

async function play() {
  report({ event: "start", pid: process.pid, steps: run.steps.length });
  for (const [index, step] of run.steps.entries()) {
    currentStep = index;
    const action = STEPS[step.do];
    if (action === undefined) fail(`unknown step "${step.do}"`);
    report({ event: "step", step: index, do: step.do });
    checkpointed = false;
    await action(step);
    checkpoint();
    // hang, linger and stop_reading keep the process as they left it.
    if (TERMINAL_STEPS.has(step.do)) return;
  }
  mode = "complete";
  if (inputEnded) {
    report({ event: "exit", code: 0, why: "stdin closed" });
    process.exit(0);
  }
  serveAfterScript();
}

play().catch((error) => fail(`the child failed: ${error.stack ?? error}`));
