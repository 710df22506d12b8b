/**
 * The microapp side of the microapp benchmark: the engine's ToolRegistry → the microapp tool →
 * MicroappHost → an SDK microapp child (bench/microapps/echo-app), its own requests served by the
 * daemon's admin RPC frame over a real SQLite store — the path a daemon runs, without the rest of
 * the daemon. Behind the plugin benchmark's `Contender`, so the two run side by side.
 */
import { setMaxListeners } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { microapp } from "@nexo/wire/schemas";
import { AdminFrame } from "../../packages/nexo/src/admin/index.js";
import { ToolRegistry } from "../../packages/nexo/src/engine/tools/registry.js";
import type { ToolContext } from "../../packages/nexo/src/engine/types.js";
import { loadMicroappDefinition } from "../../packages/nexo/src/extensions/microapps/definition.js";
import { MicroappManager } from "../../packages/nexo/src/extensions/microapps/manager.js";
import { ProcessGroupRegistry } from "../../packages/nexo/src/extensions/reaper.js";
import { Store } from "../../packages/nexo/src/store/index.js";
import { type Contender, silentLogger } from "../plugins/contenders.js";

const APP_DIR = fileURLToPath(new URL("./echo-app", import.meta.url));

export interface MicroappContender extends Contender {
  /** Admin round trips per second, measured inside the microapp over `seconds`. */
  adminRate(seconds: number, concurrency: number): Promise<number>;
}

/**
 * `appDir`: another folder for the same microapp (a plugin.toml beside an executable `main.mjs`,
 * e.g. one that starts node with --cpu-prof).
 */
export async function microappContender(appDir = APP_DIR): Promise<MicroappContender> {
  const stateRoot = mkdtempSync(join(tmpdir(), "nexo-bench-microapps-"));
  const store = Store.open(join(stateRoot, "nexo.db"));
  const tools = new ToolRegistry();
  let manager: MicroappManager | undefined;
  const frame = new AdminFrame({
    env: {},
    logger: silentLogger,
    services: { audit: store.audit, notify: (method, params) => manager?.notify(method, params) ?? [] },
  });
  const definition = await loadMicroappDefinition(
    "bench",
    microapp.MicroappExtensionEntrySchema.parse({ path: "main.mjs", capabilities_grant: ["audit_read"] }),
    appDir,
  );
  const groups = new ProcessGroupRegistry();
  manager = new MicroappManager({
    definitions: [definition],
    stateRoot: join(stateRoot, "extensions"),
    env: { PATH: process.env.PATH },
    registries: { tools },
    serve: (identity, peer) => frame.serve(identity, peer),
    logger: silentLogger,
    processGroups: groups,
  });
  const [status] = await manager.start();
  if (status?.state !== "running") {
    throw new Error(`the echo microapp did not start: ${status?.lastError?.message ?? status?.state}`);
  }
  // As in the plugin contender: one turn's signal shared by every call in flight.
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
  const invoke = async (tool: string, args: Record<string, unknown>) => {
    const out = await tools.invoke(tool, args, ctx);
    if (out.isError) throw new Error(`${tool} failed: ${out.output}`);
    return out.output;
  };
  const call = (args: Record<string, unknown>) => invoke("bench_echo", args);
  const echoed = await call({ text: "ping" });
  if (echoed !== "ping") throw new Error(`microapp answered ${JSON.stringify(echoed)} instead of "ping"`);
  const pid = status.pid;
  if (pid === undefined) throw new Error("the echo microapp runs but reports no pid");
  return {
    call,
    pid,
    async adminRate(seconds, concurrency) {
      const output = await invoke("bench_admin", { seconds, concurrency });
      const { per_second } = JSON.parse(String(output)) as { per_second: number };
      return per_second;
    },
    close: async () => {
      await manager.stop("benchmark over");
      groups.killAll("SIGKILL");
      frame.close();
      store.close();
      rmSync(stateRoot, { recursive: true, force: true });
    },
  };
}
