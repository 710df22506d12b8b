/**
 * `nexo microapp check`'s engine: a microapp taken through what the daemon does with it, from the
 * outside — plugin.toml, spawn, `initialize`, the tool names, the catalogue's stability across two
 * `tools/list`, each registered hook answered, -32601 for a method it does not know, the admin
 * calls it made (served by whoever `serve`s it, granted what it declares), and the shutdown
 * deadline — each step ok / warn / fail with a reason a third-party author can act on. Nothing
 * here prints; the CLI formats the report.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JsonRpcCode, type JsonRpcPeer, MalformedReplyError, RpcError, TimeoutError } from "@nexo/wire";
import * as microapp from "@nexo/wire/schemas/microapp";
import { ConfigError } from "../../config/errors.js";
import type { CheckReport, CheckStep as GenericCheckStep } from "../check-report.js";
import { errorCodeOf } from "../plugins/errors.js";
import type { SupervisorLogger } from "../supervisor.js";
import { loadMicroappDefinition, type MicroappDefinition, MicroappExecutableError } from "./definition.js";
import { MicroappHost, type MicroappSession } from "./host.js";
import type { MicroappIdentity } from "./manager.js";
import { MicroappTargetError, resolveMicroappTarget } from "./target.js";

type Step =
  | "target"
  | "manifest"
  | "handshake"
  | "tools"
  | "catalogue"
  | "hooks"
  | "methods"
  | "admin"
  | "shutdown";
export type MicroappCheckStep = GenericCheckStep<Step>;

export interface MicroappCheckReport extends CheckReport<Step> {
  target: string;
  microapp?: {
    id: string;
    executable: string;
    version?: string;
    tools: Array<{ name: string; description: string }>;
    hooks: string[];
  };
}

/** One admin call the microapp made, as the audit saw it. */
export interface SeenAdminCall {
  method: string;
  result: string;
  error_code?: number | null;
}

export interface CheckMicroappOptions {
  /** The extension id; default plugin.toml's, else the directory's name. */
  id?: string;
  /** `initialize.params.config`. */
  config?: unknown;
  timeoutSecs?: number;
  /** What the microapp is granted; default every capability its plugin.toml declares. */
  grants?: readonly string[];
  /** Serves the microapp's own requests (the admin RPC frame). */
  serve?: (identity: MicroappIdentity, peer: JsonRpcPeer) => void;
  /** The admin calls served so far. */
  adminCalls?: () => SeenAdminCall[];
  env?: Readonly<Record<string, string | undefined>>;
  logger?: SupervisorLogger;
}

/** A payload every hook point understands enough to vote on. */
const SAMPLE_HOOK_PARAMS = { text: "nexo microapp check", agent_id: "nexo-check", session_id: "nexo-check" };
const UNKNOWN_METHOD = "nexo/check/unknown_method";

