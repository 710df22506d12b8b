/**
 * From an entrypoint (command, args, env, sandbox section) to the exact process the supervisor
 * spawns: the scrubbed environment, the resolved command, and — when the sandbox is enabled — the
 * same command wrapped in bwrap. Every refusal (sandbox required, bwrap missing, a denylisted path,
 * a missing command, a reserved env key) is thrown here as a typed error, before anything runs, so
 * a plugin whose sandbox cannot be provided is never started without it.
 */
import { mkdirSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { plugin } from "@nexo/wire/schemas";
import { resolveCommand } from "./command.js";
import { buildChildEnv, type ChildEnvInput } from "./env.js";
import { buildBwrapArgs, isVisibleInSandbox, type ResolveSandboxOptions, resolveSandbox } from "./sandbox.js";
import { SandboxPathError } from "./sandbox-errors.js";
import type { SpawnSpec } from "./supervisor-types.js";

/** Inside the sandbox /tmp is a private tmpfs. */
const SANDBOX_TMP = "/tmp";

export interface LaunchInput {
  /** `entrypoint.command`: an absolute path, a PATH binary, or a path relative to `pluginDir`. */
  command: string;
  args?: readonly string[];
  /**
   * The plugin's install directory: the working directory, the base of a relative command, and,
   * when sandboxed, bound read-only so an interpreter can load the plugin's own files (a manifest
   * cannot list it, since the install location differs per machine).
   */
  pluginDir?: string;
  /** The per-instance state root; created (0700) if missing; HOME and `${state_dir}`. */
  stateDir: string;
  sandbox?: plugin.ManifestSandbox;
  /** Manifest env, operator env, passthrough names and the daemon's NEXO_* variables. */
  env?: Pick<ChildEnvInput, "manifestEnv" | "operatorEnv" | "passthrough" | "nexoVars">;
  /** The daemon's environment: sandbox knobs, PATH, passthrough values. Default `process.env`. */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  findBwrap?: ResolveSandboxOptions["findBwrap"];
  platform?: NodeJS.Platform;
}

export interface LaunchSpec extends SpawnSpec {
  args: string[];
  env: Record<string, string>;
  sandboxed: boolean;
}

export function buildLaunchSpec(input: LaunchInput): LaunchSpec {
  const hostEnv = input.hostEnv ?? process.env;
  if (!isAbsolute(input.stateDir))
    throw new SandboxPathError(input.stateDir, "the state dir must be an absolute path");
  if (input.pluginDir !== undefined && !isAbsolute(input.pluginDir)) {
    throw new SandboxPathError(input.pluginDir, "the plugin directory must be an absolute path");
  }
  mkdirSync(input.stateDir, { recursive: true, mode: 0o700 });

  const decision = resolveSandbox(input.sandbox, hostEnv, {
    stateDir: input.stateDir,
    ...(input.findBwrap ? { findBwrap: input.findBwrap } : {}),
    ...(input.platform ? { platform: input.platform } : {}),
  });
  const envInput: ChildEnvInput = { ...input.env, stateDir: input.stateDir, hostEnv };
  if (decision.enabled) {
    // HOME must exist inside the sandbox; without a ${state_dir} bind the state dir does not.
    if (!isVisibleInSandbox(decision.policy, input.stateDir)) envInput.home = SANDBOX_TMP;
    envInput.tmpDir = SANDBOX_TMP;
  }
  const env = buildChildEnv(envInput);
  const command = resolveCommand(input.command, { pathEnv: env.PATH, cwd: input.pluginDir });
  const args = [...(input.args ?? [])];
  const cwd = input.pluginDir !== undefined ? { cwd: input.pluginDir } : {};

  if (!decision.enabled) return { command: command.path, args, env, ...cwd, sandboxed: false };
  const flags = buildBwrapArgs(decision.policy, {
    commandDirs: command.dirs,
    extraReadOnlyDirs: input.pluginDir !== undefined ? [input.pluginDir] : [],
  });
  return {
    command: decision.bwrapPath,
    args: [...flags, "--", command.path, ...args],
    env,
    ...cwd,
    sandboxed: true,
  };
}
