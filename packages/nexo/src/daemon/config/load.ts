/**
 * The daemon's whole configuration from one directory: every known file that exists is read,
 * substituted and validated, relative paths are resolved against the directory, and the names one
 * file uses from another are checked. Every problem of every file is collected, so an operator
 * fixes a directory in one pass, and a config is only ever handed out whole and valid (which is
 * what lets a reload swap it in atomically or keep the old one).
 */
import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { z } from "zod";
import type { BrokerConfig } from "../../broker/config.js";
import { sortIssues } from "../../config/errors.js";
import { ConfigError, type ConfigIssue, type Env } from "../../config/index.js";
import { readSecretFiles, secretsDir } from "../../config/secret-files.js";
import { type LlmConfig, LlmConfigSchema } from "../../engine/providers/llm-config.js";
import { type McpConfig, McpConfigSchema } from "../../extensions/mcp/config.js";
import type { MicroappDefinition } from "../../extensions/microapps/definition.js";
import { AgentsFileSchema, type ResolvedAgent, resolveAgentPaths } from "./agents.js";
import { AppServerFileSchema, type DaemonAppServer, daemonAppServer } from "./appserver.js";
import { BrokerFileSchema, DEFAULT_BROKER_CONFIG, resolveBrokerPaths } from "./broker.js";
import { crossCheck } from "./cross-checks.js";
import { DaemonFileSchema, type DaemonSettings, resolveDaemonSettings } from "./daemon.js";
import { ExtensionsFileSchema, inspectMicroapps } from "./extensions.js";
import { DEFAULT_MEMORY_CONFIG, type MemoryConfig, MemoryFileSchema } from "./memory.js";
import { inspectPluginManifests } from "./plugin-manifests.js";
import { EMPTY_PLUGINS_CONFIG, type PluginsConfig, PluginsFileSchema, resolvePluginDir } from "./plugins.js";
import { resolveAgentSkills } from "./skills.js";
import {
  type ConfigWarning,
  type FileResult,
  issueAt,
  KNOWN_FILES,
  type KnownFile,
  readConfigFile,
  scanConfigDir,
} from "./sources.js";
import { type TenantConfig, TenantsFileSchema } from "./tenants.js";

export interface LoadDaemonConfigOptions {
  /** Variables for `${VAR}` and the plugins' PATH; the daemon passes `process.env`. */
  readonly env: Env;
  /**
   * Known files read as if they held this text instead of what is on disk (or as if they existed):
   * how an edit is checked against the whole directory before it is written.
   */
  readonly overrides?: Readonly<Partial<Record<KnownFile, { readonly path: string; readonly text: string }>>>;
}

/** A valid config directory, every relative path made absolute. */
export interface DaemonConfig {
  /** The directory, absolute. */
  readonly dir: string;
  readonly agents: ResolvedAgent[];
  readonly llm: LlmConfig;
  readonly broker: BrokerConfig;
  readonly plugins: PluginsConfig;
  readonly mcp: McpConfig;
  readonly memory: MemoryConfig;
  readonly tenants: TenantConfig[];
  readonly daemon: DaemonSettings;
  /** The AppServer to serve over a WebSocket (appserver.yaml with `listen`); absent otherwise. */
  readonly appserver: DaemonAppServer | undefined;
  /** extensions.yaml's microapps, each with its executable and plugin.toml read. */
  readonly microapps: MicroappDefinition[];
  /** The config files that were read (absent optional files are not listed). */
  readonly files: string[];
  readonly warnings: ConfigWarning[];
}

/** Everything found in a directory: the config when it is valid, else every problem. */
export interface DaemonConfigReport {
  readonly dir: string;
  readonly files: string[];
  readonly issues: ConfigIssue[];
  readonly warnings: ConfigWarning[];
  readonly config: DaemonConfig | undefined;
}

/** A config directory that cannot be used; `issues` lists every problem, `warnings` the rest. */
export class DaemonConfigError extends ConfigError {
  readonly warnings: readonly ConfigWarning[];
  constructor(issues: readonly ConfigIssue[], warnings: readonly ConfigWarning[]) {
    super(issues);
    this.warnings = warnings;
  }
}

/** Reads and validates `dir`; throws DaemonConfigError (a ConfigError) listing every problem. */
export async function loadDaemonConfig(dir: string, options: LoadDaemonConfigOptions): Promise<DaemonConfig> {
  const report = await inspectDaemonConfig(dir, options);
  if (report.config === undefined) throw new DaemonConfigError(report.issues, report.warnings);
  return report.config;
}

