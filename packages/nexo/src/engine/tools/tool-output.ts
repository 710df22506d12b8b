/**
 * Building tool outputs. A tool's failure that the model can act on (missing file, refused path,
 * bad pattern) is an output with `isError: true`; only programming errors are thrown.
 */
import type { ToolContext, ToolOutput } from "../types.js";
import {
  PathChangedError,
  PathEscapeError,
  PathNotFoundError,
  WorkspaceUnavailableError,
} from "./confine.js";

export function errorOutput(message: string, metadata?: Record<string, unknown>): ToolOutput {
  return metadata === undefined
    ? { output: message, isError: true }
    : { output: message, isError: true, metadata };
}

const FS_ERROR_TEXT: Record<string, string> = {
  ENOENT: "No such file or directory",
  EISDIR: "Is a directory",
  ENOTDIR: "Not a directory",
  EACCES: "Permission denied",
  EPERM: "Operation not permitted",
  ELOOP: "Too many levels of symbolic links",
  ENAMETOOLONG: "File name too long",
  EEXIST: "File exists",
  ENOSPC: "No space left on device",
  EROFS: "Read-only file system",
  EBUSY: "Resource busy",
  EMFILE: "Too many open files",
};

/**
 * The error output for a failure of a file operation on `shownPath` (the path as the model wrote
 * it), or `undefined` when the error is not a file-system condition (the caller rethrows it). The
 * output never names host paths the model did not write; a refused path's real location goes to
 * the session's log instead.
 */
export function fileErrorOutput(
  error: unknown,
  shownPath: string,
  ctx?: Pick<ToolContext, "logger" | "sessionId" | "callId">,
): ToolOutput | undefined {
  if (error instanceof PathEscapeError) {
    ctx?.logger?.warn(
      {
        session_id: ctx.sessionId,
        call_id: ctx.callId,
        path: error.userPath,
        reason: error.reason,
        resolved_path: error.resolvedPath,
        workspace: error.workspace,
      },
      "a file tool refused a path outside the workspace",
    );
    return errorOutput(error.message);
  }
  if (error instanceof WorkspaceUnavailableError) {
    ctx?.logger?.warn(
      { session_id: ctx.sessionId, workspace: error.workspace, reason: error.reason },
      "the agent's workspace is not usable",
    );
    return errorOutput(error.message);
  }
  if (error instanceof PathNotFoundError || error instanceof PathChangedError)
    return errorOutput(error.message);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== "string" || !/^E[A-Z0-9]+$/.test(code)) return undefined;
  // Node's own messages name the path it was given, which may be a /proc/self/fd/… path or a real
  // host path; the model gets the errno and its own spelling of the path.
  return errorOutput(`${FS_ERROR_TEXT[code] ?? code}: ${shownPath}`);
}

/** Reads an optional string argument for `describe`, which may see unvalidated arguments. */
export function stringArg(args: Record<string, unknown>, key: string): string | undefined {
  const value = args[key];
  return typeof value === "string" ? value : undefined;
}

/** First line of `text`, at most `max` characters, for one-line descriptions. */
export function oneLine(text: string, max: number): string {
  const first = text.split("\n", 1)[0] ?? "";
  if (first.length > max) return `${first.slice(0, max - 1)}…`;
  return first.length < text.length ? `${first} …` : first;
}
