/**
 * `nexo app-server`'s fast start: the first `initialize` answered before the rest of nexo loads.
 *
 * Launchers wait for that answer, and loading the AppServer door (its protocol's zod schemas, the
 * logger, the wire peer) takes most of the time to it. So main.ts, for a stdio launch this file
 * understands, skips commander and comes here: the door starts loading at once, and meanwhile
 * stdin is read; when the first complete line is an `initialize` request this file fully
 * understands, it is answered here — the same bytes the door would write, with the capabilities of
 * the core families (doors/appserver/capability-flags.ts, the families' own copy). The door then
 * takes over stdin with every byte after that line, its connection already initialized with the
 * same params (connection.ts). Anything else — another first message, garbage, a blank or CRLF
 * line, params with a field not checked here — is not answered: every byte goes to the door, which
 * answers as it always has. Nothing here writes to stderr, and nothing but that one answer to
 * stdout.
 */
import { isUtf8 } from "node:buffer";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { PassThrough } from "node:stream";
import { coreCapabilities } from "../doors/appserver/capability-flags.js";
import { NEXO_VERSION } from "../version.js";
import type { AppServerFlags, StdioHandOff } from "./app-server-run.js";
import { exitOnSignalUntilHandedOver } from "./fast-start-signals.js";

/** The wire protocol's version; the door's PROTOCOL_VERSION (a test holds them equal). */
const PROTOCOL_VERSION = "1";

/** A first line longer than this is left to the door (real `initialize` requests are ~300 bytes). */
const MAX_FIRST_LINE_BYTES = 64 * 1024;

/** The flags a fast launch may carry: none of them changes what `initialize` answers. */
const VALUE_FLAGS: Readonly<Record<string, keyof AppServerFlags>> = {
  "--workspace": "workspace",
  "--state-dir": "stateDir",
  "--provider": "provider",
  "--model": "model",
  "--base-url": "baseUrl",
};

/**
 * The flags of `nexo app-server ARGS` when this launch can start fast: stdio only (no `--listen`,
 * no token, no `--config`), a workspace that exists (the door's start-up checks would refuse
 * nothing), and nothing commander would read differently. Undefined: let commander run it.
 */
