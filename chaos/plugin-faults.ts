/**
 * Attack: plugins that misbehave, against the real daemon (issue 10.19, after 10.11, 10.12, 10.14
 * and 10.15).
 *
 * One daemon runs five bad plugins next to the loopback channel:
 * - `chaos_crash` crashes 200 ms after every handshake, restarted without end (a crash loop);
 * - `chaos_garbage` writes unusable lines to stdout without pause (not JSON, not JSON-RPC,
 *   answers to ids never asked, calls of methods the host does not have);
 * - `chaos_oversize` writes lines over the 1 MiB frame limit, each followed by a notification;
 * - `spammer` (test fixture) floods stdout, stderr and unauthorised broker publishes;
 * - `kitchen` (test fixture) never answers `shutdown`, ignores SIGTERM and stdin EOF, and has a
 *   grandchild that left its process group with setsid.
 * While they run, /healthz is polled and a user talks to the agent through the channel.
 *
 * Property: boot does not wait on the crash loop; the daemon stays up, /healthz answers
 * throughout (none failed, none slower than 5 s: on a shared machine the daemon is starved of CPU
 * now and then, which the daemon's CPU figure shows) and so does the agent; the log stays bounded
 * (under one line per hundred unusable lines received); SIGTERM stops the daemon with status 0
 * within 15 s; no process is left behind.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { endpoint, say } from "../packages/nexo/test/helpers/loopback.js";
import { cpuSeconds, leftBehind, pollHealth, runAttack } from "./lib.js";
import { chaosDaemon, type PluginEntry } from "./setup.js";

const FAULTY = fileURLToPath(new URL("./fixtures/faulty-plugin.mjs", import.meta.url));
const FIXTURES = fileURLToPath(new URL("../packages/nexo/test/fixtures/plugins/", import.meta.url));

/** A plugin directory for one fault of faulty-plugin.mjs: its own manifest, so its own id. */
function faultyPlugin(root: string, fault: string): string {
  const dir = join(root, fault);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "nexo-plugin.toml"),
    [
      "[plugin]",
      `id = "chaos_${fault}"`,
      'version = "0.1.0"',
      `name = "Chaos ${fault}"`,
      `description = "Misbehaves: ${fault}"`,
      'min_nexo_version = ">=0.1.0"',
      "",
      "[plugin.entrypoint]",
      'command = "node"',
      `args = [${JSON.stringify(FAULTY)}]`,
    ].join("\n"),
  );
  return dir;
}

