/**
 * `appserver.yaml` (optional): the AppServer protocol (DotCraft's clients) served next to the other
 * doors. `nexo start` serves it over a WebSocket when the file names a `listen` address;
 * `nexo app-server --config DIR` reads the same file (its flags win).
 *
 *   listen: ws://127.0.0.1:9100
 *   token: ${NEXO_APPSERVER_TOKEN}   # else NEXO_APPSERVER_TOKEN itself; required off loopback
 *   agent: assistant                 # the agents.yaml agent that answers threads (nexo start)
 *   approval_timeout_s: 120          # an unanswered approval then fails its turn (-32020)
 *   welcome_suggestions: false       # welcome/suggestions answers none (default: asks the model)
 *   external_channels:               # the channel adapters this server accepts
 *     telegram: { transport: websocket }            # connects by itself, channelAdapter "telegram"
 *     feishu:                                      # started by the server, spoken to over stdio
 *       transport: subprocess
 *       command: node
 *       args: [feishu-adapter.js]
 *       working_directory: adapters                # relative: to the workspace
 *       env: { FEISHU_APP_ID: "${FEISHU_APP_ID}" }
 *       enabled: false
 *
 * The AppServer's `externalChannel/*` methods edit `external_channels` through the services'
 * comment-preserving writer.
 */
import { z } from "zod";
import { disposableSchema } from "../../config/disposable-schema.js";
import type { Env } from "../../config/index.js";
import { ListenError, type ListenPlan, parseListen } from "./appserver-listen.js";

export const DEFAULT_APPROVAL_TIMEOUT_S = 120;

/** A channel name: what adapters declare as `channelAdapter.channelName`. */
export const EXTERNAL_CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * appserver.yaml's schemas, built on use and freed once no parse holds them
 * (config/disposable-schema.ts): the file is parsed at start, on reload, by `nexo app-server` and by
 * the AppServer's config methods, never at idle.
 */
function buildSchemas() {
  const ExternalChannelEntrySchema = z
    .strictObject({
      enabled: z.boolean().optional(),
      transport: z.enum(["websocket", "subprocess"]),
      /** subprocess only: the adapter's program and its arguments. */
      command: z.string().min(1).optional(),
      args: z.array(z.string()).optional(),
      /** subprocess only: where it runs; relative to the workspace. Default: the workspace. */
      working_directory: z.string().min(1).optional(),
      /** subprocess only: added to the server's environment. */
      env: z.record(z.string(), z.string()).optional(),
    })
    .superRefine((entry, ctx) => {
      if (entry.transport === "subprocess" && entry.command === undefined) {
        ctx.addIssue({ code: "custom", path: ["command"], message: "a subprocess channel needs a command" });
      }
      if (entry.transport === "websocket") {
        for (const key of ["command", "args", "working_directory", "env"] as const) {
          if (entry[key] !== undefined) {
            ctx.addIssue({
              code: "custom",
              path: [key],
              message: `${key} is for subprocess channels; a websocket adapter connects by itself`,
            });
          }
        }
      }
    });
  const AppServerFileSchema = z.strictObject({
    /** stdio://, ws://HOST:PORT or ws+stdio://HOST:PORT (appserver-listen.ts); the daemon takes ws:// only. */
    listen: z.string().min(1).optional(),
    /** Required as `?token=` on the WebSocket; required for a non-loopback listen. */
    token: z.string().min(1).optional(),
    /** The agent of agents.yaml whose model, tools and plugins answer threads (nexo start). */
    agent: z.string().min(1).optional(),
    /** How long an approval request waits for an answer. Default 120 s. */
    approval_timeout_s: z.number().positive().max(86_400).optional(),
    /** Whether `welcome/suggestions` asks the model (default true); `workspace/config/update` edits it. */
    welcome_suggestions: z.boolean().optional(),
    /** The channel adapters accepted, by channel name. */
    external_channels: z
      .record(
        z.string().regex(EXTERNAL_CHANNEL_NAME, "a channel name is letters, digits, _ . - (up to 64)"),
        ExternalChannelEntrySchema,
      )
      .optional(),
  });

  return { ExternalChannelEntrySchema, AppServerFileSchema };
}
export const ExternalChannelEntrySchema = disposableSchema(() => buildSchemas().ExternalChannelEntrySchema);
export type ExternalChannelEntry = z.infer<typeof ExternalChannelEntrySchema>;
export const AppServerFileSchema = disposableSchema(() => buildSchemas().AppServerFileSchema);
export type AppServerFile = z.infer<typeof AppServerFileSchema>;

