/**
 * `nexo console url`: reads where the console listens (`console.json`) and its login token from
 * the console's state directory, `<state_dir>/extensions/<id>/state` (the daemon gives every
 * microapp that directory), and prints the login URL. Nothing is asked of the daemon: the console
 * owns these files, the CLI only reads them. A file whose process is gone is a stopped console.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import * as microapp from "@nexo/wire/schemas/microapp";
import { ConfigError } from "../config/index.js";
import { probePid } from "../process/identity.js";
import { stateDirOf } from "./microapp-audit.js";

export interface ConsoleUrlOptions {
  stateDir?: string;
  config?: string;
  id: string;
  wait: number;
  json?: boolean;
}

const POLL_MS = 200;

type Lookup = { ok: true; endpoint: microapp.ConsoleEndpoint; token: string } | { ok: false; why: string };

function lookUp(dir: string): Lookup {
  const file = join(dir, microapp.CONSOLE_ENDPOINT_FILE);
  if (!existsSync(file)) {
    return {
      ok: false,
      why: `the console is not running: no ${file} (is it in extensions.yaml, and is the daemon started?)`,
    };
  }
  let endpoint: microapp.ConsoleEndpoint;
  try {
    endpoint = microapp.ConsoleEndpointSchema.parse(JSON.parse(readFileSync(file, "utf8")));
  } catch (error) {
    return { ok: false, why: `${file} is not a console endpoint file: ${(error as Error).message}` };
  }
  if (!probePid(endpoint.pid).alive) {
    return { ok: false, why: `the console that wrote ${file} (pid ${endpoint.pid}) is not running` };
  }
  const tokenFile = join(dir, microapp.CONSOLE_TOKEN_FILE);
  if (!existsSync(tokenFile)) return { ok: false, why: `no login token in ${tokenFile}` };
  return { ok: true, endpoint, token: readFileSync(tokenFile, "utf8").trim() };
}

/**
 * The console's login URL when a console of this state directory runs (waiting up to `waitMs` for
 * it to write its files); undefined otherwise. What `nexo chat` shows beside its banner.
 */
export async function consoleLoginUrlOf(
  stateDir: string,
  waitMs: number,
  id = "console",
): Promise<string | undefined> {
  const dir = join(stateDir, "extensions", id, "state");
  // No state directory: no console in this daemon's extensions.yaml (nothing to wait for).
  if (!existsSync(dir)) return undefined;
  const deadline = Date.now() + waitMs;
  let found = lookUp(dir);
  while (!found.ok && Date.now() < deadline) {
    await sleep(POLL_MS);
    found = lookUp(dir);
  }
  return found.ok ? microapp.consoleLoginUrl(found.endpoint, found.token) : undefined;
}

export async function runConsoleUrl(options: ConsoleUrlOptions): Promise<number> {
  if (!Number.isFinite(options.wait) || options.wait < 0) {
    process.stderr.write("nexo console url: --wait expects a number of seconds ≥ 0\n");
    return 2;
  }
  let stateDir: string;
  try {
    stateDir = await stateDirOf(options);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`nexo console url: ${error.message}\n`);
    return 2;
  }
  // The daemon gives each microapp `<state_dir>/extensions/<id>/state` (extensions/microapps/manager.ts).
  const dir = join(stateDir, "extensions", options.id, "state");
  const deadline = Date.now() + options.wait * 1000;
  let found = lookUp(dir);
  while (!found.ok && Date.now() < deadline) {
    await sleep(POLL_MS);
    found = lookUp(dir);
  }
  if (!found.ok) {
    process.stderr.write(`nexo console url: ${found.why}\n`);
    return 1;
  }
  const loginUrl = microapp.consoleLoginUrl(found.endpoint, found.token);
  if (options.json) {
    const out = { url: found.endpoint.url, login_url: loginUrl, pid: found.endpoint.pid };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } else {
    process.stdout.write(`${loginUrl}\n`);
  }
  return 0;
}