/** Like loadDaemonConfig, but problems are returned instead of thrown (for `nexo config validate`). */
export async function inspectDaemonConfig(
  dir: string,
  options: LoadDaemonConfigOptions,
): Promise<DaemonConfigReport> {
  const { env } = options;
  const absoluteDir = resolve(dir);
  const info = await stat(absoluteDir).catch(() => undefined);
  if (!info?.isDirectory()) {
    const message = info === undefined ? "no such directory" : "not a directory";
    return {
      dir: absoluteDir,
      files: [],
      issues: [{ code: "io", file: dir, message }],
      warnings: [],
      config: undefined,
    };
  }

  const scan = await scanConfigDir(dir);
  const issues: ConfigIssue[] = [...scan.issues];
  const warnings: ConfigWarning[] = [...scan.warnings];
  const read = <T>(result: FileResult<T> | undefined): T | undefined => {
    if (result === undefined) return undefined;
    if (!result.ok) issues.push(...result.issues);
    return result.ok ? result.value : undefined;
  };
  const files = { ...scan.files };
  const texts = new Map<string, string>();
  for (const [name, override] of Object.entries(options.overrides ?? {}) as [
    KnownFile,
    { path: string; text: string },
  ][]) {
    files[name] = override.path;
    texts.set(override.path, override.text);
  }
  // daemon.yaml first: it says where the state dir is, and the secrets microapps stored there
  // (admin RPC secrets/write) are `${NAME}`s the other files may use.
  const daemon = await readKnownWith(files.daemon, DaemonFileSchema, env, texts);
  const daemonFile = read(daemon) ?? DaemonFileSchema.parse({});
  const daemonSettings = resolveDaemonSettings(daemonFile, absoluteDir, env);
  const withSecrets: Env = { ...env, ...storedSecrets(daemonSettings.state_dir, issues) };
  const readKnown = <S extends z.ZodType>(file: string | undefined, schema: S) =>
    readKnownWith(file, schema, withSecrets, texts);
  const [agents, llm, broker, plugins, mcp, memory, tenants, appserver, extensions] = await Promise.all([
    readKnown(files.agents, AgentsFileSchema),
    readKnown(files.llm, LlmConfigSchema),
    readKnown(files.broker, BrokerFileSchema),
    readKnown(files.plugins, PluginsFileSchema),
    readKnown(files.mcp, McpConfigSchema),
    readKnown(files.memory, MemoryFileSchema),
    readKnown(files.tenants, TenantsFileSchema),
    readKnown(files.appserver, AppServerFileSchema),
    readKnown(files.extensions, ExtensionsFileSchema),
  ]);
  if (files.agents === undefined) {
    issues.push({
      code: "io",
      file: join(dir, "agents.yaml"),
      message: "missing: every config directory needs an agents.yaml (agents: [...])",
    });
  }

  const agentsFile = read(agents);
  const llmConfig = files.llm === undefined ? LlmConfigSchema.parse({}) : read(llm);
  const brokerFile = read(broker);
  const pluginsFile = read(plugins);
  const mcpConfig = read(mcp);
  const memoryConfig = read(memory);
  const tenantsFile = read(tenants);
  const appServer =
    read(appserver) !== undefined && appserver?.ok
      ? checkAppServer(appserver, agentsFile, withSecrets)
      : undefined;
  if (appServer !== undefined && !appServer.ok) issues.push(appServer.issue);

  let pluginsConfig: PluginsConfig | undefined =
    files.plugins === undefined ? EMPTY_PLUGINS_CONFIG : undefined;
  let pluginsComplete = true;
  if (pluginsFile !== undefined && plugins?.ok) {
    const resolved = {
      ...pluginsFile,
      plugins: pluginsFile.plugins.map((entry) => resolvePluginDir(entry, absoluteDir)),
    };
    const inspected = await inspectPluginManifests(resolved, plugins.file, plugins.locate, env);
    issues.push(...inspected.issues);
    pluginsConfig = inspected.config;
    pluginsComplete = inspected.complete;
  }

  const extensionsFile = read(extensions);
  let microapps: MicroappDefinition[] | undefined = files.extensions === undefined ? [] : undefined;
  if (extensionsFile !== undefined && extensions?.ok) {
    const inspected = await inspectMicroapps(extensionsFile, extensions.file, extensions.locate, absoluteDir);
    issues.push(...inspected.issues);
    microapps = inspected.definitions;
  }

  const brokerConfig = brokerFile?.broker ?? DEFAULT_BROKER_CONFIG;
  const cross = crossCheck({
    agents,
    llm: llmConfig === undefined ? undefined : { config: llmConfig, source: llm },
    tenants,
    plugins:
      pluginsConfig === undefined
        ? undefined
        : { config: pluginsConfig, source: plugins, complete: pluginsComplete },
    brokerType: files.broker !== undefined && brokerFile === undefined ? undefined : brokerConfig.type,
  });
  issues.push(...cross.issues);
  warnings.push(...cross.warnings);
  const skills = await resolveAgentSkills(agents?.ok ? agents : undefined, absoluteDir);
  issues.push(...skills.issues);

  const filesRead = KNOWN_FILES.flatMap((name) => files[name] ?? []);
  const ordered = orderIssues(issues);
  if (
    ordered.length > 0 ||
    agentsFile === undefined ||
    llmConfig === undefined ||
    pluginsConfig === undefined ||
    microapps === undefined
  ) {
    return { dir: absoluteDir, files: filesRead, issues: ordered, warnings, config: undefined };
  }
  const config: DaemonConfig = {
    dir: absoluteDir,
    agents: agentsFile.agents.map((agent) =>
      resolveAgentPaths(agent, absoluteDir, daemonSettings.state_dir, skills.byAgent.get(agent.id)),
    ),
    llm: llmConfig,
    broker: resolveBrokerPaths(brokerConfig, absoluteDir),
    plugins: pluginsConfig,
    mcp: resolveMcpPaths(mcpConfig ?? McpConfigSchema.parse({}), absoluteDir),
    memory: memoryConfig ?? DEFAULT_MEMORY_CONFIG,
    tenants: tenantsFile?.tenants ?? [],
    daemon: daemonSettings,
    appserver: appServer?.ok ? appServer.value : undefined,
    microapps,
    files: filesRead,
    warnings,
  };
  return { dir: absoluteDir, files: filesRead, issues: [], warnings, config };
}

