/**
 * Building tool outputs. A tool's failure that the model can act on (missing file, refused path,
 * bad pattern) is an output with `isError: true`; only programming errors are thrown.
 */
import type { ToolOutput } from "../types.js";
import { PathEscapeError, PathNotFoundError } from "./confine.js";

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
 * The error output for a failure of a file operation on `shownPath`, or `undefined` when the error
 * is not a file-system condition (the caller rethrows it).
 */
export function fileErrorOutput(error: unknown, shownPath: string): ToolOutput | undefined {
  if (error instanceof PathEscapeError || error instanceof PathNotFoundError)
    return errorOutput(error.message);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== "string") return undefined;
  const text = FS_ERROR_TEXT[code];
  return text === undefined ? undefined : errorOutput(`${text}: ${shownPath}`);
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
