/**
 * How long the host waits for each plugin method (plugin contract §4.1, §5.x, §5.y, §5.z, §5.w,
 * §5.t) and the operator's env overrides. One override applies to every method of its family, as
 * the contract says ("single value applied to all 3 methods").
 */
import { PluginEnvError } from "./errors.js";

export interface PluginTimeouts {
  initMs: number;
  channel: { startMs: number; stopMs: number; sendOutboundMs: number };
  llm: { chatMs: number; streamMs: number };
  hookMs: number;
  memory: { upsertMs: number; searchMs: number; deleteMs: number };
  toolMs: number;
}

export const DEFAULT_PLUGIN_TIMEOUTS: Readonly<PluginTimeouts> = {
  initMs: 5_000,
  channel: { startMs: 30_000, stopMs: 30_000, sendOutboundMs: 60_000 },
  llm: { chatMs: 60_000, streamMs: 300_000 },
  hookMs: 5_000,
  memory: { upsertMs: 30_000, searchMs: 10_000, deleteMs: 30_000 },
  toolMs: 60_000,
};

export const PLUGIN_TIMEOUT_ENV = {
  init: "NEXO_PLUGIN_INIT_TIMEOUT_MS",
  channel: "NEXO_PLUGIN_CHANNEL_TIMEOUT_MS",
  llm: "NEXO_PLUGIN_LLM_TIMEOUT_MS",
  hook: "NEXO_PLUGIN_HOOK_TIMEOUT_MS",
  memory: "NEXO_PLUGIN_MEMORY_TIMEOUT_MS",
  tool: "NEXO_PLUGIN_TOOL_TIMEOUT_MS",
} as const;

/**
 * How long `shutdown` may take to be acknowledged. The contract gives none, but the SDKs drain
 * every in-flight handler before they answer, without a bound (notes §5.10), so the host needs one.
 */
export const DEFAULT_SHUTDOWN_ACK_TIMEOUT_MS = 5_000;
/** After the acknowledgement, how long the child may take to exit before SIGKILL (§4.2). */
export const SHUTDOWN_EXIT_GRACE_MS = 1_000;

/** About 24 days: the largest delay Node's timers accept. */
const MAX_TIMEOUT_MS = 2_147_483_647;

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The timeouts in force under `env`. An override that is not a positive whole number of
 * milliseconds is an error naming the variable, never silently ignored.
 */
export function resolvePluginTimeouts(env: Env): PluginTimeouts {
  const d = DEFAULT_PLUGIN_TIMEOUTS;
  const channel = readMs(env, PLUGIN_TIMEOUT_ENV.channel);
  const llm = readMs(env, PLUGIN_TIMEOUT_ENV.llm);
  const memory = readMs(env, PLUGIN_TIMEOUT_ENV.memory);
  return {
    initMs: readMs(env, PLUGIN_TIMEOUT_ENV.init) ?? d.initMs,
    channel: {
      startMs: channel ?? d.channel.startMs,
      stopMs: channel ?? d.channel.stopMs,
      sendOutboundMs: channel ?? d.channel.sendOutboundMs,
    },
    llm: { chatMs: llm ?? d.llm.chatMs, streamMs: llm ?? d.llm.streamMs },
    hookMs: readMs(env, PLUGIN_TIMEOUT_ENV.hook) ?? d.hookMs,
    memory: {
      upsertMs: memory ?? d.memory.upsertMs,
      searchMs: memory ?? d.memory.searchMs,
      deleteMs: memory ?? d.memory.deleteMs,
    },
    toolMs: readMs(env, PLUGIN_TIMEOUT_ENV.tool) ?? d.toolMs,
  };
}

function readMs(env: Env, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return undefined;
  const value = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < 1 || value > MAX_TIMEOUT_MS) {
    throw new PluginEnvError(
      name,
      raw,
      `must be a whole number of milliseconds between 1 and ${MAX_TIMEOUT_MS}`,
    );
  }
  return value;
}
