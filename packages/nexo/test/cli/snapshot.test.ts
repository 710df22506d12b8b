/**
 * `nexo agent` started from its startup snapshot (cli/snapshot-start.ts),
 * through bin/nexo exactly as a user's `nexo` runs them. Each test first checks, from
 * /proc/<pid>/cmdline, that the process really started from the blob (else it would compare the
 * ES module entry with itself). What is pinned:
 *
 * - the one-shot gives the same json-stream lines as the ES module entry (ids aside);
 * - nothing of one run is in the snapshot: two runs choose unrelated session ids (uuid's random
 *   pool fills at run time), the secrets leave /proc/<pid>/environ at start, a variable set at
 *   build time is not in the blob (a blob is built here with a canary secret in the environment),
 *   and the scripts' top level reads no randomness, clock, host, pid or environment of nexo's own;
 * - a launch neither the fast start nor the door takes (help, version, usage errors, a missing
 *   `--json-stream`) is commander's, in the blob's one process: the same output and exit status as
 *   the ES module entry, and no second node (counted by the coverage file each node writes);
 * - SIGTERM ends an idle session as it does from the ES module entry.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MockLlmServer } from "@nexo/mock-llm";
import { CLI_PATH } from "../helpers/cli.js";

const LAUNCHER = fileURLToPath(new URL("../../bin/nexo", import.meta.url));
const SNAPSHOT_DIR = fileURLToPath(new URL("../../bundle/snapshot/", import.meta.url));
const BUILD_SNAPSHOT = fileURLToPath(new URL("../../bin/build-snapshot.mjs", import.meta.url));
const ANSWER = "The answer is 42.";
const SECRET = "sk-ant-snapshot-test-0123456789abcdef";

const dirs: string[] = [];
const tempDir = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `nexo-snapshot-${name}-`));
  dirs.push(dir);
  return dir;
};

let mock: MockLlmServer;
before(async () => {
  mock = new MockLlmServer();
  await mock.start();
});
after(async () => {
  await mock.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Started {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with each stdout line as it comes (`next()`), and everything at the end. */
  lines: AsyncIterator<string>;
  /** node's command line, read from /proc once the first line came. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string[]; stderr: string }>;
}

function start(command: string[], env: NodeJS.ProcessEnv, input?: string): Started {
  const child = spawn(command[0]!, command.slice(1), {
    env: { PATH: process.env.PATH, NEXO_LOG: "warn", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const all: string[] = [];
  const waiting: Array<(line: IteratorResult<string>) => void> = [];
  const queued: string[] = [];
  let ended = false;
  let buffered = "";
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdout.setEncoding("utf8").on("data", (data: string) => {
    buffered += data;
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      all.push(line);
      const waiter = waiting.shift();
      if (waiter) waiter({ value: line, done: false });
      else queued.push(line);
    }
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const done = new Promise<Awaited<Started["done"]>>((resolve) => {
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      ended = true;
      for (const waiter of waiting.splice(0)) waiter({ value: undefined, done: true });
      resolve({ code, signal, stdout: all, stderr });
    });
  });
  // A launch that never reads stdin (`--help`, a refusal) may exit before the input is written:
  // the write then fails with EPIPE, which says nothing about the launch compared here.
  child.stdin.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
  if (input !== undefined) child.stdin.end(input);
  const lines: AsyncIterator<string> = {
    next: () =>
      new Promise((resolve) => {
        const line = queued.shift();
        if (line !== undefined) resolve({ value: line, done: false });
        else if (ended) resolve({ value: undefined, done: true });
        else waiting.push(resolve);
      }),
  };
  return { child, lines, done };
}

/** node's argv of a running process. */
function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, -1);
}

function agentEnv(state: string): NodeJS.ProcessEnv {
  return { NEXO_STATE_DIR: state, ANTHROPIC_API_KEY: SECRET, ANTHROPIC_BASE_URL: mock.url };
}

const QUESTION = `${JSON.stringify({ type: "message", msg_id: "q", input: "What is the answer?" })}\n`;
const AGENT = ["agent", "--json-stream", "--provider", "anthropic", "--model", "claude-test"];

