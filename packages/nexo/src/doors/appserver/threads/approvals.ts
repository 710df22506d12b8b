/**
 * A tool call waiting for consent, as the AppServer asks for it:
 *
 * 1. an `approvalRequest` item (started + completed), the turn turns `waitingApproval`;
 * 2. `item/approval/request` goes to every connection of the thread's audience that supports
 *    approvals; the first answer wins, the other requests are withdrawn;
 * 3. an `approvalResponse` item: `item/started`, `item/approval/resolved`, `item/completed`.
 *
 * Decisions: `accept` runs this call; `acceptForSession` and `acceptAlways` also grant what the
 * request's `scopeKey` names — no more than the user saw (engine/approvals.ts: the category for file
 * edits, the program for a plain command line, the exact line otherwise, the tool itself for the
 * rest) — for the thread, saved with it (a restart and `nexo agent --resume` keep it: nexo has no
 * grants wider than a thread, so the two are the same); `decline` refuses the call (the model is
 * told); `cancel` refuses it and cancels the turn. An answer that is not one of these is a decline.
 *
 * Nobody able to answer (every connection declared `approvalSupport: false`): the thread's
 * `approvalPolicy` decides at once — `autoApprove` accepts, `interrupt` cancels, otherwise decline.
 * Nobody answering in time (`timeoutMs`): the call is refused and the turn fails with -32020.
 * While nobody is connected the request waits (a client that subscribes again is asked).
 */
import { ConnectionClosedError, RequestCancelledError } from "@nexo/wire";
import type {
  ApprovalDecision,
  ApprovalRequestParams,
  ApprovalType,
  Item,
  ThreadConfiguration,
} from "@nexo/wire/schemas/appserver";
import { grantFor } from "../../../engine/approvals.js";
import type { TurnEvent } from "../../../engine/events.js";
import type { AgentSession } from "../../../engine/session.js";
import type { ToolCategory } from "../../../engine/types.js";
import type { AppServerConnection } from "../connection.js";

type ToolRequested = Extract<TurnEvent, { type: "tool_requested" }>;

/** How each tool category asks: files as `file`, commands as `shell`, the rest as remote resources. */
export function approvalTypeOf(category: ToolCategory): ApprovalType {
  if (category === "edit") return "file";
  if (category === "exec") return "shell";
  return "remoteResource";
}

/** What `acceptForSession`/`acceptAlways` would grant, in the protocol's `kind:…` words. */
export function scopeKeyOf(event: ToolRequested): string {
  const command =
    event.category === "exec" && typeof event.args.command === "string" ? event.args.command : undefined;
  const grant = grantFor({ name: event.name, category: event.category, command });
  switch (grant.kind) {
    case "category":
      return `${approvalTypeOf(grant.category)}:*`;
    case "program":
      return `shell:${grant.program} *`;
    case "command":
      return `shell:${grant.command}`;
    case "tool":
      return `${approvalTypeOf(event.category)}:${grant.tool}`;
  }
}

/** The operation and target shown on the approval card. */
export function describeRequest(
  event: ToolRequested,
  workspace: string,
): { operation: string; target: string } {
  const args = event.args;
  if (event.category === "exec" && typeof args.command === "string") {
    return { operation: args.command, target: workspace };
  }
  if (typeof args.file_path === "string") {
    return {
      operation: event.name === "Write" ? "write" : event.name === "Edit" ? "edit" : event.name,
      target: args.file_path,
    };
  }
  return { operation: event.name, target: event.description };
}

export function fallbackDecision(config: ThreadConfiguration | undefined): ApprovalDecision {
  if (config?.approvalPolicy === "autoApprove") return "accept";
  if (config?.approvalPolicy === "interrupt") return "cancel";
  return "decline";
}

/** One pending approval and the requests out for it. */
export class PendingApproval {
  readonly params: ApprovalRequestParams;
  readonly category: ToolCategory;
  readonly callId: string;
  readonly item: Item;
  private readonly asked = new Map<AppServerConnection, AbortController>();
  private settle!: (outcome: { decision: ApprovalDecision } | { timedOut: true }) => void;
  readonly outcome: Promise<{ decision: ApprovalDecision } | { timedOut: true }>;
  private readonly timer: NodeJS.Timeout;
  private done = false;

  constructor(options: {
    params: ApprovalRequestParams;
    category: ToolCategory;
    callId: string;
    item: Item;
    timeoutMs: number;
  }) {
    this.params = options.params;
    this.category = options.category;
    this.callId = options.callId;
    this.item = options.item;
    this.outcome = new Promise((resolve) => {
      this.settle = resolve;
    });
    this.timer = setTimeout(() => this.finish({ timedOut: true }), options.timeoutMs);
    this.timer.unref();
  }

  get settled(): boolean {
    return this.done;
  }

  /** Asks `connection` (once); its answer decides unless another came first. */
  ask(connection: AppServerConnection): void {
    if (this.done || this.asked.has(connection) || !connection.capabilities.approvalSupport) return;
    const controller = new AbortController();
    this.asked.set(connection, controller);
    connection
      .request("item/approval/request", this.params, { timeoutMs: 0, signal: controller.signal })
      .then(
        (reply) => this.finish({ decision: reply.decision }),
        (error: unknown) => {
          // A connection that went away (or a request withdrawn) leaves the others, or the
          // timeout, to decide; any other failure — an error reply, an answer that is not a
          // decision — counts as a decline.
          if (error instanceof ConnectionClosedError || error instanceof RequestCancelledError) {
            this.asked.delete(connection);
          } else {
            this.finish({ decision: "decline" });
          }
        },
      );
  }

  /** Decides without asking (fallback policy, shutdown). */
  decide(decision: ApprovalDecision): void {
    this.finish({ decision });
  }

  private finish(outcome: { decision: ApprovalDecision } | { timedOut: true }): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    for (const controller of this.asked.values()) controller.abort(new Error("answered elsewhere"));
    this.asked.clear();
    this.settle(outcome);
  }
}

/** Applies a decision to the engine's waiting call; returns whether the turn must be cancelled. */
export function applyDecision(
  session: AgentSession,
  pending: PendingApproval,
  decision: ApprovalDecision,
): boolean {
  switch (decision) {
    case "accept":
      session.approve(pending.callId, "once");
      return false;
    case "acceptForSession":
    case "acceptAlways":
      session.approve(pending.callId, "always");
      return false;
    case "decline":
      session.deny(pending.callId, "declined by the user");
      return false;
    case "cancel":
      session.deny(pending.callId, "the user cancelled the turn");
      return true;
  }
}
