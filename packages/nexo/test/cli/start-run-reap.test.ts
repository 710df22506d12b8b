/**
 * `nexo start` end to end (the built CLI): a daemon SIGKILLed with a plugin that ignores stdin EOF
 * and SIGTERM and has a setsid grandchild leaves both running — nothing can run in a SIGKILLed
 * process — and the next `nexo start` on the same state dir reaps them from the child ledger
 * before it starts anything. A clean SIGTERM afterwards leaves nothing behind either.
 */
import assert from "node:assert/strict";
import { type ChildProcess, type ChildProcessByStdio, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { after, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { environHas, processTable } from "../../src/process/proc.js";
import { isGone, pidsWithMarker, waitUntil } from "../fixtures/processes.js";

const nexoBin = fileURLToPath(new URL("../../bin/nexo.js", import.meta.url));
const kitchen = fileURLToPath(new URL("../fixtures/plugins/kitchen/", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "nexo-start-reap-"));
const marker = `nexo-start-reap-${randomUUID()}`;
const daemons: ChildProcess[] = [];
after(() => {
  // Whatever a failed run left: the daemons, the plugins (marked in their environment), the
  // grandchildren (marked on their command line).
  for (const daemon of daemons) daemon.kill("SIGKILL");
  for (const stat of processTable() ?? []) {
    if (environHas(stat.pid, [`FIXTURE_LINGER=${marker}`])) process.kill(stat.pid, "SIGKILL");
  }
  for (const pid of pidsWithMarker(marker)) process.kill(pid, "SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

interface Daemon {
  process: ChildProcessByStdio<null, null, Readable>;
  log: () => Array<Record<string, unknown>>;
}

function configDir(): string {
  const dir = join(root, "config");
  mkdirSync(join(dir, "workspace"), { recursive: true });
  writeFileSync(
    join(dir, "agents.yaml"),
    [
      "agents:",
      "  - id: assistant",
      "    model: { provider: scripted, model: nexo-scripted-demo }",
      "    workspace: ./workspace",
    ].join("\n"),
  );
  writeFileSync(join(dir, "daemon.yaml"), "http:\n  enabled: false\n");
  writeFileSync(
    join(dir, "plugins.yaml"),
    [
      "plugins:",
      `  - dir: ${kitchen}`,
      `    env: { FIXTURE_LINGER: ${marker} }`,
      // A crash must not restart it: every process of this test is accounted for.
      "    restart: { respawn: false }",
    ].join("\n"),
  );
  return dir;
}

async function startDaemon(config: string, stateDir: string): Promise<Daemon> {
  const child = spawn(process.execPath, [nexoBin, "start", "--config", config, "--state-dir", stateDir], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { PATH: process.env.PATH, NEXO_LOG: "info" },
  });
  daemons.push(child);
  let text = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk;
  });
  const log = () =>
    text
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const exited = once(child, "exit");
  await Promise.race([
    waitUntil(() => log().some((entry) => entry.msg === "nexo daemon ready"), 30_000, "nexo daemon ready"),
    exited.then(() => {
      throw new Error(`the daemon exited: ${text}`);
    }),
  ]);
  return { process: child, log };
}

function pluginPid(daemon: Daemon): number {
  const started = daemon.log().find((e) => e.msg === "child started" && e.extension === "plugin:kitchen");
  assert.ok(started, "the plugin was started");
  return started.pid as number;
}

it("the next start reaps what a SIGKILLed daemon left running; a clean stop leaves nothing", async () => {
  const config = configDir();
  const stateDir = join(root, "state");

  const first = await startDaemon(config, stateDir);
  const plugin = pluginPid(first);
  await waitUntil(() => pidsWithMarker(marker).length === 1, 5_000, "the plugin's setsid grandchild");
  const [escapee] = pidsWithMarker(marker);
  first.process.kill("SIGKILL");
  await once(first.process, "exit");
  await sleep(500);
  assert.ok(!isGone(plugin), "the plugin ignored its stdin closing and outlived the daemon");
  assert.ok(!isGone(escapee!), "and so did its grandchild");

  const second = await startDaemon(config, stateDir);
  await waitUntil(() => isGone(plugin) && isGone(escapee!), 3_000, "the left-behind processes to die");
  const reaped = second.log().find((e) => e.msg === "stopped processes a previous nexo process left running");
  assert.ok(reaped, "the reaping is logged");
  assert.deepEqual(reaped.children, ["plugin:kitchen"]);
  assert.ok((reaped.killed as number[]).includes(plugin));
  assert.ok((reaped.killed as number[]).includes(escapee!));

  const secondPlugin = pluginPid(second);
  await waitUntil(() => pidsWithMarker(marker).length === 1, 5_000, "the new grandchild");
  const [secondEscapee] = pidsWithMarker(marker);
  second.process.kill("SIGTERM");
  const [code] = await once(second.process, "exit");
  assert.equal(code, 0);
  await waitUntil(
    () => isGone(secondPlugin) && isGone(secondEscapee!),
    3_000,
    "a clean stop to end the plugin that ignores SIGTERM and its setsid grandchild",
  );
  assert.deepEqual(readdirSync(join(stateDir, "children")), [], "the ledger holds no run");
});
