/**
 * Who may run which tool without asking, and the approvals a turn is waiting for.
 *
 * Modes (json-stream spec §2.6): `default` asks for every tool that is not allow-listed;
 * `auto_edit` runs `info` and `edit` tools without asking; `yolo` asks for nothing. The allow-list
 * holds tool names or categories; an "always" approval adds the tool's category to the session's
 * grants (spec §2.3), which last as long as the session.
 */
import type { ApprovalDecision, ApprovalMode, ApprovalScope, ToolCategory } from "./types.js";

export const APPROVAL_MODES: readonly ApprovalMode[] = ["default", "auto_edit", "yolo"];
export const TOOL_CATEGORIES: readonly ToolCategory[] = ["info", "edit", "exec", "mcp"];

export class ApprovalPolicy {
  private currentMode: ApprovalMode;
  /** Operator-configured: tool names or categories that never need approval. */
  readonly allowList: ReadonlySet<string>;
  /** Categories granted with scope "always" during this session. */
  readonly sessionGrants = new Set<ToolCategory>();
  /** Called after the mode or the grants change, e.g. to persist them with the session. */
  onChange: (() => void) | undefined;

  constructor(
    options: { mode?: ApprovalMode; allowList?: Iterable<string>; grants?: Iterable<ToolCategory> } = {},
  ) {
    this.currentMode = options.mode ?? "default";
    this.allowList = new Set(options.allowList ?? []);
    for (const g of options.grants ?? []) this.sessionGrants.add(g);
  }

  get mode(): ApprovalMode {
    return this.currentMode;
  }

  set mode(mode: ApprovalMode) {
    if (mode === this.currentMode) return;
    this.currentMode = mode;
    this.onChange?.();
  }

  needsApproval(toolName: string, category: ToolCategory): boolean {
    if (this.mode === "yolo") return false;
    if (this.allowList.has(toolName) || this.allowList.has(category)) return false;
    if (this.sessionGrants.has(category)) return false;
    if (this.mode === "auto_edit" && (category === "info" || category === "edit")) return false;
    return true;
  }

  grantAlways(category: ToolCategory): void {
    if (this.sessionGrants.has(category)) return;
    this.sessionGrants.add(category);
    this.onChange?.();
  }
}

/** Thrown into a waiting approval when the turn is cancelled. */
export class ApprovalCancelledError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "ApprovalCancelledError";
  }
}

interface Waiter {
  category: ToolCategory;
  resolve: (d: ApprovalDecision) => void;
  reject: (e: Error) => void;
}

/** Approvals currently awaited, keyed by call id. Several may be pending at once. */
export class PendingApprovals {
  private readonly waiters = new Map<string, Waiter>();

  constructor(private readonly policy: ApprovalPolicy) {}

  /** Waits for the decision on `callId`; rejects with ApprovalCancelledError when `signal` aborts. */
  wait(callId: string, category: ToolCategory, signal: AbortSignal): Promise<ApprovalDecision> {
    if (signal.aborted) return Promise.reject(new ApprovalCancelledError("turn cancelled"));
    // The turn gives every call an id of its own; a second waiter would take the first's decision.
    if (this.waiters.has(callId)) return Promise.reject(new Error(`approval ${callId} is already pending`));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.waiters.delete(callId);
        reject(new ApprovalCancelledError("turn cancelled"));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.set(callId, {
        category,
        resolve: (d) => {
          signal.removeEventListener("abort", onAbort);
          resolve(d);
        },
        reject,
      });
    });
  }

  /** Returns false when no approval with that id is pending (the door reports a protocol error). */
  approve(callId: string, scope: ApprovalScope = "once"): boolean {
    const waiter = this.waiters.get(callId);
    if (!waiter) return false;
    this.waiters.delete(callId);
    if (scope === "always") this.policy.grantAlways(waiter.category);
    waiter.resolve({ approved: true, scope });
    return true;
  }

  deny(callId: string, reason: string): boolean {
    const waiter = this.waiters.get(callId);
    if (!waiter) return false;
    this.waiters.delete(callId);
    waiter.resolve({ approved: false, reason });
    return true;
  }

  /** Denies every pending approval with `reason` (nobody is left to answer them). */
  denyAll(reason: string): void {
    for (const callId of [...this.waiters.keys()]) this.deny(callId, reason);
  }

  has(callId: string): boolean {
    return this.waiters.has(callId);
  }

  get ids(): string[] {
    return [...this.waiters.keys()];
  }
}