/** A one-shot through `command`: its lines, and node's command line and environ seen at `ready`. */
async function oneShot(command: string[], workspace: string, state: string) {
  mock.reset([{ text: ANSWER }]);
  const run = start([...command, ...AGENT, "--workspace", workspace], agentEnv(state));
  const first = await run.lines.next();
  assert.equal(first.done, false, "a first line");
  const cmdline = commandLine(run.child.pid!);
  const environ = readFileSync(`/proc/${run.child.pid}/environ`, "latin1");
  run.child.stdin.end(QUESTION);
  const end = await run.done;
  assert.equal(end.code, 0, end.stderr);
  return { lines: end.stdout.map((line) => JSON.parse(line) as Record<string, unknown>), cmdline, environ };
}

describe("nexo agent from its startup snapshot", () => {
  test("the blobs are built, by the node on PATH", () => {
    const blobs = readdirSync(SNAPSHOT_DIR).filter((name) => name.endsWith(".blob"));
    assert.deepEqual(blobs.sort(), ["agent.blob"]);
    const built = readFileSync(join(SNAPSHOT_DIR, "node"), "utf8").trim();
    assert.equal(execFileSync("sh", ["-c", "command -v node"], { encoding: "utf8" }).trim(), built);
  });

  test("answers a one-shot with the same lines as the ES module entry, in a process that started from the blob", async () => {
    const workspace = tempDir("ws");
    const fromBlob = await oneShot([LAUNCHER], workspace, tempDir("state"));
    const fromModules = await oneShot([process.execPath, CLI_PATH], workspace, tempDir("state"));
    assert.ok(fromBlob.cmdline.includes("--snapshot-blob"), fromBlob.cmdline.join(" "));
    assert.ok(!fromModules.cmdline.includes("--snapshot-blob"));
    const session = (lines: Record<string, unknown>[]) => lines[0]!.session_id as string;
    const same = (lines: Record<string, unknown>[]) =>
      JSON.parse(JSON.stringify(lines).replaceAll(session(lines), "SESSION")) as unknown;
    assert.deepEqual(same(fromBlob.lines), same(fromModules.lines));
    assert.deepEqual(
      fromBlob.lines.map((line) => line.type),
      ["ready", "stream_start", "text_delta", "stream_end"],
    );
    // The key was captured at start: gone from what other processes of the user can read.
    assert.ok(!fromBlob.environ.includes(SECRET));
    assert.ok(!fromModules.environ.includes(SECRET));
  });

  test("two runs choose unrelated session ids", async () => {
    const workspace = tempDir("ws");
    const state = tempDir("state");
    const ids = [];
    for (let i = 0; i < 2; i++)
      ids.push((await oneShot([LAUNCHER], workspace, state)).lines[0]!.session_id as string);
    // UUIDv7: 48 bits of time, then the version, 12 random bits, the variant, 62 random bits.
    const random = (id: string) => id.replaceAll("-", "").slice(13);
    assert.notEqual(random(ids[0]!), random(ids[1]!));
    assert.notEqual(random(ids[0]!).slice(4), random(ids[1]!).slice(4));
  });

  test("a launch only commander takes is served in the blob's one process, as the ES module entry serves it", async () => {
    const state = tempDir("state");
    const workspace = tempDir("ws");
    const shapes = [
      ["--help"],
      ["-h"],
      ["--json-stream", "--help"],
      ["--log-format", "json", "--help"],
      ["--version"],
      ["-V"],
      ["--bogus"],
      ["--json-stream", "--bogus"],
      ["--json-stream", "--max-turns", "0"],
      ["--max-tokens", "abc", "--json-stream"],
      ["--json-stream", "--provider"],
      ["--json-stream", "--log-format", "nope"],
      ["--json-stream", "extra"],
      // Without --json-stream: the command's own refusal (a json-stream error line, exit 2).
      ["--workspace", workspace],
    ];
    for (const shape of shapes) {
      const args = ["agent", ...shape];
      // Every node writes a coverage file named by its pid when it exits, whether it ran from the
      // blob or not: how many nodes ran, after the fact (they are gone before /proc could be read).
      const coverage = tempDir("coverage");
      const fromBlob = start([LAUNCHER, ...args], { ...agentEnv(state), NODE_V8_COVERAGE: coverage }, "");
      const fromModules = start([process.execPath, CLI_PATH, ...args], agentEnv(state), "");
      const [a, b] = await Promise.all([fromBlob.done, fromModules.done]);
      const what = args.join(" ");
      assert.deepEqual(
        { code: a.code, signal: a.signal, stdout: a.stdout, stderr: a.stderr },
        { code: b.code, signal: b.signal, stdout: b.stdout, stderr: b.stderr },
        what,
      );
      const nodes = readdirSync(coverage);
      assert.deepEqual(
        nodes.map((name) => name.split("-")[1]),
        [String(fromBlob.child.pid)],
        `${what}: one node, the launched process (${nodes.join(", ")})`,
      );
      const scripts = (
        JSON.parse(readFileSync(join(coverage, nodes[0]!), "utf8")) as { result: Array<{ url: string }> }
      ).result.map((script) => script.url);
      assert.ok(
        scripts.some((url) => url.endsWith("/bundle/snapshot/agent.cjs")),
        `${what}: started from the blob`,
      );
      assert.ok(
        !scripts.some((url) => url.endsWith("/bin/nexo.js")),
        `${what}: the ES module entry never ran`,
      );
    }
    // Help and usage errors go where commander sends them.
    const help = start([LAUNCHER, "agent", "--help"], agentEnv(state), "");
    const helpEnd = await help.done;
    assert.equal(helpEnd.code, 0);
    assert.equal(helpEnd.stdout[0], "Usage: nexo agent [options]");
    const bad = await start([LAUNCHER, "agent", "--bogus"], agentEnv(state), "").done;
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^error: unknown option '--bogus'\n\(run nexo agent --help for usage\)\n$/);
  });

  test("a launch naming its session (--session-id, then --resume) is served by the blob's own door, in one process", async () => {
    const state = tempDir("state");
    const workspace = tempDir("ws");
    for (const naming of [
      ["--session-id", "named"],
      ["--resume", "named"],
    ]) {
      mock.reset([{ text: ANSWER }]);
      const run = start([LAUNCHER, ...AGENT, "--workspace", workspace, ...naming], agentEnv(state));
      const ready = await run.lines.next();
      assert.equal(ready.done, false, "a first line");
      assert.equal((JSON.parse(ready.value as string) as { session_id: string }).session_id, "named");
      const pid = run.child.pid!;
      assert.ok(commandLine(pid).includes("--snapshot-blob"), commandLine(pid).join(" "));
      // No second start: the ES module entry would be this process's child.
      assert.equal(readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim(), "");
      run.child.stdin.end(QUESTION);
      const end = await run.done;
      assert.equal(end.code, 0, end.stderr);
      assert.deepEqual(
        end.stdout.map((line) => (JSON.parse(line) as { type: string }).type),
        ["ready", "stream_start", "text_delta", "stream_end"],
      );
    }
  });

  test("SIGTERM ends an idle session with status 0", async () => {
    const run = start([LAUNCHER, ...AGENT, "--workspace", tempDir("ws")], agentEnv(tempDir("state")));
    await run.lines.next();
    assert.ok(commandLine(run.child.pid!).includes("--snapshot-blob"));
    run.child.kill("SIGTERM");
    const end = await run.done;
    assert.equal(end.signal, null);
    assert.equal(end.code, 0, end.stderr);
  });
});

