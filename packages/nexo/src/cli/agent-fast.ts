/**
 * `nexo agent --json-stream`'s fast start: `ready` written before the rest of nexo loads.
 *
 * A UI waits for `ready`, and loading the door (the engine, the provider registry, the protocol's
 * zod schemas) and opening the session store take most of the time to it. Everything `ready`
 * carries is decided by the flags and the environment (doors/jsonstream/start-up.ts, which
 * bootstrap.ts uses too): the version, a new session's id (a UUIDv7 chosen here, passed on as
 * `--session-id` would be), the capabilities. So main.ts, for a launch this file understands,
 * skips commander and comes here: the checks that can refuse a start-up and cost nothing run
 * first (provider, key, base URL, workspace, state directory), `ready` is written, then the door
 * loads and serves stdin, which nothing here reads. A launch with anything else (`--resume`,
 * `--session-id`, a flag value commander might read differently, a check that fails) is left to
 * commander and the door unchanged, so its error comes instead of `ready` as before.
 *
 * What only the door can find out — the store cannot be opened (a corrupt or locked database) —
 * then comes as `error{config_error}` after `ready`, followed by the same exit status 2
 * (docs/json-stream.md).
 */
import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { v7 as uuidv7 } from "uuid";
import { defaultModelOf } from "../config/default-models.js";
import { announcedCapabilities, providerEntryOf } from "../doors/jsonstream/start-up.js";
import { defaultStateDir } from "../paths.js";
import { NEXO_VERSION } from "../version.js";
import type { AgentRunFlags } from "./agent-run.js";
import { exitOnSignalUntilHandedOver } from "./fast-start-signals.js";

/** Flags with a value, and the option each fills. */
const VALUE_FLAGS: Readonly<
  Record<
    string,
    | "provider"
    | "model"
    | "baseUrl"
    | "systemPrompt"
    | "workspace"
    | "stateDir"
    | "agentId"
    | "sessionId"
    | "resume"
  >
> = {
  "--provider": "provider",
  "--model": "model",
  "--base-url": "baseUrl",
  "--system-prompt": "systemPrompt",
  "--workspace": "workspace",
  "--state-dir": "stateDir",
  "--agent-id": "agentId",
  // Read so that a launch naming its session (AionUi's always do) can skip commander too
  // (agentLaunchFlags); the fast start itself declines them, since `ready` then depends on the store.
  "--session-id": "sessionId",
  "--resume": "resume",
};
const COUNT_FLAGS: Readonly<Record<string, "maxTokens" | "maxTurns">> = {
  "--max-tokens": "maxTokens",
  "--max-turns": "maxTurns",
};
const SWITCHES: Readonly<Record<string, "jsonStream" | "autoApprove" | "allowOutsideWorkspace">> = {
  "--json-stream": "jsonStream",
  "--auto-approve": "autoApprove",
  "--allow-outside-workspace": "allowOutsideWorkspace",
};

/** An http(s) URL the provider schema takes without a doubt (anything odd: the door decides). */
function plainHttpUrl(text: string): boolean {
  if (!/^https?:\/\/[^\s]+$/.test(text)) return false;
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** Reads `nexo agent ARGS` as commander would, for the flags a fast start takes; else undefined. */
function parseFlags(args: readonly string[]): AgentRunFlags | undefined {
  const flags: AgentRunFlags = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const switchKey = SWITCHES[name];
    if (switchKey !== undefined) {
      if (eq !== -1) return undefined;
      flags[switchKey] = true;
      continue;
    }
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value === "" || value.startsWith("-")) return undefined;
    const valueKey = VALUE_FLAGS[name];
    const countKey = COUNT_FLAGS[name];
    if (valueKey !== undefined) flags[valueKey] = value;
    else if (countKey !== undefined && /^[1-9][0-9]{0,8}$/.test(value)) flags[countKey] = Number(value);
    else return undefined;
  }
  // Commander's default, which the door stores sessions under.
  flags.agentId ??= "default";
  return flags;
}

/**
 * `nexo agent ARGS` read as commander would, when every flag is one this file knows (the session's
 * `--session-id` and `--resume` included) and `--json-stream` is given; else undefined. For a
 * process whose door is already loaded (the startup snapshot, snapshot-agent.ts): such a launch
 * goes straight to the door, which checks the flags, opens the session and writes `ready` itself.
 */
export function agentLaunchFlags(args: readonly string[]): AgentRunFlags | undefined {
  const flags = parseFlags(args);
  return flags?.jsonStream === true ? flags : undefined;
}

/** The launch, when `ready` can be written before the door loads: its flags, with the new session's id. */
export interface FastAgentLaunch {
  flags: AgentRunFlags & { sessionId: string };
  /** The `ready` line, newline included. */
  ready: string;
}

/**
 * The fast launch of `nexo agent ARGS`, with every cheap start-up check passed; undefined when
 * commander and the door should run it as they always have.
 */
export function fastAgentLaunch(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): FastAgentLaunch | undefined {
  const flags = parseFlags(args);
  if (flags?.jsonStream !== true || flags.sessionId !== undefined || flags.resume !== undefined)
    return undefined;
  let name: string;
  try {
    const entry = providerEntryOf(flags, env);
    name = entry.name;
    const baseUrl = entry.config.base_url;
    if (baseUrl !== undefined && !(typeof baseUrl === "string" && plainHttpUrl(baseUrl))) return undefined;
  } catch {
    return undefined;
  }
  const model = flags.model ?? defaultModelOf(name);
  if (model === undefined) return undefined;
  try {
    if (!statSync(resolve(flags.workspace ?? process.cwd())).isDirectory()) return undefined;
    const stateDir = flags.stateDir ? resolve(flags.stateDir) : defaultStateDir(env);
    // What the door does first with it; a directory it could not write is the door's to report.
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    accessSync(stateDir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch {
    return undefined;
  }
  const sessionId = uuidv7();
  const ready = {
    type: "ready",
    version: NEXO_VERSION,
    session_id: sessionId,
    capabilities: announcedCapabilities({
      providerId: name,
      mcp: false,
      mode: flags.autoApprove ? "yolo" : "default",
      model,
    }),
  };
  return { flags: { ...flags, sessionId }, ready: `${JSON.stringify(ready)}\n` };
}

/** Writes `ready`, then loads the door and serves the session `ready` announced. */
export async function serveAgentFast(launch: FastAgentLaunch, env: NodeJS.ProcessEnv): Promise<void> {
  const door = import("./agent-run.js");
  // Installed before `ready` is written: a client may signal as soon as it reads it.
  const handOver = exitOnSignalUntilHandedOver();
  process.stdout.write(launch.ready);
  const { runAgent } = await door;
  // runAgent opens the store and installs its own handlers before its first await (a SIGTERM
  // during the store's open used to kill the process by the signal instead of status 0).
  await handOver(() => runAgent(launch.flags, env, { readyWritten: true }));
}
