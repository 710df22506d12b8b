/**
 * Whether a handler's outcome is a promise (anything with a `then` method) rather than a value.
 * A handler may answer either way; callers answer a value in the same tick and chain a promise.
 */
export function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return value !== null && typeof value === "object" && typeof (value as Promise<T>).then === "function";
}
