/**
 * The protocol's methods this server does not serve, each answered -32601 ("Method not found", as
 * the protocol wants for a family whose capability is off) with `error.data.detail` saying why, so
 * a client's message names the reason instead of a bare "not implemented":
 *
 * - `absentFamily`: what nexo has no counterpart for at all (cron jobs, heartbeats, automations,
 *   background terminals, skill variants). Their capability flags are never advertised.
 * - `withoutConfigFamily`: the management methods, on a `nexo app-server` started without a config
 *   directory (they edit its files).
 * - `notLiveFamily`: the live-status methods, on a `nexo app-server --config DIR`, where none of
 *   the MCP servers and channels the files name run.
 *
 * The real families serve these same names where they can (family.ts's `available`), so a name is
 * in one of these lists only where nothing else serves it.
 */
import { RpcError } from "@nexo/wire";
import {
  AppServerErrorCode as Code,
  externalChannelMethods,
  mcpMethods,
  mcpStatusMethods,
  modelMethods,
  pluginManagementMethods,
  skillsMethods,
  subAgentMethods,
  workspaceConfigMethods,
} from "@nexo/wire/schemas/appserver";
import { z } from "zod";
import { defineFamily, type FamilyHandler, type MethodFamily } from "../family.js";
import type { AppServerHost } from "../host.js";
import { managesConfig, managesLive } from "./managed.js";

const CRON = "nexo has no scheduled jobs: nothing runs an agent on a timer";
const AUTOMATIONS = "nexo has no automation tasks or templates";
const TERMINALS =
  "nexo runs every command to completion inside its turn (Bash) and keeps no background terminals";

/** Method → why nexo does not serve it. */
export const ABSENT_METHODS: Readonly<Record<string, string>> = {
  "cron/list": CRON,
  "cron/remove": CRON,
  "cron/enable": CRON,
  "cron/run": CRON,
  "heartbeat/trigger": "nexo has no heartbeat job to trigger",
  "automation/task/list": AUTOMATIONS,
  "automation/task/read": AUTOMATIONS,
  "automation/task/create": AUTOMATIONS,
  "automation/task/run": AUTOMATIONS,
  "automation/task/delete": AUTOMATIONS,
  "automation/task/updateBinding": AUTOMATIONS,
  "automation/template/list": AUTOMATIONS,
  "automation/template/save": AUTOMATIONS,
  "automation/template/delete": AUTOMATIONS,
  "terminal/list": TERMINALS,
  "terminal/read": TERMINALS,
  "terminal/write": TERMINALS,
  "terminal/stop": TERMINALS,
  "terminal/clean": TERMINALS,
  "skills/restoreOriginal":
    "nexo has no workspace variants of a skill (skillVariants is off): skills/read is already the original",
};

const namesOf = (...tables: object[]) => tables.flatMap((table) => Object.keys(table));

/** The methods of the families that need a config directory (families/index.ts, `managesConfig`). */
export const CONFIG_METHODS: readonly string[] = namesOf(
  modelMethods,
  mcpMethods,
  skillsMethods,
  pluginManagementMethods,
  subAgentMethods,
  externalChannelMethods,
  workspaceConfigMethods,
);

/** The methods of the families that need the parts to run here (`managesLive`). */
export const LIVE_METHODS: readonly string[] = [...namesOf(mcpStatusMethods), "channel/status"];

/** Params are not read: the answer is the same whatever the client sent. */
const ANY = { params: z.unknown(), result: z.never() };

/** A family answering each of `reasons`' methods -32601 with its reason. */
function refusing(
  name: string,
  reasons: Readonly<Record<string, string>>,
  available: (host: AppServerHost) => boolean,
): MethodFamily {
  const methods = Object.fromEntries(Object.keys(reasons).map((m) => [m, ANY]));
  const handlers: Record<string, FamilyHandler<typeof methods, string>> = {};
  for (const [methodName, reason] of Object.entries(reasons)) {
    handlers[methodName] = () => {
      throw new RpcError(Code.methodNotFound, `Method not found: ${methodName}`, { detail: reason });
    };
  }
  return defineFamily({ name, methods, available, capabilities: () => ({}), handlers });
}

export const absentFamily = refusing("absent", ABSENT_METHODS, () => true);

export const withoutConfigFamily = refusing(
  "without-config",
  Object.fromEntries(
    CONFIG_METHODS.map((m) => [
      m,
      "this AppServer was started without a config directory, so it manages none: start it with --config DIR (or serve it from `nexo start`)",
    ]),
  ),
  (host) => !managesConfig(host),
);

export const notLiveFamily = refusing(
  "not-live",
  Object.fromEntries(
    LIVE_METHODS.map((m) => [
      m,
      "the MCP servers and channels of this config directory do not run in `nexo app-server`; their live status is served by the daemon's AppServer (`nexo start` with appserver.yaml)",
    ]),
  ),
  (host) => managesConfig(host) && !managesLive(host),
);
