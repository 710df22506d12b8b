/**
 * `nexo microapp check` and `nexo microapp call`: the microapp author's loop, from the outside.
 * The microapp runs on the daemon's own host with its admin calls served by the daemon's own frame
 * (over a throwaway store, granted what its plugin.toml declares or what `--grant` says), so what
 * passes here passes in the daemon. Both exit non-zero on any failure, so they fit in a CI.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as microapp from "@nexo/wire/schemas/microapp";
import { AdminFrame } from "../admin/index.js";
import { ScriptedProvider } from "../engine/providers/scripted.js";
import { checkMicroapp, type SeenAdminCall } from "../extensions/microapps/check.js";
import { loadMicroappDefinition } from "../extensions/microapps/definition.js";
import { MicroappHost } from "../extensions/microapps/host.js";
import { resolveMicroappTarget } from "../extensions/microapps/target.js";
import { Store } from "../store/index.js";
import { cliLogger, describeFailure, formatCheckReport } from "./extension-cli.js";

/** The options `nexo microapp check` and `call` share. */
export interface MicroappRunOptions {
  id?: string;
  /** The initialize config, as JSON text. */
  config?: string;
  grant: string[];
  timeout?: number;
  json?: boolean;
}

/** The daemon's admin frame over an in-memory store and a temporary state dir, for one run. */
function throwawayAdmin() {
  const store = Store.inMemory();
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-microapp-admin-"));
  const scripted = new ScriptedProvider();
  const frame = new AdminFrame({
    services: {
      audit: store.audit,
      memory: store.memory,
      providers: { get: (id) => (id === "scripted" ? scripted : undefined) },
      secrets: { stateDir, env: {} },
    },
    logger: cliLogger("microapp-cli"),
  });
  return {
    serve: frame.serve.bind(frame),
    calls: (): SeenAdminCall[] =>
      store.audit
        .tail({ limit: 500 })
        .entries.reverse()
        .map(({ method, result, error_code }) => ({ method, result, error_code })),
    close: () => {
      frame.close();
      store.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

function parseJson(what: string, text: string | undefined): { ok: true; value: unknown } | { ok: false } {
  if (text === undefined) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    process.stderr.write(`nexo microapp: ${what} is not JSON: ${(error as Error).message}\n`);
    return { ok: false };
  }
}

export async function runMicroappCheck(target: string, options: MicroappRunOptions): Promise<number> {
  const config = parseJson("--config", options.config);
  if (!config.ok) return 2;
  const admin = throwawayAdmin();
  try {
    const report = await checkMicroapp(target, {
      ...(options.id ? { id: options.id } : {}),
      ...(config.value === undefined ? {} : { config: config.value }),
      ...(options.timeout ? { timeoutSecs: options.timeout } : {}),
      ...(options.grant.length > 0 ? { grants: options.grant } : {}),
      serve: admin.serve,
      adminCalls: admin.calls,
      logger: cliLogger("microapp-cli"),
    });
    process.stdout.write(
      options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatCheckReport(report, "microapp")}\n`,
    );
    return report.ok ? 0 : 1;
  } finally {
    admin.close();
  }
}

export async function runMicroappCall(
  target: string,
  tool: string,
  rawArgs: string,
  options: MicroappRunOptions & { agent: string },
): Promise<number> {
  const args = parseJson("the arguments", rawArgs);
  const config = parseJson("--config", options.config);
  if (!args.ok || !config.ok) return 2;
  if (args.value === null || typeof args.value !== "object" || Array.isArray(args.value)) {
    process.stderr.write("nexo microapp call: the arguments must be a JSON object\n");
    return 2;
  }
  const admin = throwawayAdmin();
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-microapp-call-"));
  let host: MicroappHost | undefined;
  try {
    const resolved = resolveMicroappTarget(target, options.id);
    const entry = microapp.MicroappExtensionEntrySchema.parse({
      path: resolved.executable,
      ...(config.value === undefined ? {} : { config: config.value }),
      ...(options.timeout ? { timeout_secs: options.timeout } : {}),
    });
    const definition = await loadMicroappDefinition(resolved.id, entry, "/");
    const declared = definition.manifest.capabilities.admin;
    const granted =
      options.grant.length > 0
        ? options.grant
        : [...(declared?.required ?? []), ...(declared?.optional ?? [])];
    host = new MicroappHost({
      definition,
      stateDir,
      restart: { respawn: false },
      logger: cliLogger("microapp-cli"),
    });
    const identity = { id: definition.id, granted: new Set(granted) };
    host.attach((peer) => admin.serve(identity, peer));
    await host.start();
    const result = await host.callTool({
      tool,
      args: args.value as Record<string, unknown>,
      binding_context: { agent_id: options.agent },
    });
    for (const call of admin.calls())
      process.stderr.write(
        `admin call: ${call.method} → ${call.result}${call.error_code ? ` (${call.error_code})` : ""}\n`,
      );
    if (result.error !== undefined) {
      process.stderr.write(
        options.json ? `${JSON.stringify(result, null, 2)}\n` : `tool error: ${result.error}\n`,
      );
      return 1;
    }
    const output = result.output;
    process.stdout.write(
      options.json
        ? `${JSON.stringify(result, null, 2)}\n`
        : `${typeof output === "string" ? output : JSON.stringify(output, null, 2)}\n`,
    );
    return 0;
  } catch (error) {
    process.stderr.write(`${describeFailure(error, options.json === true)}\n`);
    const tail = host?.status().stderrTail ?? [];
    if (tail.length > 0)
      process.stderr.write(
        `last stderr lines of the microapp:\n${tail.map((line) => `  ${line}`).join("\n")}\n`,
      );
    return 1;
  } finally {
    await host?.stop("nexo microapp call");
    admin.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
