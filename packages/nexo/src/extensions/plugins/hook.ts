/**
 * Plugin hooks (plugin contract §5.z): one engine HookHandler per `[plugin.extends].hooks`
 * entry, each firing one `hook.on_hook {plugin_id, hook_name, event}` within 5 s
 * (NEXO_PLUGIN_HOOK_TIMEOUT_MS). Continue-on-error: a timeout, an error reply (including -32601),
 * a plugin that is not running or a reply that is not a HookResponse all yield "continue" plus
 * a warning, so the next handler runs and the turn goes on.
 *
 * Each `[plugin.extends].hooks` entry names the hook point the plugin wants. The contract's
 * names map onto the engine's points:
 *
 *   before_message                     → before_message  (payload {text})
 *   before_tool_call, before_tool      → before_tool     (payload {tool, args})
 *   after_tool_call, after_tool        → after_tool      (payload {tool, args, output, status})
 *   before_reply, before_response      → before_reply    (payload {text})
 *
 * A name outside this table is a point nexo never fires: it is reported (`unknownHookNames`)
 * and never called. The plugin receives the engine's payload as `event`, plus `body` (the text
 * a hook would redact: the message, the tool output or the reply) and `agent_id` / `session_id`.
 *
 * The reply (HookResponse) becomes a vote:
 *   abort: true, or decision "block"        → block, with `reason`
 *   decision "transform" + transformed_body → transform: the body field replaced
 *   override (an object)                    → transform: those keys replaced (`body` = the body field)
 *   anything else ({}, decision "allow")    → continue
 * `do_not_reply_again` has no engine counterpart yet; it is logged and otherwise ignored.
 */
import type { plugin } from "@nexo/wire/schemas";
import type { HookRunner } from "../../engine/hooks.js";
import type { HookHandler, HookPoint, HookVote } from "../../engine/types.js";
import type { SupervisorLogger } from "../supervisor.js";
import { type PluginCalls, pluginCalls } from "./calls.js";
import type { PluginHost } from "./host.js";
import { registerEach } from "./registration.js";

export const HOOK_NAME_TO_POINT: Readonly<Record<string, HookPoint>> = {
  before_message: "before_message",
  before_tool_call: "before_tool",
  before_tool: "before_tool",
  after_tool_call: "after_tool",
  after_tool: "after_tool",
  before_reply: "before_reply",
  before_response: "before_reply",
};

/** The payload field holding the text a hook would rewrite, per point. */
const BODY_FIELD: Readonly<Record<HookPoint, string | undefined>> = {
  before_message: "text",
  before_tool: undefined,
  after_tool: "output",
  before_reply: "text",
};

/** Keys the host adds to the event; a plugin's override of them means nothing to the engine. */
const HOST_KEYS = new Set(["agent_id", "session_id"]);

type HookHost = Pick<PluginHost, "id" | "request" | "requestStream" | "timeouts">;

export class PluginHookHandler implements HookHandler {
  readonly name: string;
  readonly points: readonly HookPoint[];
  private readonly host: HookHost;
  private readonly calls: PluginCalls;
  private readonly hookName: string;
  private readonly logger: SupervisorLogger;

  /** `hookName` must be a key of HOOK_NAME_TO_POINT. */
  constructor(host: HookHost, hookName: string, logger: SupervisorLogger) {
    const point = HOOK_NAME_TO_POINT[hookName];
    if (point === undefined) throw new RangeError(`"${hookName}" is not a hook point nexo fires`);
    this.host = host;
    this.calls = pluginCalls(host);
    this.hookName = hookName;
    this.logger = logger;
    this.name = `plugin:${host.id}:${hookName}`;
    this.points = [point];
  }

  async onHook(
    point: HookPoint,
    payload: Record<string, unknown>,
    ctx: { agentId: string; sessionId: string },
  ): Promise<HookVote> {
    const bodyField = BODY_FIELD[point];
    const body = bodyField === undefined ? undefined : payload[bodyField];
    const event = {
      ...payload,
      ...(typeof body === "string" ? { body } : {}),
      agent_id: ctx.agentId,
      session_id: ctx.sessionId,
    };
    let reply: plugin.HookResponse;
    try {
      reply = await this.calls.request(
        "hook.on_hook",
        { plugin_id: this.host.id, hook_name: this.hookName, event },
        { timeoutMs: this.host.timeouts.hookMs },
      );
    } catch (error) {
      // Continue-on-error (§5.z): an error reply, a malformed reply, a timeout, a stopped plugin.
      return this.continueAfter(point, (error as Error).message);
    }
    return this.voteOf(point, payload, reply);
  }

  private voteOf(
    point: HookPoint,
    payload: Record<string, unknown>,
    response: plugin.HookResponse,
  ): HookVote {
    if (response.do_not_reply_again) {
      this.logger.info(
        { hook: this.name, point },
        "do_not_reply_again is not supported by this engine; ignored",
      );
    }
    if (response.abort || response.decision === "block") {
      return { decision: "block", reason: response.reason ?? `blocked by plugin ${this.host.id}` };
    }
    const bodyField = BODY_FIELD[point];
    let next: Record<string, unknown> | undefined;
    if (isObject(response.override)) {
      next = { ...payload };
      for (const [key, value] of Object.entries(response.override)) {
        if (key === "body" && bodyField !== undefined) next[bodyField] = value;
        else if (!HOST_KEYS.has(key)) next[key] = value;
      }
    } else if (response.override !== undefined && response.override !== null) {
      this.logger.warn({ hook: this.name, point }, "hook override is not an object; ignored");
    }
    if (response.decision === "transform" && typeof response.transformed_body === "string") {
      if (bodyField === undefined) {
        this.logger.warn(
          { hook: this.name, point },
          `${point} has no body to transform; transformed_body ignored`,
        );
      } else {
        next = { ...(next ?? payload), [bodyField]: response.transformed_body };
      }
    }
    return next === undefined ? { decision: "continue" } : { decision: "transform", payload: next };
  }

  private continueAfter(point: HookPoint, reason: string): HookVote {
    this.logger.warn({ hook: this.name, point, err: reason }, "plugin hook failed; continuing");
    return { decision: "continue" };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `[plugin.extends].hooks` entries that name no point nexo fires. */
export function unknownHookNames(names: readonly string[]): string[] {
  return names.filter((name) => HOOK_NAME_TO_POINT[name] === undefined);
}

/**
 * Registers a handler per known `[plugin.extends].hooks` entry (unknown ones are warned about).
 * Returns a function that removes them.
 */
export function registerPluginHooks(
  host: HookHost & Pick<PluginHost, "manifest">,
  runner: HookRunner,
  logger: SupervisorLogger,
): () => void {
  const names = host.manifest.manifest.plugin.extends?.hooks ?? [];
  for (const name of unknownHookNames(names)) {
    logger.warn(
      { plugin: host.id, hook: name, known: Object.keys(HOOK_NAME_TO_POINT) },
      `hook "${name}" is not a hook point nexo fires; it will never be called`,
    );
  }
  return registerEach(
    names.filter((name) => HOOK_NAME_TO_POINT[name] !== undefined),
    (name) => runner.register(new PluginHookHandler(host, name, logger)),
  );
}
