/**
 * Running extensions as child processes: the one supervisor plugins and microapps share, the
 * scrubbed environment, the bubblewrap sandbox, and the reaper that outlives them all.
 */
export * from "./command.js";
export * from "./env.js";
export * from "./launch.js";
export * from "./reaper.js";
export * from "./restart-policy.js";
export * from "./sandbox.js";
export * from "./sandbox-errors.js";
export * from "./stderr-capture.js";
export * from "./supervisor.js";