/** appserver.yaml as the daemon serves it: a WebSocket it may open, answered by an agent that exists. */
function checkAppServer(
  source: Extract<FileResult<z.output<typeof AppServerFileSchema>>, { ok: true }>,
  agentsFile: { agents: Array<{ id: string }> } | undefined,
  env: Env,
): { ok: true; value: DaemonAppServer | undefined } | { ok: false; issue: ConfigIssue } {
  const served = daemonAppServer(source.value, env);
  if (!served.ok) {
    const key = served.key === "token" && source.value.token === undefined ? "listen" : served.key;
    return { ok: false, issue: issueAt(source.file, source.locate, [key], served.problem) };
  }
  if (served.value === undefined || agentsFile === undefined) return served;
  const ids = agentsFile.agents.map((a) => a.id);
  const agent = source.value.agent ?? (ids.length === 1 ? ids[0] : undefined);
  if (agent === undefined) {
    const problem = `agents.yaml has ${ids.length} agents: name the one that answers threads (agent: ${ids[0] ?? "ID"})`;
    return { ok: false, issue: issueAt(source.file, source.locate, ["listen"], problem) };
  }
  if (!ids.includes(agent)) {
    const problem = `unknown agent "${agent}" (agents.yaml has: ${ids.join(", ") || "none"})`;
    return { ok: false, issue: issueAt(source.file, source.locate, ["agent"], problem) };
  }
  return { ok: true, value: { ...served.value, agent } };
}

/** The secrets stored in the state dir; an unreadable directory is a problem, not a crash. */
function storedSecrets(stateDir: string, issues: ConfigIssue[]): Record<string, string> {
  try {
    return readSecretFiles(stateDir);
  } catch (error) {
    issues.push({
      code: "io",
      file: secretsDir(stateDir),
      message: `cannot read the stored secrets: ${(error as Error).message}`,
    });
    return {};
  }
}

function readKnownWith<S extends z.ZodType>(
  file: string | undefined,
  schema: S,
  env: Env,
  texts: ReadonlyMap<string, string>,
) {
  return file === undefined ? undefined : readConfigFile(file, schema, env, texts.get(file));
}

/** A stdio server's relative `cwd` starts at the config dir, whoever starts the server later. */
function resolveMcpPaths(config: McpConfig, configDir: string): McpConfig {
  const servers = Object.fromEntries(
    Object.entries(config.servers).map(([name, server]) => [
      name,
      server.transport === "stdio" && server.cwd !== undefined
        ? { ...server, cwd: resolve(configDir, server.cwd) }
        : server,
    ]),
  );
  return { ...config, servers };
}

/** File by file (alphabetically, problems not tied to a file first), then top to bottom. */
function orderIssues(issues: readonly ConfigIssue[]): ConfigIssue[] {
  const byFile = new Map<string, ConfigIssue[]>();
  for (const issue of issues) {
    const key = issue.file ?? "";
    byFile.set(key, [...(byFile.get(key) ?? []), issue]);
  }
  return [...byFile.keys()].sort().flatMap((file) => sortIssues(byFile.get(file) ?? []));
}
