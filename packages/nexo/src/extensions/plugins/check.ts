/**
 * `nexo plugin check`'s engine: take a plugin through everything the daemon would do with it —
 * validate the manifest, spawn it (sandbox included), run the handshake, check the tool catalog
 * and the hook names, shut it down — and report each step as ok / warn / fail with a reason a
 * plugin author can act on. Nothing here prints; the CLI formats the report.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../config/errors.js";
import { SchemaValidators } from "../../engine/tools/schema-validator.js";
import type { CheckReport, CheckStep as GenericCheckStep } from "../check-report.js";
import { CommandNotFoundError } from "../command.js";
import { ChildEnvError } from "../env.js";
import { SandboxError } from "../sandbox-errors.js";
import type { SupervisorLogger } from "../supervisor.js";
import { errorCodeOf } from "./errors.js";
import { HOOK_NAME_TO_POINT, unknownHookNames } from "./hook.js";
import { PluginHost, type PluginSession } from "./host.js";
import { type LoadedPluginManifest, loadPluginManifest } from "./manifest.js";

type Env = Readonly<Record<string, string | undefined>>;

export type { CheckStatus } from "../check-report.js";
export type CheckStep = GenericCheckStep<
  "manifest" | "launch" | "handshake" | "tools" | "hooks" | "shutdown" | "stdout"
>;

export interface PluginCheckReport extends CheckReport<CheckStep["step"]> {
  target: string;
  plugin?: {
    id: string;
    version: string;
    file: string;
    serverVersion?: string;
    sandboxed?: boolean;
    tools: Array<{ name: string; description: string }>;
  };
}

export interface CheckPluginOptions {
  env?: Env;
  /** Extra environment for the plugin, as an operator would configure it. */
  operatorEnv?: Readonly<Record<string, string>>;
  /** Default: a fresh temporary directory, removed afterwards. */
  stateDir?: string;
  nexoVersion?: string;
  logger?: SupervisorLogger;
}

export async function checkPlugin(
  target: string,
  options: CheckPluginOptions = {},
): Promise<PluginCheckReport> {
  const env = options.env ?? process.env;
  const steps: CheckStep[] = [];
  let manifest: LoadedPluginManifest | undefined;
  let session: PluginSession | undefined;
  let host: PluginHost | undefined;
  const report = (stderrTail: string[] = []): PluginCheckReport => ({
    ok: !steps.some((step) => step.status === "fail"),
    target,
    ...(manifest ? { plugin: pluginInfo(manifest, session, host) } : {}),
    steps,
    stderrTail,
  });

  try {
    manifest = await loadPluginManifest(target, {
      env,
      ...(options.nexoVersion ? { nexoVersion: options.nexoVersion } : {}),
    });
    steps.push({
      step: "manifest",
      status: "ok",
      detail: `${manifest.file} (${manifest.id} ${manifest.manifest.plugin.version})`,
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    steps.push({ step: "manifest", status: "fail", detail: error.message, code: "manifest_invalid" });
    return report();
  }

  const ownStateDir = options.stateDir === undefined;
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), `nexo-plugin-check-${manifest.id}-`));
  try {
    try {
      host = new PluginHost({
        manifest,
        stateDir,
        env,
        operatorEnv: options.operatorEnv ?? {},
        // A check runs the plugin once: a crash is a finding, not something to retry.
        restart: { respawn: false },
        ...(options.nexoVersion ? { nexoVersion: options.nexoVersion } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
      });
    } catch (error) {
      steps.push({
        step: "launch",
        status: "fail",
        detail: (error as Error).message,
        code: errorCodeOf(error),
      });
      return report();
    }

    const started = Date.now();
    try {
      session = await host.start();
    } catch (error) {
      const launch =
        error instanceof SandboxError ||
        error instanceof CommandNotFoundError ||
        error instanceof ChildEnvError;
      steps.push({
        step: launch ? "launch" : "handshake",
        status: "fail",
        detail: (error as Error).message,
        code: errorCodeOf(error),
      });
      return report(host.status().stderrTail);
    }
    const status = host.status();
    steps.push({
      step: "handshake",
      status: "ok",
      detail: `server_version ${session.serverVersion}, ready in ${Date.now() - started} ms (pid ${session.pid}, ${
        status.sandboxed ? "sandboxed" : "not sandboxed"
      })`,
    });
    steps.push(...toolSteps(manifest, session), ...hookSteps(manifest));
    steps.push(await shutdownStep(host));
    steps.push(stdoutStep(host.status().protocolProblems));
    return report(steps.some((step) => step.status === "fail") ? host.status().stderrTail : []);
  } finally {
    await host?.stop("nexo plugin check").catch(() => undefined);
    if (ownStateDir) rmSync(stateDir, { recursive: true, force: true });
  }
}

