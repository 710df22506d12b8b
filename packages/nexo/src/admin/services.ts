/**
 * What the admin domains may use: the daemon's real subsystems, handed in by the daemon (the
 * admin layer never imports daemon/, which sits above it). Each member is optional except the
 * audit log: a domain whose service is absent answers -32601 for its methods.
 *
 * A new domain that needs a daemon service adds a member here, typed by an interface the daemon's
 * services facade implements (declared in this folder, never imported from daemon/).
 */

import type { admin } from "@nexo/wire/schemas";
import type { LlmProvider } from "../engine/types.js";
import type { AuditRepository, MemoryRepository } from "../store/index.js";

/** How a provider is found by name (llm.yaml's global providers); the engine's registry fits. */
export interface AdminProviderLookup {
  get(id: string): LlmProvider | undefined;
}

/** The daemon's operator token (daemon.yaml `http.token`), which `auth/rotate_token` replaces. */
export interface OperatorToken {
  /** The token in force, or undefined when the daemon has none. */
  current(): string | undefined;
  /** Why `token` cannot be the operator token, or undefined when it can. */
  problem(token: string): string | undefined;
  /** Puts `token` in force at once (the listener checks it from the next request) and keeps it across restarts. */
  replace(token: string): Promise<void>;
}

/** Where `secrets/write` puts a secret. */
export interface SecretsTarget {
  /**
   * The daemon's state directory; secrets go to `<stateDir>/secrets/<NAME>.txt`, where the config
   * loader reads them for `${NAME}`.
   */
  readonly stateDir: string;
  /** The daemon's environment, read only: a name set there is reported as overwritten. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Called with each written value so the redactor scrubs it from logs and transcripts. */
  remember?(value: string): void;
}

export interface AdminServices {
  readonly audit: AuditRepository;
  readonly memory?: MemoryRepository;
  readonly providers?: AdminProviderLookup;
  readonly secrets?: SecretsTarget;
  readonly operatorToken?: OperatorToken;
  /** Pushes a notification to the microapps holding its capability; returns who got it. */
  readonly notify?: (method: admin.AdminNotificationName, params: unknown) => string[];
  /** Milliseconds since the epoch; tests pin it. Default Date.now. */
  readonly now?: () => number;
}
