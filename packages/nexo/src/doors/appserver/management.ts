/**
 * What the management families (models, MCP, sub-agents, plugins, skills, …) run on: the daemon's
 * services facade, and whether the parts it manages run in this process.
 *
 * - `nexo start` serving the AppServer: the daemon's own facade, `live: true` — plugins, MCP
 *   servers and channels run here, so their state and status methods mean something.
 * - `nexo app-server --config DIR`: a facade over that directory (standalone.ts), `live: false` —
 *   the files can be read and edited (validated as a whole, comments kept), but nothing they name
 *   runs in this process, so the families that report live state keep their flags off.
 * - `nexo app-server` without a config directory: no facade, no management flag at all.
 *
 * A family advertises its flag only when what it needs is here (families/managed.ts), and the
 * services' typed errors become the protocol's codes here, in one place.
 */
import { RpcError } from "@nexo/wire";
import { AppServerErrorCode as Code } from "@nexo/wire/schemas/appserver";
import { ServiceError } from "../../daemon/services/errors.js";
import type { DaemonServices } from "../../daemon/services/index.js";

export interface AppServerManagement {
  services: DaemonServices;
  /** Plugins, MCP servers and channels run in this process, so their live state is real. */
  live: boolean;
  /**
   * The agent of agents.yaml this server's threads belong to (appserver.yaml's `agent`): what the
   * workspace-wide settings (`workspace/config/*`, `skills/setEnabled`) edit. Absent: the only
   * agent of agents.yaml, when there is exactly one (families/workspace-agent.ts).
   */
  agent?: string | undefined;
}

/** Codes a family uses for the services' error kinds; `-32602` where it names none. */
export interface ErrorCodes {
  not_found?: number;
  invalid_config?: number;
  conflict?: number;
}

/**
 * Runs a service call, turning its typed errors into the protocol's: `not_found` → the family's
 * "not found" code, `invalid_config` → its validation code (every problem in `data.detail`),
 * `conflict` → its conflict code, `unavailable` → -32601's sibling -32062 ("service unavailable").
 */
export async function viaServices<T>(codes: ErrorCodes, run: () => Promise<T> | T): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    const code =
      error.kind === "unavailable"
        ? Code.commandServiceUnavailable
        : (codes[error.kind] ?? Code.invalidParams);
    throw new RpcError(code, summary(error.kind), { detail: error.message });
  }
}

function summary(kind: ServiceError["kind"]): string {
  switch (kind) {
    case "not_found":
      return "Not found";
    case "invalid_config":
      return "Validation failed";
    case "conflict":
      return "Conflict";
    case "unavailable":
      return "Service unavailable";
  }
}

/** A typed error of a family's own (validation of the wire shape before any service call). */
export function familyError(code: number, message: string, detail: string): RpcError {
  return new RpcError(code, message, { detail });
}
