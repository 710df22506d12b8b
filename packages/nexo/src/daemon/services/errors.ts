/**
 * The services' typed errors. Four kinds, which the admin RPC and the AppServer map to their own
 * codes: what was named does not exist (`not_found`), the change would break something that uses
 * it (`conflict`), the config the change would produce is not valid (`invalid_config`, with every
 * problem located), or the part the operation needs is not there (`unavailable`). Anything else
 * thrown by a service is an internal failure.
 */
import { type ConfigIssue, formatIssue } from "../../config/errors.js";

export type ServiceErrorKind = "not_found" | "conflict" | "invalid_config" | "unavailable";

export abstract class ServiceError extends Error {
  abstract readonly kind: ServiceErrorKind;
}

/** What `NotFoundError` can be about. */
export type ServiceSubject =
  | "agent"
  | "llm_provider"
  | "plugin"
  | "mcp_server"
  | "skill"
  | "tenant"
  | "pairing_challenge";

export class NotFoundError extends ServiceError {
  override readonly name = "NotFoundError";
  readonly kind = "not_found" as const;

  constructor(
    readonly subject: ServiceSubject,
    /** The id or name that was asked for. */
    readonly id: string,
    detail?: string,
  ) {
    super(`no ${subject.replace("_", " ")} "${id}"${detail ? ` ${detail}` : ""}`);
  }
}

export class ConflictError extends ServiceError {
  override readonly name: string = "ConflictError";
  readonly kind = "conflict" as const;
}

/** Who uses an LLM provider entry, by kind. */
export interface ProviderUsers {
  /** Agents whose `model.provider` resolves to the entry. */
  agents: string[];
  /** Tenants whose `llm_provider_refs` name it. */
  tenants: string[];
  /** Plugins granted it by name in plugins.yaml (`grants.llm_providers`). */
  plugins: string[];
}

/** Deleting an LLM provider something still uses. */
export class ProviderInUseError extends ConflictError {
  override readonly name = "ProviderInUseError";

  constructor(
    readonly provider: string,
    /** The tenant whose entry it is; undefined for a global provider. */
    readonly tenantId: string | undefined,
    readonly users: ProviderUsers,
  ) {
    const who = [
      ...users.agents.map((id) => `agent "${id}"`),
      ...users.tenants.map((id) => `tenant "${id}"`),
      ...users.plugins.map((id) => `plugin "${id}"`),
    ];
    const owner = tenantId === undefined ? "" : ` of tenant "${tenantId}"`;
    super(`LLM provider "${provider}"${owner} is in use by ${who.join(", ")}; change those first`);
  }
}

/** Deleting a skill an agent still loads (no other copy of that name would take its place). */
export class SkillInUseError extends ConflictError {
  override readonly name = "SkillInUseError";

  constructor(
    readonly skill: string,
    /** The tenant whose own skill it is; undefined for a global skill. */
    readonly tenantId: string | undefined,
    /** Agents whose `skills` would no longer resolve. */
    readonly agents: string[],
  ) {
    const owner = tenantId === undefined ? "" : ` of tenant "${tenantId}"`;
    super(
      `skill "${skill}"${owner} is used by ${agents.map((id) => `agent "${id}"`).join(", ")}; take it out of their skills first`,
    );
  }
}

/** The config a change would produce (or the directory as it is) is not valid; nothing was written. */
export class InvalidConfigError extends ServiceError {
  override readonly name = "InvalidConfigError";
  readonly kind = "invalid_config" as const;

  constructor(readonly issues: readonly ConfigIssue[]) {
    super(issues.map(formatIssue).join("\n"));
  }
}

export class UnavailableError extends ServiceError {
  override readonly name: string = "UnavailableError";
  readonly kind = "unavailable" as const;
}
