/**
 * Microapp hooks: for each hook a microapp named in its `initialize` result (`hooks: [...]`), one
 * engine HookHandler that calls `hooks/<name>` and turns the vote into the engine's decision:
 *
 *   deny    → block (the reason, or "denied by microapp <id>", goes to the log and the turn)
 *   allow   → continue
 *   abstain → continue (also a missing vote, and -32601: a microapp that does not know the hook)
 *
 * Any other failure — a timeout, an error reply, a malformed decision, a microapp that is down —
 * continues with a warning (the engine's continue-on-error rule): a broken microapp cannot wedge
 * a turn. Hook names map onto the engine's points like plugin hooks (before_message, …).
 *
 * The params are the engine's payload for the point (`{text}` for before_message) plus
 * `agent_id` and `session_id`.
 */
import { JsonRpcCode, RpcError } from "@nexo/wire";
import type { HookRunner } from "../../engine/hooks.js";
import type { HookHandler, HookPoint, HookVote } from "../../engine/types.js";
import { HOOK_NAME_TO_POINT } from "../plugins/hook.js";
import { registerEach } from "../plugins/registration.js";
import type { SupervisorLogger } from "../supervisor.js";
import type { MicroappHost } from "./host.js";

type HookHost = Pick<MicroappHost, "id" | "callHook">;

export class MicroappHookHandler implements HookHandler {
  readonly name: string;
  readonly points: readonly HookPoint[];

  /** `hookName` must be a key of HOOK_NAME_TO_POINT. */
  constructor(
    private readonly host: HookHost,
    private readonly hookName: string,
    private readonly logger: SupervisorLogger,
  ) {
    const point = HOOK_NAME_TO_POINT[hookName];
    if (point === undefined) throw new RangeError(`"${hookName}" is not a hook point nexo fires`);
    this.name = `microapp:${host.id}:${hookName}`;
    this.points = [point];
  }

  async onHook(
    point: HookPoint,
    payload: Record<string, unknown>,
    ctx: { agentId: string; sessionId: string },
  ): Promise<HookVote> {
    try {
      const decision = await this.host.callHook(this.hookName, {
        ...payload,
        agent_id: ctx.agentId,
        session_id: ctx.sessionId,
      });
      if (decision.vote === "deny")
        return { decision: "block", reason: decision.reason ?? `denied by microapp ${this.host.id}` };
      return { decision: "continue" };
    } catch (error) {
      if (!(error instanceof RpcError && error.code === JsonRpcCode.methodNotFound)) {
        this.logger.warn(
          { hook: this.name, point, err: (error as Error).message },
          "microapp hook failed; continuing",
        );
      }
      return { decision: "continue" };
    }
  }
}

/**
 * Registers a handler per hook the running microapp announced, again on every new incarnation
 * (a restarted microapp may announce others). Returns the remover.
 */
export function registerMicroappHooks(
  host: HookHost & Pick<MicroappHost, "session" | "on" | "off">,
  runner: HookRunner,
  logger: SupervisorLogger,
): () => void {
  let remove = () => {};
  const sync = () => {
    const session = host.session;
    if (session === undefined) return;
    remove();
    remove = registerEach(session.hooks.names, (name) =>
      runner.register(new MicroappHookHandler(host, name, logger)),
    );
  };
  sync();
  host.on("ready", sync);
  return () => {
    host.off("ready", sync);
    remove();
  };
}
