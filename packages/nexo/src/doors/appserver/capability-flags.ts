/**
 * The server capability flags of the core method families (families/core.ts), as plain data. The
 * families advertise these, and `nexo app-server`'s fast start (cli/app-server-fast.ts) answers the
 * first `initialize` with them before the families — and the zod schemas under them — are loaded.
 * So this file imports nothing: one copy of each flag set, read by both.
 */

export const THREAD_FLAGS = {
  threadManagement: true,
  threadSubscriptions: true,
  modeSwitch: true,
  configOverride: true,
} as const;

export const TURN_FLAGS = { approvalFlow: true } as const;

export const COMMAND_FLAGS = { commandManagement: true } as const;

export const SUBAGENT_SESSION_FLAGS = { subAgentSessions: true } as const;

/** A fresh object each call: a merged capability object must not share its nested parts. */
export function suggestionFlags(): { extensions: { welcomeSuggestions: true } } {
  return { extensions: { welcomeSuggestions: true } };
}

/**
 * What a server serving only the core families advertises: their flags merged in families/core.ts's
 * order (a test holds it equal to the families' own merge).
 */
export function coreCapabilities() {
  return {
    ...THREAD_FLAGS,
    ...TURN_FLAGS,
    ...COMMAND_FLAGS,
    ...suggestionFlags(),
    ...SUBAGENT_SESSION_FLAGS,
  };
}
