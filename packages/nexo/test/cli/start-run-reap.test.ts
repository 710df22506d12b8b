/**
 * `nexo start` end to end (the built CLI): a daemon SIGKILLed with a plugin that ignores stdin EOF
 * and SIGTERM and has a setsid grandchild, and with an MCP stdio server that ignores both too,
 * leaves them running — nothing can run in a SIGKILLed process — and the next `nexo start` on the
 * same state dir reaps them from the child ledger before it starts anything. A clean SIGTERM
 * afterwards leaves nothing behind either.
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
import { fixture, isGone, pidsWithMarker, waitUntil } from "../fixtures/processes.js";

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
  writeFileSync(
    join(dir, "mcp.yaml"),
    [
      "restart: { respawn: false }",
      "servers:",
      "  lingering:",
      "    transport: stdio",
      `    command: ${process.execPath}`,
      `    args: ["--conditions=@nexo/source", "--import", "tsx", ${JSON.stringify(fixture("mcp-echo-server.ts"))}]`,
      `    env: { MCP_FIXTURE_MODE: linger, FIXTURE_LINGER: ${marker} }`,
      "    startup_timeout_ms: 30000",
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
    waitUntil(
      () => log().some((entry) => String(entry.msg).startsWith("nexo daemon ready")),
      30_000,
      "nexo daemon ready",
    ),
    exited.then(() => {
      throw new Error(`the daemon exited: ${text}`);
    }),
  ]);
  return { process: child, log };
}

function childPid(daemon: Daemon, extension: string): number {
  const started = daemon.log().find((e) => e.msg === "child started" && e.extension === extension);
  assert.ok(started, `${extension} was started`);
  return started.pid as number;
}

it("the next start reaps what a SIGKILLed daemon left running; a clean stop leaves nothing", async () => {
  const config = configDir();
  const stateDir = join(root, "state");

  const first = await startDaemon(config, stateDir);
  const plugin = childPid(first, "plugin:kitchen");
  const mcpServer = childPid(first, "mcp:lingering");
  await waitUntil(() => pidsWithMarker(marker).length === 1, 5_000, "the plugin's setsid grandchild");
  const [escapee] = pidsWithMarker(marker);
  first.process.kill("SIGKILL");
  await once(first.process, "exit");
  await sleep(500);
  assert.ok(!isGone(plugin), "the plugin ignored its stdin closing and outlived the daemon");
  assert.ok(!isGone(escapee!), "and so did its grandchild");
  assert.ok(!isGone(mcpServer), "the MCP server ignored its stdin closing and outlived the daemon");

  const second = await startDaemon(config, stateDir);
  await waitUntil(
    () => isGone(plugin) && isGone(escapee!) && isGone(mcpServer),
    3_000,
    "the left-behind processes to die",
  );
  const reaped = second.log().find((e) => e.msg === "stopped processes a previous nexo process left running");
  assert.ok(reaped, "the reaping is logged");
  assert.deepEqual((reaped.children as string[]).sort(), ["mcp:lingering", "plugin:kitchen"]);
  for (const pid of [plugin, escapee!, mcpServer]) assert.ok((reaped.killed as number[]).includes(pid));

  const secondPlugin = childPid(second, "plugin:kitchen");
  const secondMcpServer = childPid(second, "mcp:lingering");
  await waitUntil(() => pidsWithMarker(marker).length === 1, 5_000, "the new grandchild");
  const [secondEscapee] = pidsWithMarker(marker);
  second.process.kill("SIGTERM");
  const [code] = await once(second.process, "exit");
  assert.equal(code, 0);
  await waitUntil(
    () => isGone(secondPlugin) && isGone(secondEscapee!) && isGone(secondMcpServer),
    3_000,
    "a clean stop to end the plugin and the MCP server that ignore SIGTERM, and the setsid grandchild",
  );
  assert.deepEqual(readdirSync(join(stateDir, "children")), [], "the ledger holds no run");
});

it("a SIGTERM while the daemon is still starting stops it cleanly once started: exit 0, nothing left", async () => {
  const config = configDir();
  const stateDir = join(root, "state-early");
  const child = spawn(process.execPath, [nexoBin, "start", "--config", config, "--state-dir", stateDir], {
    cwd: config,
    stdio: ["ignore", "ignore", "pipe"],
    env: { PATH: process.env.PATH, NEXO_LOG: "info" },
  });
  daemons.push(child);
  let text = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk;
  });
  const entries = () =>
    text
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const exited = once(child, "exit");
  // The plugin has started, the MCP server (started after it) and "ready" have not necessarily:
  // the daemon is in the middle of its start-up.
  await waitUntil(
    () => entries().some((e) => e.msg === "child started" && e.extension === "plugin:kitchen"),
    30_000,
    "the plugin to start",
  );
  const plugin = entries().find((e) => e.msg === "child started" && e.extension === "plugin:kitchen")!
    .pid as number;
  child.kill("SIGTERM");
  const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
  assert.deepEqual([code, signal], [0, null], `not a clean exit:\n${text}`);
  const pids = entries()
    .filter((e) => e.msg === "child started")
    .map((e) => e.pid as number);
  assert.ok(pids.includes(plugin));
  await waitUntil(
    () => pids.every(isGone) && pidsWithMarker(marker).length === 0,
    3_000,
    "every child of the stopped daemon to be gone",
  );
});
