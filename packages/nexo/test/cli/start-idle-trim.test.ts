/**
 * `nexo start` gives memory back once it is idle after start-up (daemon/idle-trim.ts): its debug
 * line reports V8's resident heap before and after the memory-reducing collection, and
 * NEXO_IDLE_TRIM=off keeps it from running. What the idle daemon holds after that first trim: not
 * the modules only the trim used (node:inspector and the worker_threads it requires), not
 * node:perf_hooks (the clocks read process.hrtime and process.cpuUsage), not
 * prom-client before the first metric, and after a scrape only the prom-client parts the metrics
 * use (daemon/metrics.ts), without the package's Pushgateway client and its https, TLS and zlib, or
 * the OpenTelemetry API.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startDaemonProcess } from "../helpers/daemon-process.js";
import { demoToolsConfigDir } from "../helpers/demo-config.js";

const TRIM_LINE = /^.*"msg":"idle: gave memory back".*$/m;

/** Starts the daemon, returns its stderr `settleMs` after the ready line, and stops it. */
async function idleDaemon(env: Record<string, string>, settleMs: number): Promise<string> {
  const dir = demoToolsConfigDir("nexo-start-idle-trim-");
  try {
    const daemon = await startDaemonProcess({
      config: dir,
      stateDir: join(dir, "state"),
      env: { HOME: dir, NEXO_LOG: "debug", ...env },
    });
    await sleep(settleMs);
    const { code } = await daemon.stop();
    assert.equal(code, 0, `exit ${code}: ${daemon.stderr()}`);
    return daemon.stderr();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("nexo start runs one memory-reducing collection once idle after start-up, and it shrinks the heap", async () => {
  const stderr = await idleDaemon({}, 4000);
  const lines = stderr.match(new RegExp(TRIM_LINE.source, "gm")) ?? [];
  assert.equal(lines.length, 1, `trim lines:\n${lines.join("\n")}\n${stderr}`);
  const { trim } = JSON.parse(lines[0]!) as {
    trim: { heapBeforeMB: number; heapAfterMB: number; liveMB: number; newSpaceMB: number; cpuMs: number };
  };
  // Start-up leaves the young generation's pages resident (2 MB) and old-space pages part empty.
  assert.ok(
    trim.heapBeforeMB - trim.heapAfterMB >= 1,
    `the heap gave back too little: ${JSON.stringify(trim)}`,
  );
  assert.ok(trim.newSpaceMB < 1, `the young generation stayed resident: ${JSON.stringify(trim)}`);
});

test("NEXO_IDLE_TRIM=off: no trim", async () => {
  const stderr = await idleDaemon({ NEXO_IDLE_TRIM: "off" }, 4000);
  assert.doesNotMatch(stderr, TRIM_LINE);
});

/**
 * Loaded into the daemon through NODE_OPTIONS: records every `require` (the daemon loads prom-client
 * and the built-ins through it) and writes Node's list of loaded built-ins on SIGUSR2.
 */
const RECORDER = `const { appendFileSync, writeFileSync } = require("node:fs");
const Module = require("node:module");
const load = Module._load;
Module._load = function (request, ...rest) { appendFileSync(process.env.NEXO_TEST_REQUIRES, request + "\\n"); return load.call(this, request, ...rest); };
process.on("SIGUSR2", () => writeFileSync(process.env.NEXO_TEST_BUILTINS, process.moduleLoadList.join("\\n") + "\\n"));`;

test("after its first trim the daemon holds no module only the trim used, and a scrape loads only the prom-client parts in use", async () => {
  const dir = demoToolsConfigDir("nexo-start-idle-trim-loaded-");
  const [recorder, requiresLog, builtinsLog] = ["recorder.cjs", "requires.txt", "builtins.txt"].map((f) =>
    join(dir, f),
  ) as [string, string, string];
  writeFileSync(recorder, RECORDER);
  writeFileSync(requiresLog, "");
  /** The built-ins loaded now and every require so far. */
  const loaded = async (daemon: { child: { kill(signal: NodeJS.Signals): boolean } }) => {
    writeFileSync(builtinsLog, "");
    daemon.child.kill("SIGUSR2");
    let builtins: string[] = [];
    for (let tries = 0; builtins.length === 0; tries++) {
      if (tries > 200) throw new Error("the daemon did not write its built-ins");
      await sleep(25);
      builtins = readFileSync(builtinsLog, "utf8").split("\n").filter(Boolean);
    }
    return { builtins, requires: readFileSync(requiresLog, "utf8").split("\n").filter(Boolean) };
  };
  try {
    const daemon = await startDaemonProcess({
      config: dir,
      stateDir: join(dir, "state"),
      env: {
        HOME: dir,
        NEXO_LOG: "debug",
        NODE_OPTIONS: `--require ${recorder}`,
        NEXO_TEST_REQUIRES: requiresLog,
        NEXO_TEST_BUILTINS: builtinsLog,
      },
    });
    try {
      const deadline = Date.now() + 30_000;
      while (!TRIM_LINE.test(daemon.stderr())) {
        if (Date.now() > deadline) throw new Error(`no trim:\n${daemon.stderr()}`);
        await sleep(50);
      }
      const idle = await loaded(daemon);
      assert.ok(idle.builtins.includes("NativeModule v8"), "the built-ins list was not written");
      // perf_hooks: neither the trim's quiet check nor the plugin peer's deadlines load it.
      for (const module of ["inspector", "worker_threads", "internal/worker", "perf_hooks"])
        assert.ok(!idle.builtins.includes(`NativeModule ${module}`), `${module} is loaded after the trim`);
      assert.deepEqual(
        idle.requires.filter((request) => request.startsWith("prom-client")),
        [],
        "prom-client is loaded before the first metric or scrape",
      );

      assert.ok(daemon.healthUrl !== undefined, "no health listener");
      const response = await fetch(`${daemon.healthUrl}/metrics`);
      assert.equal(response.status, 200);
      assert.match(await response.text(), /^nodejs_version_info\{/m);
      const scraped = await loaded(daemon);
      const promClient = scraped.requires.filter((request) => request.startsWith("prom-client"));
      assert.ok(
        promClient.includes("prom-client/lib/registry"),
        `prom-client parts: ${promClient.join(" ")}`,
      );
      assert.ok(!promClient.includes("prom-client"), "prom-client's index is loaded");
      assert.ok(
        !scraped.requires.includes("@opentelemetry/api"),
        "the OpenTelemetry API is loaded (prom-client's process CPU metric)",
      );
      for (const module of ["https", "tls", "zlib"])
        assert.ok(!scraped.builtins.includes(`NativeModule ${module}`), `${module} is loaded by a scrape`);
    } finally {
      const { code } = await daemon.stop();
      assert.equal(code, 0, `exit ${code}: ${daemon.stderr()}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