/**
 * What the plugin wrote on stdout that was not a protocol frame (a stray print, a library's banner):
 * the host drops such lines, so a reply printed badly is a call that never answers (issue 14.5).
 */
function stdoutStep(problems: Record<string, number>): CheckStep {
  const notJson = problems.parse_error ?? 0;
  const unusable = (problems.invalid_request ?? 0) + (problems.oversize ?? 0) + (problems.invalid_utf8 ?? 0);
  if (notJson + unusable === 0) return { step: "stdout", status: "ok", detail: "only JSON-RPC frames" };
  const parts = [
    ...(notJson > 0 ? [`${notJson} line${notJson === 1 ? " was" : "s were"} not JSON`] : []),
    ...(unusable > 0 ? [`${unusable} frame${unusable === 1 ? " was" : "s were"} not usable JSON-RPC`] : []),
  ];
  return {
    step: "stdout",
    status: "warn",
    detail: `${parts.join(", ")}: stdout carries the protocol only; write logs to stderr`,
  };
}

function toolSteps(manifest: LoadedPluginManifest, session: PluginSession): CheckStep[] {
  const advertised = [...session.catalog.tools.keys()];
  const declared = manifest.manifest.plugin.extends?.tools ?? [];
  const steps: CheckStep[] = [
    {
      step: "tools",
      status: "ok",
      detail:
        declared.length === 0 && advertised.length === 0
          ? "no tools declared"
          : `${advertised.length} of ${declared.length} declared tools advertised${advertised.length ? `: ${advertised.join(", ")}` : ""}`,
    },
  ];
  for (const warning of session.warnings) steps.push({ step: "tools", status: "warn", detail: warning });
  // The daemon compiles each schema with ajv on the tool's first call (engine/tools/schema-
  // validator.ts); the author hears now what that call would: a schema ajv refuses.
  const validators = new SchemaValidators();
  for (const tool of session.catalog.tools.values()) {
    try {
      validators.compileNow(tool.inputSchema).release();
    } catch (error) {
      steps.push({
        step: "tools",
        status: "fail",
        detail: `tool "${tool.name}" has an input_schema ajv refuses, so every call to it would be refused: ${(error as Error).message}`,
      });
    }
  }
  return steps;
}

function hookSteps(manifest: LoadedPluginManifest): CheckStep[] {
  return unknownHookNames(manifest.manifest.plugin.extends?.hooks ?? []).map((name) => ({
    step: "hooks",
    status: "warn",
    detail: `hook "${name}" is not a hook point nexo fires (${Object.keys(HOOK_NAME_TO_POINT).join(", ")}); it will never be called`,
  }));
}

async function shutdownStep(host: PluginHost): Promise<CheckStep> {
  const errorBefore = host.status().lastError;
  const started = Date.now();
  await host.stop("nexo plugin check");
  const took = Date.now() - started;
  const { lastError, lastExit } = host.status();
  if (lastError !== undefined && lastError !== errorBefore) {
    return { step: "shutdown", status: "fail", detail: lastError.message, code: lastError.code };
  }
  if (lastExit?.signal === "SIGKILL") {
    return {
      step: "shutdown",
      status: "warn",
      detail: `acknowledged, but the process did not exit within 1 s and was killed (${took} ms); reply, then exit`,
    };
  }
  return { step: "shutdown", status: "ok", detail: `acknowledged; exited after ${took} ms` };
}

function pluginInfo(
  manifest: LoadedPluginManifest,
  session: PluginSession | undefined,
  host: PluginHost | undefined,
): NonNullable<PluginCheckReport["plugin"]> {
  const sandboxed = host?.status().sandboxed;
  return {
    id: manifest.id,
    version: manifest.manifest.plugin.version,
    file: manifest.file,
    ...(session ? { serverVersion: session.serverVersion } : {}),
    ...(sandboxed === undefined ? {} : { sandboxed }),
    tools: session
      ? [...session.catalog.tools.values()].map(({ name, description }) => ({ name, description }))
      : [],
  };
}