describe("what a snapshot holds", () => {
  test("nothing of the building environment", () => {
    // The package's layout: the script reads ../../package.json (the version) from its directory.
    const pkg = tempDir("build");
    const dir = join(pkg, "bundle", "snapshot");
    mkdirSync(dir, { recursive: true });
    cpSync(join(SNAPSHOT_DIR, "agent.cjs"), join(dir, "agent.cjs"));
    cpSync(fileURLToPath(new URL("../../package.json", import.meta.url)), join(pkg, "package.json"));
    const canary = "nexo-canary-4f1c2b9e7d";
    execFileSync(process.execPath, [BUILD_SNAPSHOT, "--dir", dir], {
      env: {
        PATH: process.env.PATH,
        ANTHROPIC_API_KEY: canary,
        NEXO_CANARY: canary,
        HOME: `/home/${canary}`,
      },
      stdio: "pipe",
    });
    const blob = readFileSync(join(dir, "agent.blob"));
    assert.ok(blob.length > 1_000_000);
    assert.equal(blob.indexOf(canary), -1);
    assert.equal(blob.indexOf(Buffer.from(canary, "utf16le")), -1);
  });

  test("the scripts' top level reads no randomness, clock, host, pid or environment of nexo's own", () => {
    const harness = join(tempDir("audit"), "audit.cjs");
    writeFileSync(harness, AUDIT);
    for (const script of ["agent.cjs"]) {
      const out = execFileSync(
        process.execPath,
        ["--enable-source-maps", harness, join(SNAPSHOT_DIR, script)],
        { encoding: "utf8", env: {} },
      );
      const reads = JSON.parse(out) as Array<{ what: string; where: string }>;
      const unexpected = reads.filter(({ what, where }) => !allowed(what, where));
      assert.deepEqual(unexpected, [], `${script} reads state of one run at its top level`);
    }
  });
});