export async function checkMicroapp(
  target: string,
  options: CheckMicroappOptions = {},
): Promise<MicroappCheckReport> {
  const steps: MicroappCheckStep[] = [];
  let definition: MicroappDefinition | undefined;
  let session: MicroappSession | undefined;
  const report = (stderrTail: string[] = []): MicroappCheckReport => ({
    ok: !steps.some((step) => step.status === "fail"),
    target,
    ...(definition ? { microapp: info(definition, session) } : {}),
    steps,
    stderrTail,
  });
  const fail = (step: Step, error: unknown) =>
    steps.push({ step, status: "fail", detail: (error as Error).message, code: errorCodeOf(error) });

  try {
    const resolved = resolveMicroappTarget(target, options.id);
    const grants = options.grants;
    const entry = microapp.MicroappExtensionEntrySchema.parse({
      path: resolved.executable,
      ...(options.config === undefined ? {} : { config: options.config }),
      ...(options.timeoutSecs === undefined ? {} : { timeout_secs: options.timeoutSecs }),
    });
    definition = await loadMicroappDefinition(resolved.id, entry, "/");
    const declared = definition.manifest.capabilities.admin;
    const granted = [...(grants ?? [...(declared?.required ?? []), ...(declared?.optional ?? [])])];
    definition = { ...definition, entry: { ...definition.entry, capabilities_grant: granted } };
    steps.push({
      step: "manifest",
      status: "ok",
      detail: `${definition.manifestFile ?? "no plugin.toml (no capabilities declared)"}; id ${resolved.id}; granted for the check: ${granted.join(", ") || "nothing"}`,
    });
  } catch (error) {
    if (
      !(
        error instanceof MicroappTargetError ||
        error instanceof MicroappExecutableError ||
        error instanceof ConfigError
      )
    )
      throw error;
    fail(error instanceof MicroappTargetError ? "target" : "manifest", error);
    return report();
  }

  const checked: MicroappDefinition = definition;
  const stateDir = mkdtempSync(join(tmpdir(), `nexo-microapp-check-${checked.id}-`));
  const host = new MicroappHost({
    definition: checked,
    stateDir,
    ...(options.env ? { env: options.env } : {}),
    // A check runs the microapp once: a crash is a finding, not something to retry.
    restart: { respawn: false },
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const { serve } = options;
  if (serve !== undefined) {
    const identity = { id: checked.id, granted: new Set(checked.entry.capabilities_grant) };
    host.attach((peer) => serve(identity, peer));
  }
  try {
    const started = Date.now();
    try {
      session = await host.start();
    } catch (error) {
      fail("handshake", error);
      return report(host.status().stderrTail);
    }
    steps.push({
      step: "handshake",
      status: "ok",
      detail: `initialize answered in ${Date.now() - started} ms (version ${session.version ?? "not given"}, pid ${session.pid})`,
    });
    steps.push(...toolSteps(checked.id, session));
    steps.push(await catalogueStep(host, session));
    steps.push(...(await hookSteps(host, session)));
    steps.push(await methodStep(host, session));
    steps.push(...adminSteps(options.adminCalls?.() ?? []));
    steps.push(await shutdownStep(host));
    return report(steps.some((step) => step.status === "fail") ? host.status().stderrTail : []);
  } finally {
    await host.stop("nexo microapp check").catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

function toolSteps(id: string, session: MicroappSession): MicroappCheckStep[] {
  const names = [...session.catalog.tools.keys()];
  const steps: MicroappCheckStep[] = [
    {
      step: "tools",
      status: "ok",
      detail:
        names.length === 0
          ? "no tools"
          : `${names.length} tool${names.length === 1 ? "" : "s"} named ${microapp.microappToolPrefix(id)}*: ${names.join(", ")}`,
    },
  ];
  for (const problem of session.catalog.rejected)
    steps.push({ step: "tools", status: "fail", detail: problem });
  return steps;
}

async function catalogueStep(host: MicroappHost, session: MicroappSession): Promise<MicroappCheckStep> {
  const fromInitialize = session.catalogText;
  const texts: string[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      await host.refreshTools();
      texts.push(session.catalogText);
    }
  } catch (error) {
    return {
      step: "catalogue",
      status: "fail",
      detail: `tools/list failed: ${(error as Error).message}`,
      code: errorCodeOf(error),
    };
  }
  const names = (text: string) =>
    JSON.stringify((JSON.parse(text) as Array<{ name?: unknown }>).map((tool) => tool.name).sort());
  if (names(texts[0]!) !== names(texts[1]!))
    return {
      step: "catalogue",
      status: "fail",
      detail: "two tools/list calls announced different tools; the catalogue must be stable",
    };
  if (texts[0] !== texts[1])
    return {
      step: "catalogue",
      status: "warn",
      detail:
        "two tools/list calls answered the same tools in different bytes; answer identical bytes so the model's tool-cache prefix stays warm",
    };
  if (names(texts[0]!) !== names(fromInitialize))
    return {
      step: "catalogue",
      status: "warn",
      detail: "tools/list announces other tools than initialize did",
    };
  return { step: "catalogue", status: "ok", detail: "two tools/list calls answered identical bytes" };
}

async function hookSteps(host: MicroappHost, session: MicroappSession): Promise<MicroappCheckStep[]> {
  const steps: MicroappCheckStep[] = session.hooks.ignored.map((detail) => ({
    step: "hooks",
    status: "warn",
    detail,
  }));
  for (const name of session.hooks.names) {
    try {
      const decision = await host.callHook(name, SAMPLE_HOOK_PARAMS);
      steps.push({ step: "hooks", status: "ok", detail: `hooks/${name} answered ${decision.vote}` });
    } catch (error) {
      if (error instanceof RpcError && error.code === JsonRpcCode.methodNotFound) {
        steps.push({
          step: "hooks",
          status: "warn",
          detail: `hooks/${name} answered -32601 although initialize registered it (counts as abstain)`,
        });
      } else {
        const why =
          error instanceof MalformedReplyError
            ? `answered something that is not a decision: ${error.detail}`
            : (error as Error).message;
        steps.push({
          step: "hooks",
          status: "fail",
          detail: `hooks/${name}: ${why}`,
          code: errorCodeOf(error),
        });
      }
    }
  }
  if (steps.length === 0) steps.push({ step: "hooks", status: "ok", detail: "no hooks registered" });
  return steps;
}

async function methodStep(host: MicroappHost, session: MicroappSession): Promise<MicroappCheckStep> {
  try {
    await session.peer.request(UNKNOWN_METHOD, {}, { timeoutMs: host.timeoutMs });
    return {
      step: "methods",
      status: "fail",
      detail: `${UNKNOWN_METHOD} was answered with a result; a method the microapp does not know must get -32601`,
    };
  } catch (error) {
    if (error instanceof RpcError && error.code === JsonRpcCode.methodNotFound)
      return { step: "methods", status: "ok", detail: "a method it does not know is answered -32601" };
    const why =
      error instanceof TimeoutError ? "was not answered" : `was answered ${(error as Error).message}`;
    return {
      step: "methods",
      status: "fail",
      detail: `${UNKNOWN_METHOD} ${why}; a method the microapp does not know must get -32601`,
      code: errorCodeOf(error),
    };
  }
}

function adminSteps(calls: readonly SeenAdminCall[]): MicroappCheckStep[] {
  if (calls.length === 0) return [{ step: "admin", status: "ok", detail: "no admin call during the check" }];
  return calls.map((call) => {
    const outcome = call.result === "ok" ? "ok" : `${call.result} (${call.error_code})`;
    if (call.error_code === JsonRpcCode.invalidRequest)
      return {
        step: "admin",
        status: "fail",
        detail: `${call.method}: refused, its request id does not start with "app:"`,
      };
    return {
      step: "admin",
      status: call.result === "denied" ? "warn" : "ok",
      detail: `${call.method}: ${outcome}`,
    };
  });
}

async function shutdownStep(host: MicroappHost): Promise<MicroappCheckStep> {
  const before = host.status().lastError;
  const started = Date.now();
  await host.stop("nexo microapp check");
  const took = Date.now() - started;
  const { lastError, lastExit } = host.status();
  if (lastError !== undefined && lastError !== before) {
    const detail =
      lastError.code === "microapp_shutdown_timeout"
        ? `shutdown was not answered within 5 s (${lastError.message})`
        : lastError.message;
    return { step: "shutdown", status: "fail", detail, code: lastError.code };
  }
  if (lastExit?.signal === "SIGKILL")
    return {
      step: "shutdown",
      status: "warn",
      detail: `answered, but SIGTERM did not end it: killed after ${took} ms; exit on SIGTERM`,
    };
  return { step: "shutdown", status: "ok", detail: `answered {ok: true}; gone after ${took} ms` };
}

function info(
  definition: MicroappDefinition,
  session: MicroappSession | undefined,
): NonNullable<MicroappCheckReport["microapp"]> {
  return {
    id: definition.id,
    executable: definition.executable,
    ...(session?.version === undefined ? {} : { version: session.version }),
    tools: session
      ? [...session.catalog.tools.values()].map(({ name, description }) => ({
          name,
          description: description ?? "",
        }))
      : [],
    hooks: session ? [...session.hooks.names] : [],
  };
}
