/**
 * The daemon's services: the one facade the admin RPC and the AppServer's management methods call
 * to manage a running daemon. Plain TypeScript, no protocol: each door maps its own wire shapes
 * onto these calls and these errors (errors.ts) onto its own codes.
 *
 *   services.agents     agents.yaml: list, get, upsert, delete (each change hot-reloaded)
 *   services.providers  llm.yaml providers: list, get, upsert, delete (refused while in use)
 *   services.plugins    the running plugins: list, get, restart; plugins.yaml: configured, setEnabled
 *   services.mcp        mcp.yaml servers with live state: list, get, upsert, delete, status, watch, test
 *   services.channels   channel kinds served and bound
 *   services.skills     skills/<name>/SKILL.md: list, get, upsert, delete (refused while in use)
 *   services.tenants    tenants.yaml: list, get, upsert, delete (refused while agents belong, or purge)
 *   services.processing pause, intervene in and resume a conversation (operator takeover)
 *   services.escalations what agents escalated to a human: list, resolve
 *   services.config     the config writer: read and edit any config file, validated as a whole
 *   services.reload()   validate the config directory and swap it in
 */

import type { Takeover } from "../processing/compose.js";
import type { ProcessingControl } from "../processing/control.js";
import type { Escalations } from "../processing/escalations.js";
import type { ReloadOutcome } from "../reload.js";
import type { ReloadReport } from "../types.js";
import { AgentsService } from "./agents.js";
import { type ChannelsRuntime, ChannelsService } from "./channels.js";
import { ConfigFiles, type ConfigSource } from "./config-files.js";
import { type McpRuntime, McpService } from "./mcp.js";
import { type PluginsRuntime, PluginsService } from "./plugins.js";
import { ProvidersService } from "./providers.js";
import { SkillsService } from "./skills.js";
import { TenantsService } from "./tenants.js";

export type { AgentDeleteResult, AgentEntry, AgentFilter, AgentPatch, AgentUpsertResult } from "./agents.js";
export { type ChannelInfo, ChannelUnavailableError } from "./channels.js";
export type { ConfigEditResult, ConfigFileLocation, ConfigSource } from "./config-files.js";
export {
  ConflictError,
  InvalidConfigError,
  NotFoundError,
  ProviderInUseError,
  type ProviderUsers,
  ServiceError,
  type ServiceErrorKind,
  type ServiceSubject,
  SkillInUseError,
  UnavailableError,
} from "./errors.js";
export type {
  McpDeleteResult,
  McpProbeResult,
  McpRuntime,
  McpServerEntry,
  McpServerRecord,
  McpUpsertResult,
} from "./mcp.js";
export type { ConfiguredPlugin, PluginRestartResult, PluginSetEnabledResult } from "./plugins.js";
export {
  type ApiKeySource,
  envReference,
  type ProviderDeleteResult,
  type ProviderEntry,
  type ProviderRecord,
  type ProviderRef,
  type ProviderUpsert,
  type ProviderUpsertResult,
} from "./providers.js";
export type { SkillDeleteResult, SkillUpsert, SkillUpsertResult } from "./skills.js";
export type {
  TenantDeleteResult,
  TenantEntry,
  TenantFilter,
  TenantPatch,
  TenantRecord,
  TenantUpsertResult,
} from "./tenants.js";
export { type Patch, withoutRemovals } from "./yaml-patch.js";

/** What the services run on; the daemon provides it (daemon.ts). */
export interface ServicesDeps {
  /** The config directory; absent: every config operation throws UnavailableError. */
  config: ConfigSource | undefined;
  /** Reads the config directory again and applies it (the daemon's hot reload). */
  reload(): Promise<ReloadOutcome>;
  plugins: PluginsRuntime;
  mcp: McpRuntime;
  channels: ChannelsRuntime;
  /** Operator takeover: paused conversations and escalations; absent with no daemon running. */
  takeover?: Takeover;
}

export interface ReloadResult {
  report: ReloadReport;
  reloadedAt: Date;
}

export class DaemonServices {
  readonly config: ConfigFiles;
  readonly agents: AgentsService;
  readonly providers: ProvidersService;
  readonly plugins: PluginsService;
  readonly mcp: McpService;
  readonly channels: ChannelsService;
  readonly skills: SkillsService;
  readonly tenants: TenantsService;
  /** Pause, intervene, resume a conversation (operator takeover). */
  readonly processing: ProcessingControl | undefined;
  /** What agents escalated to a human. */
  readonly escalations: Escalations | undefined;

  constructor(deps: ServicesDeps) {
    this.config = new ConfigFiles(deps.config, () => deps.reload());
    this.agents = new AgentsService(this.config);
    this.providers = new ProvidersService(this.config);
    this.plugins = new PluginsService(deps.plugins, this.config);
    this.mcp = new McpService(this.config, deps.mcp);
    this.channels = new ChannelsService(deps.channels);
    this.skills = new SkillsService(this.config);
    this.tenants = new TenantsService(this.config);
    this.processing = deps.takeover?.control;
    this.escalations = deps.takeover?.escalations;
  }

  /**
   * Validates the whole config directory as it is on disk and swaps it in. An invalid directory
   * keeps the running config; InvalidConfigError lists every problem with file, line and key.
   */
  async reload(): Promise<ReloadResult> {
    const report = await this.config.reload();
    return { report, reloadedAt: new Date() };
  }
}