/** The token to require: the file's, else NEXO_APPSERVER_TOKEN. */
export function appServerToken(file: AppServerFile, env: Env): string | undefined {
  return file.token ?? (env.NEXO_APPSERVER_TOKEN || undefined);
}

/** What `nexo start` serves: a WebSocket listener answered by one agent. */
export interface DaemonAppServer {
  websocket: NonNullable<ListenPlan["websocket"]>;
  /** The agent that answers threads (the loader resolves it against agents.yaml). */
  agent: string | undefined;
  approvalTimeoutMs: number;
}

/**
 * The daemon's reading of the file: undefined when it names no `listen` (nothing is served), or
 * the reason it cannot be served (`key` names the key at fault).
 */
export function daemonAppServer(
  file: AppServerFile,
  env: Env,
):
  | { ok: true; value: DaemonAppServer | undefined }
  | { ok: false; key: "listen" | "token"; problem: string } {
  if (file.listen === undefined) return { ok: true, value: undefined };
  let plan: ListenPlan;
  try {
    plan = parseListen(file.listen, appServerToken(file, env));
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    return { ok: false, key: /token/.test(error.message) ? "token" : "listen", problem: error.message };
  }
  if (plan.stdio || plan.websocket === undefined) {
    return {
      ok: false,
      key: "listen",
      problem: `the daemon has no stdio client: serve ws://HOST:PORT (got ${file.listen})`,
    };
  }
  return {
    ok: true,
    value: {
      websocket: plan.websocket,
      agent: file.agent,
      approvalTimeoutMs: (file.approval_timeout_s ?? DEFAULT_APPROVAL_TIMEOUT_S) * 1000,
    },
  };
}

/**
 * `nexo start --appserver URL [--appserver-agent ID]` (what `nexo chat --config DIR` starts): serve
 * the AppServer at URL whatever appserver.yaml says about `listen`, keeping the file's token and
 * timeout. The agent is the flag's, else the file's, else the only agent of agents.yaml.
 */
export function appServerOverride(
  served: DaemonAppServer | undefined,
  listen: string,
  agent: string | undefined,
  agentIds: readonly string[],
  env: Env,
): { ok: true; value: DaemonAppServer } | { ok: false; problem: string } {
  const token = served?.websocket.token ?? (env.NEXO_APPSERVER_TOKEN || undefined);
  const read = daemonAppServer({ listen, ...(token === undefined ? {} : { token }) }, env);
  if (!read.ok) return { ok: false, problem: `--appserver: ${read.problem}` };
  const chosen = agent ?? served?.agent ?? (agentIds.length === 1 ? agentIds[0] : undefined);
  if (chosen === undefined || !agentIds.includes(chosen)) {
    const known = agentIds.join(", ") || "none";
    return {
      ok: false,
      problem:
        chosen === undefined
          ? `agents.yaml has ${agentIds.length} agents: name the one that answers with --appserver-agent (one of: ${known})`
          : `--appserver-agent: unknown agent "${chosen}" (agents.yaml has: ${known})`,
    };
  }
  return {
    ok: true,
    value: {
      websocket: read.value!.websocket,
      agent: chosen,
      approvalTimeoutMs: served?.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_S * 1000,
    },
  };
}
