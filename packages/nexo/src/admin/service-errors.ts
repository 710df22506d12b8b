/**
 * The daemon services' typed errors as admin RPC errors, decided once for every domain:
 *
 * - `invalid_config` (the change would leave the directory invalid; nothing was written) and
 *   `conflict` (something still uses what the call would remove or change) are the caller's to fix:
 *   -32602, with `data.reason` and, for a config problem, every issue located (file, line, key);
 * - `not_found` is -32603 `not_found: …` with `data {reason, subject, id}` — the reference's code
 *   for a missing record (methods whose answer has a `null` for "absent" never throw it);
 * - `unavailable` (no config directory, a file nexo will not rewrite) is -32603 with
 *   `data.reason: "unavailable"`; a channel no plugin serves is -32603 `channel_unavailable: …`
 *   with `data {reason: "channel_unavailable", channel}`.
 *
 * Anything else is left to the frame, which answers -32603 with the error's message.
 */
import { InternalError, InvalidParamsError } from "@nexo/wire";
import { formatIssue } from "../config/index.js";
import { ChannelUnavailableError } from "../daemon/services/channels.js";
import {
  ConflictError,
  InvalidConfigError,
  NotFoundError,
  ProviderInUseError,
  ServiceError,
  SkillInUseError,
  UnavailableError,
} from "../daemon/services/errors.js";

/** Runs a service call, translating its typed errors (see above). */
export async function viaService<T>(run: () => Promise<T> | T): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw adminErrorOf(error);
  }
}

/** The admin error for a thrown value; values that are not service errors are returned as they are. */
export function adminErrorOf(error: unknown): unknown {
  if (!(error instanceof ServiceError)) return error;
  if (error instanceof InvalidConfigError)
    return new InvalidParamsError(
      `invalid params: the change would leave the config invalid: ${error.message}`,
      {
        reason: "invalid_config",
        issues: locatedIssues(error),
      },
    );
  if (error instanceof ProviderInUseError)
    return new InvalidParamsError(`invalid params: ${error.message}`, {
      reason: "in_use",
      provider: error.provider,
      users: error.users,
    });
  if (error instanceof SkillInUseError)
    return new InvalidParamsError(`invalid params: ${error.message}`, {
      reason: "in_use",
      skill: error.skill,
      agents: error.agents,
    });
  if (error instanceof ConflictError)
    return new InvalidParamsError(`invalid params: ${error.message}`, { reason: "conflict" });
  if (error instanceof NotFoundError)
    return new InternalError(`not_found: ${error.message}`, {
      reason: "not_found",
      subject: error.subject,
      id: error.id,
    });
  if (error instanceof ChannelUnavailableError)
    return new InternalError(`channel_unavailable: ${error.message}`, {
      reason: "channel_unavailable",
      channel: error.channel,
      ...(error.feature === undefined ? {} : { feature: error.feature }),
    });
  if (error instanceof UnavailableError)
    return new InternalError(`internal: ${error.message}`, { reason: "unavailable" });
  return new InternalError(`internal: ${error.message}`);
}

/** A config error's issues as the wire carries them: file, line, column, key path, message. */
export function locatedIssues(error: InvalidConfigError) {
  return error.issues.map((issue) => ({
    ...(issue.file === undefined ? {} : { file: issue.file }),
    ...(issue.line === undefined ? {} : { line: issue.line }),
    ...(issue.column === undefined ? {} : { column: issue.column }),
    ...(issue.keyPath === undefined ? {} : { key: issue.keyPath }),
    message: issue.message,
    text: formatIssue(issue),
  }));
}
