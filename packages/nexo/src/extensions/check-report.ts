/**
 * What `nexo plugin check` and `nexo microapp check` report: steps that are ok, a warning or a
 * failure, each with a detail an author can act on, plus the child's last stderr lines.
 */
export type CheckStatus = "ok" | "warn" | "fail";

export interface CheckStep<Step extends string = string> {
  step: Step;
  status: CheckStatus;
  detail: string;
  /** The typed error's code, when a step failed on one. */
  code?: string;
}

export interface CheckReport<Step extends string = string> {
  ok: boolean;
  steps: CheckStep<Step>[];
  /** The child's last stderr lines, when something failed. */
  stderrTail: string[];
}