export function fastAppServerFlags(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): AppServerFlags | undefined {
  // A token is checked (and may be refused, exit 2) by the door's start-up, before any answer.
  if (env.NEXO_APPSERVER_TOKEN) return undefined;
  const flags: AppServerFlags = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf("=");
    const key = VALUE_FLAGS[eq === -1 ? arg : arg.slice(0, eq)];
    if (key === undefined) return undefined;
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value === "" || value.startsWith("-")) return undefined;
    flags[key] = value;
  }
  try {
    if (!statSync(resolve(flags.workspace ?? process.cwd())).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  return flags;
}

/** The first message, when it is an `initialize` request whose every part is checked here. */
export interface FastInitialize {
  id: string | number;
  /** The request's params as sent; the door parses them with its schema (connection.ts). */
  params: Record<string, unknown>;
}

const CLIENT_INFO_KEYS = new Set(["name", "title", "version"]);
const BOOLEAN_CAPABILITIES = new Set([
  "approvalSupport",
  "streamingSupport",
  "commandExecutionStreaming",
  "toolExecutionLifecycle",
  "backgroundTerminals",
  "configChange",
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Reads one line (without its `\n`) as an `initialize` request the door would answer with success.
 * Conservative: a key or a value this does not know the door's answer to makes it undefined.
 */
export function fastInitialize(line: Buffer): FastInitialize | undefined {
  if (line.length === 0 || line[line.length - 1] === 0x0d || !isUtf8(line)) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(line.toString("utf8"));
  } catch {
    return undefined;
  }
  if (!isRecord(message) || message.method !== "initialize") return undefined;
  for (const key of Object.keys(message)) {
    if (key !== "jsonrpc" && key !== "id" && key !== "method" && key !== "params") return undefined;
  }
  const { id, params } = message;
  if (
    message.jsonrpc !== "2.0" ||
    !(typeof id === "string" || (typeof id === "number" && Number.isFinite(id)))
  ) {
    return undefined;
  }
  if (!isRecord(params)) return undefined;
  for (const key of Object.keys(params)) {
    if (key !== "clientInfo" && key !== "capabilities") return undefined;
  }
  const { clientInfo, capabilities } = params;
  if (!isRecord(clientInfo)) return undefined;
  for (const [key, value] of Object.entries(clientInfo)) {
    if (!CLIENT_INFO_KEYS.has(key) || typeof value !== "string") return undefined;
  }
  if (
    typeof clientInfo.name !== "string" ||
    clientInfo.name === "" ||
    typeof clientInfo.version !== "string"
  ) {
    return undefined;
  }
  if (capabilities !== undefined) {
    if (!isRecord(capabilities)) return undefined;
    for (const [key, value] of Object.entries(capabilities)) {
      if (BOOLEAN_CAPABILITIES.has(key)) {
        if (typeof value !== "boolean") return undefined;
      } else if (key === "optOutNotificationMethods") {
        if (!Array.isArray(value) || !value.every((method) => typeof method === "string")) return undefined;
      } else {
        return undefined;
      }
    }
  }
  return { id, params };
}

/** The answer the door's connection would send to `request` on a stdio launch without a config. */
export function fastInitializeAnswer(request: FastInitialize): string {
  const result = {
    serverInfo: { name: "nexo", version: NEXO_VERSION, protocolVersion: PROTOCOL_VERSION },
    capabilities: coreCapabilities(),
  };
  return `${JSON.stringify({ jsonrpc: "2.0", id: request.id, result })}\n`;
}

/**
 * Serves `nexo app-server` on stdio: answers a first `initialize` while the door loads, then hands
 * stdin (what is left of it) to the door. Resolves once the door is serving.
 */
export async function serveAppServerFast(flags: AppServerFlags, env: NodeJS.ProcessEnv): Promise<void> {
  const door = import("./app-server-run.js");
  // What the door reads: every byte of stdin after the answered line (or all of them).
  const input = new PassThrough();
  const stdin = process.stdin;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let decided = false;
  let initialized: FastInitialize | undefined;
  const decide = (first: FastInitialize | undefined, rest: Buffer[]): void => {
    decided = true;
    pending = [];
    if (first !== undefined) {
      initialized = first;
      process.stdout.write(fastInitializeAnswer(first));
    }
    for (const chunk of rest) if (chunk.length > 0) input.write(chunk);
  };
  const onData = (chunk: Buffer): void => {
    if (decided) {
      input.write(chunk);
      return;
    }
    const newline = chunk.indexOf(0x0a);
    if (newline === -1) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes > MAX_FIRST_LINE_BYTES) decide(undefined, pending);
      return;
    }
    const line = Buffer.concat([...pending, chunk.subarray(0, newline)]);
    const first = fastInitialize(line);
    decide(first, first === undefined ? [...pending, chunk] : [chunk.subarray(newline + 1)]);
  };
  const onEnd = (): void => {
    if (!decided) decide(undefined, pending);
    input.end();
  };
  const onError = (error: Error): void => {
    input.destroy(error);
  };
  const handOver = exitOnSignalUntilHandedOver();
  stdin.on("data", onData);
  stdin.once("end", onEnd);
  stdin.once("error", onError);

  const { runAppServer } = await door;
  // The door came first: the first line (if any arrived) is its to answer.
  if (!decided) decide(undefined, pending);
  const handOff: StdioHandOff = {
    input,
    ...(initialized === undefined ? {} : { initialized: initialized.params }),
  };
  // runAppServer installs its own handlers before its first await (a fast launch has no config to
  // read).
  await handOver(() => runAppServer(flags, env, handOff));
}
