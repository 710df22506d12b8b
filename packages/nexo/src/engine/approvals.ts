/**
 * Who may run which tool without asking, and the approvals a turn is waiting for.
 *
 * Modes: `default` asks for every tool that is not allow-listed or granted; `auto_edit` runs
 * `info` and `edit` tools without asking; `yolo` asks for nothing. The allow-list (the operator's)
 * holds tool names or categories. An approval with scope "always" grants, for the rest of the
 * session, no more than what the user saw (`grantFor`): the category for `info` and `edit` calls,
 * the program for a plain command line (`echo` for `echo hi`, never `touch`), the exact line for
 * any other command, the tool itself for MCP tools and other tools.
 */
import { type ApprovalGrant, type ApprovalMode, sameGrant, type ToolCategory } from "../permissions.js";
import { LAUNCHERS, plainProgram } from "./command-line.js";
import type { ApprovalDecision, ApprovalScope } from "./types.js";

/** What the policy looks at in a call. */
export interface ApprovalSubject {
  name: string;
  category: ToolCategory;
  /** The command line the call runs, for tools that run one (Bash). */
  command?: string | undefined;
}

/**
 * What "always" on this call grants. `info` and `edit` calls are confined to reading and changing
 * the workspace, so their category is granted (as the json-stream spec words it). A command line is
 * granted by its program when it is one plain invocation of a program that is not a launcher, and
 * otherwise only as that exact line. MCP tools and every other tool are granted one by one: the
 * user saw one tool of a server, not all of them.
 */
export function grantFor(call: ApprovalSubject): ApprovalGrant {
  if (call.category === "info" || call.category === "edit")
    return { kind: "category", category: call.category };
  if (call.command !== undefined) {
    const program = plainProgram(call.command);
    if (program !== undefined && !LAUNCHERS.has(program))
      return { kind: "program", tool: call.name, program };
    return { kind: "command", tool: call.name, command: call.command };
  }
  return { kind: "tool", tool: call.name };
}

/** Whether `grant` lets `call` run. */
export function grantCovers(grant: ApprovalGrant, call: ApprovalSubject): boolean {
  switch (grant.kind) {
    case "category":
      return grant.category === call.category;
    case "tool":
      return grant.tool === call.name;
    case "program":
      return (
        grant.tool === call.name && call.command !== undefined && plainProgram(call.command) === grant.program
      );
    case "command":
      return grant.tool === call.name && call.command === grant.command;
  }
}

export class ApprovalPolicy {
  private currentMode: ApprovalMode;
  /** Operator-configured: tool names or categories that never need approval. */
  readonly allowList: ReadonlySet<string>;
  private readonly granted: ApprovalGrant[] = [];
  /** Called after the mode or the grants change, e.g. to persist them with the session. */
  onChange: (() => void) | undefined;

  constructor(
    options: { mode?: ApprovalMode; allowList?: Iterable<string>; grants?: Iterable<ApprovalGrant> } = {},
  ) {
    this.currentMode = options.mode ?? "default";
    this.allowList = new Set(options.allowList ?? []);
    for (const grant of options.grants ?? []) this.add(grant);
  }

  get mode(): ApprovalMode {
    return this.currentMode;
  }

  set mode(mode: ApprovalMode) {
    if (mode === this.currentMode) return;
    this.currentMode = mode;
    this.onChange?.();
  }

  /** What "always" approvals granted in this session (and sessions resumed from it). */
  get grants(): readonly ApprovalGrant[] {
    return this.granted;
  }

  needsApproval(call: ApprovalSubject): boolean {
    if (this.mode === "yolo") return false;
    if (this.allowList.has(call.name) || this.allowList.has(call.category)) return false;
    if (this.mode === "auto_edit" && (call.category === "info" || call.category === "edit")) return false;
    return !this.granted.some((grant) => grantCovers(grant, call));
  }

  grantAlways(grant: ApprovalGrant): void {
    if (this.add(grant)) this.onChange?.();
  }

  private add(grant: ApprovalGrant): boolean {
    if (this.granted.some((g) => sameGrant(g, grant))) return false;
    this.granted.push(grant);
    return true;
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
  call: ApprovalSubject;
  resolve: (d: ApprovalDecision) => void;
  reject: (e: Error) => void;
}

/** Approvals currently awaited, keyed by call id. Several may be pending at once. */
export class PendingApprovals {
  private readonly waiters = new Map<string, Waiter>();

  constructor(private readonly policy: ApprovalPolicy) {}

  /** Waits for the decision on `callId`; rejects with ApprovalCancelledError when `signal` aborts. */
  wait(callId: string, call: ApprovalSubject, signal: AbortSignal): Promise<ApprovalDecision> {
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
        call,
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
    if (scope === "always") this.policy.grantAlways(grantFor(waiter.call));
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