/**
 * Reads at a snapshot script's top level that keep no run's state: pino's own pid, host name and
 * clock origin, for options nexo does not use (the logger passes its own `base` and `isoTime` when
 * it is created, at run time); NODE_V8_COVERAGE (Node's source maps and thread-stream, for coverage
 * runs only); and Node's own loader, with no frame of the script on the stack.
 */
function allowed(what: string, where: string): boolean {
  if (where.startsWith("node:")) return true;
  if (what === "env.NODE_V8_COVERAGE") return true;
  if (/node_modules\/pino\/(pino|lib\/time)\.js/.test(where))
    return /^(pid|hostname|Date\.now|hrtime)/.test(what);
  return false;
}

/**
 * Runs a snapshot script's top level as `node --build-snapshot` would, with the snapshot API
 * stubbed, and prints every read of per-run state with the first frame outside Node's own code
 * that made it (or Node's when none).
 */
const AUDIT = `
const v8 = require("node:v8");
v8.startupSnapshot.setDeserializeMainFunction = () => {};
const reads = [];
let auditing = false;
// Reading a stack maps it through the source map, which reads the clock and cwd: not the script's.
let noting = false;
const note = (what) => {
  if (!auditing || noting) return;
  noting = true;
  try {
    const frames = new Error().stack.split("\\n").slice(3).map((f) => f.trim());
    const own = frames.find((f) => !/node:|audit\\.cjs|<anonymous>/.test(f));
    const where = own ?? frames.find((f) => !f.includes("audit.cjs")) ?? "";
    reads.push({ what, where: where.replace(/^at .*?\\(/, "").replace(/^at /, "").replace(/^.*?node:/, "node:") });
  } finally {
    noting = false;
  }
};
process.env = new Proxy(process.env, {
  get(t, k) { if (typeof k === "string") note("env." + k); return t[k]; },
  has(t, k) { note("env." + String(k)); return k in t; },
  ownKeys(t) { note("env keys"); return Reflect.ownKeys(t); },
});
const wrap = (obj, name, label) => {
  const orig = obj[name];
  obj[name] = Object.assign(function (...a) { note(label); return orig.apply(this, a); }, orig);
  if (orig.bigint) obj[name].bigint = (...a) => { note(label + ".bigint"); return orig.bigint(...a); };
};
const crypto = require("node:crypto"), os = require("node:os");
for (const n of ["randomBytes", "randomFillSync", "randomFill", "randomUUID", "randomInt", "getRandomValues"]) wrap(crypto, n, n);
wrap(crypto.webcrypto, "getRandomValues", "getRandomValues");
wrap(Math, "random", "Math.random");
wrap(Date, "now", "Date.now");
wrap(performance, "now", "performance.now");
wrap(process, "hrtime", "hrtime");
wrap(process, "cwd", "cwd");
for (const n of ["hostname", "homedir", "userInfo", "networkInterfaces", "tmpdir"]) wrap(os, n, n);
for (const n of ["setTimeout", "setInterval", "setImmediate"]) wrap(globalThis, n, n);
for (const k of ["pid", "ppid", "argv", "stdout", "stderr", "stdin", "title"]) {
  const d = Object.getOwnPropertyDescriptor(process, k);
  Object.defineProperty(process, k, { configurable: true, get() { note(k); return d.get ? d.get.call(process) : d.value; } });
}
const RealDate = Date;
globalThis.Date = new Proxy(RealDate, { construct(t, a) { if (a.length === 0) note("new Date()"); return new t(...a); } });
const script = process.argv[2];
auditing = true;
require(script);
auditing = false;
process.stdout.write(JSON.stringify(reads));
`;
