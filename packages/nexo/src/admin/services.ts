/**
 * What the admin domains may use: the daemon's real subsystems, filled in by ./serve.ts from the
 * daemon's MicroappRuntime (admin/ sits above daemon/ and may use its types and its services
 * facade; the daemon never imports admin/). Each member is optional except the audit log: a domain
 * whose service is absent answers -32601 for its methods.
 *
 * A domain that needs more of the daemon than this adds a member here, and ./serve.ts fills it from
 * the runtime.
 */

import type { admin } from "@nexo/wire/schemas";
import type { OperatorTokenControl } from "../daemon/components/microapps.js";
import type { DaemonServices } from "../daemon/services/index.js";
import type { LlmProvider } from "../engine/types.js";
import type { MicroappStatus } from "../extensions/microapps/manager.js";
import type { MemorySnapshots } from "../memory/snapshots.js";
import type {
  AgentEventRepository,
  AuditRepository,
  MemoryRepository,
  TranscriptRepository,
} from "../store/index.js";

/** How a provider is found by name (llm.yaml's global providers); the engine's registry fits. */
export interface AdminProviderLookup {
  get(id: string): LlmProvider | undefined;
}

/** The daemon's operator token, which `auth/rotate_token` replaces. */
export type OperatorToken = OperatorTokenControl;

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

/** The daemon's microapp host: what it runs (microapps/list) and a restart of one (microapps/restart). */
export interface MicroappsView {
  status(): MicroappStatus[];
  /**
   * Stops the microapp's process and starts a new one; resolves with its status after the new
   * one's first attempt, undefined for an id extensions.yaml does not have. Absent: microapps/restart
   * answers -32601.
   */
  restart?(id: string): Promise<MicroappStatus | undefined>;
}

export interface AdminServices {
  readonly audit: AuditRepository;
  /**
   * The daemon's services facade: agents (agents.yaml), providers (llm.yaml), MCP servers, plugins,
   * channels, the config writer and reload — what the agents, llm_providers, mcp, plugins, channels
   * and meta domains translate onto. Its typed errors (NotFoundError, InvalidConfigError,
   * ProviderInUseError, …) are mapped to the admin codes by each domain.
   */
  readonly daemon?: DaemonServices;
  readonly memory?: MemoryRepository;
  /** The agent event log (agent_events/list, read). */
  readonly agentEvents?: AgentEventRepository;
  /** The transcripts, whose index agent_events/search queries. */
  readonly transcripts?: Pick<TranscriptRepository, "search">;
  /** Bundles of agents' memories (memory/*_snapshot). */
  readonly memorySnapshots?: MemorySnapshots;
  readonly providers?: AdminProviderLookup;
  readonly secrets?: SecretsTarget;
  readonly operatorToken?: OperatorToken;
  /** The microapps extensions.yaml configures, as the host reports them. */
  readonly microapps?: MicroappsView;
  /** Pushes a notification to the microapps holding its capability; returns who got it. */
  readonly notify?: (method: admin.AdminNotificationName, params: unknown) => string[];
  /** Milliseconds since the epoch; tests pin it. Default Date.now. */
  readonly now?: () => number;
}
