/**
 * The three ways of calling an echo tool in another process that the plugin benchmark compares,
 * each behind the same `call(args)`:
 *   nexo  — the engine's ToolRegistry → the plugin tool wrapper → PluginHost → an SDK child
 *   mcp   — @modelcontextprotocol/sdk's Client → McpServer over stdio
 *   floor — a hand-written JSON-lines client and echo child (readline + JSON.parse/stringify), the
 *           wire benchmark's own (bench/wire/contenders.ts)
 */
import { setMaxListeners } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolRegistry } from "../../packages/nexo/src/engine/tools/registry.js";
import type { ToolContext } from "../../packages/nexo/src/engine/types.js";
import { PluginManager } from "../../packages/nexo/src/extensions/plugins/manager.js";
import type { SupervisorLogger } from "../../packages/nexo/src/extensions/supervisor.js";
import { bareClient } from "../wire/contenders.js";

export interface Contender {
  call(args: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
  /** The serving child's pid, for CPU accounting (bench/plugins/cpu.ts). */
  readonly pid?: number;
}

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** The benchmark measures, not logs: every level goes nowhere. */
export const silentLogger: SupervisorLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** Fails loudly when a contender's answer is not the echo: a fast wrong answer measures nothing. */
function expectEcho(who: string, text: string, got: string | undefined): void {
  if (got !== text)
    throw new Error(`${who} answered ${JSON.stringify(got)} instead of echoing ${JSON.stringify(text)}`);
}

/** `pluginDir`: another manifest for the same plugin (e.g. one that runs node with --cpu-prof). */
export async function nexoContender(pluginDir = here("./echo-tool")): Promise<Contender> {
  const stateRoot = mkdtempSync(join(tmpdir(), "nexo-bench-plugins-"));
  const tools = new ToolRegistry();
  const manager = new PluginManager({
    plugins: [pluginDir],
    stateRoot,
    // A slow start on a loaded machine is not what is measured: wait for it.
    env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: "60000" },
    registries: { tools },
    logger: silentLogger,
  });
  const [status] = await manager.start();
  if (status?.state !== "running") {
    throw new Error(`the echo plugin did not start: ${status?.lastError?.message ?? status?.state}`);
  }
  // One signal for every call, as in one turn of the engine; 16 calls in flight listen to it at once.
  const turn = new AbortController();
  setMaxListeners(64, turn.signal);
  const ctx: ToolContext = {
    signal: turn.signal,
    sessionId: "bench",
    agentId: "bench",
    callId: "bench",
    workspace: stateRoot,
    unconfined: false,
  };
  const call = async (args: Record<string, unknown>) => {
    const out = await tools.invoke("bench_echo", args, ctx);
    if (out.isError) throw new Error(`bench_echo failed: ${out.output}`);
    return out.output;
  };
  expectEcho("nexo", "ping", (await call({ text: "ping" })) as string);
  const pid = status.pid;
  if (pid === undefined) throw new Error("the echo plugin runs but reports no pid");
  return {
    call,
    pid,
    close: async () => {
      await manager.stop("benchmark over");
      rmSync(stateRoot, { recursive: true, force: true });
    },
  };
}

/** `nodeArgs`: options for the server's node before its script (e.g. `--import` of a measuring hook). */
export async function mcpContender(nodeArgs: readonly string[] = []): Promise<Contender> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...nodeArgs, here("./mcp-echo-server.mjs")],
    stderr: "inherit",
  });
  const client = new Client({ name: "nexo-bench", version: "1.0.0" });
  await client.connect(transport);
  const call = async (args: Record<string, unknown>) => {
    const result = await client.callTool({ name: "echo", arguments: args });
    const [first] = result.content as Array<{ type: string; text?: string }>;
    return first?.text;
  };
  expectEcho("mcp", "ping", (await call({ text: "ping" })) as string);
  const pid = transport.pid;
  if (pid === null) throw new Error("the MCP echo server runs but its transport reports no pid");
  return { call, pid, close: () => client.close() };
}

/** The wire benchmark's floor client and its JSON-lines echo child, called with the tool's arguments. */
export async function floorContender(): Promise<Contender> {
  const floor = bareClient();
  const call = (args: Record<string, unknown>) => floor.call(args);
  expectEcho("floor", "ping", ((await call({ text: "ping" })) as { text?: string }).text);
  return {
    call,
    pid: floor.pid,
    close: async () => floor.close(),
  };
}

/** Keeps `concurrency` calls in flight for `seconds`; returns completed calls per second. */
export async function drive(
  contender: Contender,
  args: Record<string, unknown>,
  concurrency: number,
  seconds: number,
): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const lane = async () => {
    while (performance.now() < deadline) {
      await contender.call(args);
      done++;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  return done / ((performance.now() - start) / 1000);
}