const metric = (text: string, name: string, plugin: string): number =>
  Number(new RegExp(`^${name}\\{[^}]*plugin="${plugin}"[^}]*\\} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);

await runAttack("plugin-faults", async (attack) => {
  const windowMs = attack.pick(8_000, 60_000);
  const root = attack.tempDir("faulty");
  const plugins: PluginEntry[] = [
    {
      dir: faultyPlugin(root, "crash"),
      env: { FAULT: "crash", CRASH_AFTER_MS: "200" },
      restart: "{ respawn: true, max_restarts: 1000, initial_delay_ms: 50, max_delay_ms: 200 }",
    },
    { dir: faultyPlugin(root, "garbage"), env: { FAULT: "garbage" } },
    { dir: faultyPlugin(root, "oversize"), env: { FAULT: "oversize" } },
    { dir: join(FIXTURES, "spammer"), env: { FLOOD_LINES: String(attack.pick(20_000, 200_000)) } },
    { dir: join(FIXTURES, "kitchen"), env: { FIXTURE_SHUTDOWN: "hang", FIXTURE_LINGER: "chaos-linger" } },
  ];
  const config = await chaosDaemon(attack, {
    script: Array.from({ length: 1_000 }, (_, i) => ({ match: `hello ${i}`, text: `hi ${i}` })),
    plugins,
  });
  const bootStarted = performance.now();
  const daemon = await config.start();
  attack.figure("boot to ready, with a crash loop among the plugins", performance.now() - bootStarted, "ms");
  const url = await endpoint(config.stateDir);
  const logBefore = daemon.stderr().length;
  const linesBefore = daemon.log().length;

  const health = pollHealth(`${daemon.healthUrl}/healthz`);
  const cpuBefore = cpuSeconds(daemon.pid);
  const started = performance.now();
  let turns = 0;
  let turnFailures = 0;
  const turnMs: number[] = [];
  while (performance.now() - started < windowMs) {
    const at = performance.now();
    const reply = await say(url, "alice", `hello ${turns}`).catch(
      (error: Error) => `failed: ${error.message}`,
    );
    turnMs.push(performance.now() - at);
    if (reply !== `hi ${turns}`) {
      turnFailures++;
      // What went wrong, for whoever reads a broken run (a few, not a flood).
      if (turnFailures <= 3)
        attack.note(`turn ${turns} after ${Math.round(performance.now() - at)} ms: ${reply.slice(0, 200)}`);
    }
    turns++;
    await sleep(200);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(daemon.pid) - cpuBefore;
  const during = await health.stop();
  const metrics = await (await fetch(`${daemon.healthUrl}/metrics`)).text();
  const up = daemon.child.exitCode === null && daemon.child.signalCode === null;
  const logBytes = daemon.stderr().length - logBefore;
  const logLines = daemon.log().length - linesBefore;
  const status = readFileSync(`/proc/${daemon.pid}/status`, "utf8");

  const stopped = await daemon.stop("SIGTERM");
  const counts = (fault: string) =>
    JSON.parse(readFileSync(join(config.stateDir, "plugins", `chaos_${fault}`, "faults.json"), "utf8")) as {
      starts: number;
      garbageLines: number;
      oversizeLines: number;
      oversizeBytes: number;
    };
  const crash = counts("crash");
  const garbage = counts("garbage");
  const oversize = counts("oversize");
  const spammerLines = Number(plugins[3]!.env!.FLOOD_LINES) * 3;
  const unusable = garbage.garbageLines + oversize.oversizeLines + spammerLines;

  attack.figure("attack window", seconds, "s");
  attack.figure("crash-loop starts", crash.starts);
  attack.figure(
    "crash-loop restarts counted by the daemon",
    metric(metrics, "nexo_plugin_restarts_total", "chaos_crash"),
  );
  attack.figure("garbage lines written", garbage.garbageLines);
  attack.figure("oversize lines written", oversize.oversizeLines);
  attack.figure("oversize bytes written", oversize.oversizeBytes, "B");
  attack.figure("spammer lines (stdout, stderr, publishes)", spammerLines);
  attack.figure("daemon log lines during the attack", logLines);
  attack.figure("daemon log bytes during the attack", logBytes, "B");
  attack.figure("daemon CPU during the attack", (100 * cpu) / seconds, "% of a core");
  attack.figure("daemon peak RSS", Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024, "MiB");
  attack.figure("/healthz requests", during.requests);
  attack.figure("/healthz p50", during.p50Ms, "ms");
  attack.figure("/healthz max", during.maxMs, "ms");
  attack.figure("/healthz failures", during.failures);
  attack.figure("agent turns through the channel", turns);
  attack.figure("agent turns failed", turnFailures);
  attack.figure(
    "agent turn p50",
    [...turnMs].sort((a, b) => a - b)[Math.floor(turnMs.length / 2)] ?? 0,
    "ms",
  );
  attack.figure("SIGTERM to exit", stopped.ms, "ms");

  attack.expect(up, `the daemon died during the attack: ${daemon.stderr().slice(-2000)}`);
  attack.expect(crash.starts >= 3, `the crash loop ran only ${crash.starts} times`);
  attack.expect(garbage.garbageLines > 1_000, `only ${garbage.garbageLines} garbage lines were written`);
  attack.expect(oversize.oversizeLines >= 1, "no oversize line was written");
  attack.expect(during.failures === 0, `${during.failures} /healthz requests failed`);
  attack.expect(during.maxMs < 5_000, `slowest /healthz answer ${during.maxMs.toFixed(0)} ms`);
  attack.expect(turnFailures === 0, `${turnFailures} of ${turns} turns through the channel failed`);
  attack.expect(
    logLines * 100 < unusable,
    `${logLines} log lines for ${unusable} unusable lines: not rate-limited`,
  );
  attack.expect(stopped.code === 0, `SIGTERM: exit ${stopped.code}/${stopped.signal}`);
  attack.expect(stopped.ms < 15_000, `stopping took ${stopped.ms} ms`);
  const left = await leftBehind(config.marker);
  attack.figure("processes left behind after the stop", left.length);
  attack.expect(left.length === 0, `processes left behind: ${left.join(", ")}`);
});
