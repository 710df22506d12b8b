/**
 * Loading `nexo-plugin.toml` (plugin contract §2): parse, validate with the wire schema, then the
 * checks only the host can make because they need the outside world — the entrypoint exists and
 * its command resolves (relative commands against the plugin directory), the running nexo
 * satisfies `min_nexo_version`, and the operator allows `network = "host"`.
 *
 * Every problem is reported at once, each naming the file, the line and the key:
 * `/plugins/slack/nexo-plugin.toml:14:1: plugin.extends.tools[1]: …`.
 *
 * The manifest is NOT passed through the operator config's `${VAR}` substitution: `${state_dir}`
 * is a literal token of the contract (expanded at spawn time), and a plugin's manifest must not
 * be able to read the daemon's environment.
 */
import { readFile, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import * as plugin from "@nexo/wire/schemas/plugin";
import { ConfigError, type ConfigIssue } from "../../config/errors.js";
import { locatedError as located, schemaIssue } from "../../config/locate.js";
import { validateWithSchema } from "../../config/schema-issues.js";
import { parseTomlSource } from "../../config/toml-source.js";
import { NEXO_VERSION } from "../../version.js";
import { CommandNotFoundError, type ResolvedCommand, resolveCommand } from "../command.js";
import { readSandboxKnobs, SANDBOX_HOST_NET_ALLOW_VAR } from "../sandbox.js";
import { SandboxConfigError } from "../sandbox-errors.js";
import { toolListIssues, withoutToolList } from "./manifest-tools.js";
import {
  parseSemVer,
  parseVersionRequirement,
  satisfiesRequirement,
  VersionSyntaxError,
} from "./version-requirement.js";

export const MANIFEST_FILE_NAME = "nexo-plugin.toml";

type Env = Readonly<Record<string, string | undefined>>;

export interface LoadManifestOptions {
  /** The daemon's environment: PATH for the command, the sandbox knobs. Default `process.env`. */
  env?: Env;
  /** The version checked against `min_nexo_version`. Default: this nexo's version. */
  nexoVersion?: string;
}

/** A validated manifest plus what the host resolved from it. */
export interface LoadedPluginManifest {
  /** The document as written (no defaults filled in), validated. */
  readonly manifest: plugin.PluginManifest;
  readonly id: string;
  /** Absolute path of the manifest file. */
  readonly file: string;
  /** The plugin directory (the manifest's directory): the child's cwd and base of relative commands. */
  readonly dir: string;
  readonly entrypoint: plugin.ManifestEntrypoint;
  /** The entrypoint command as found on this host when the manifest was loaded. */
  readonly command: ResolvedCommand;
  /**
   * Channel kinds the broker bridge serves: `[[plugin.channels.register]]` kinds and
   * `[plugin.extends].channels`, without duplicates, in declaration order.
   */
  readonly channelKinds: readonly string[];
}

/**
 * Reads and validates a plugin manifest. `dirOrFile` is the plugin directory (holding
 * nexo-plugin.toml) or the manifest file itself. Throws ConfigError listing every problem.
 */
export async function loadPluginManifest(
  dirOrFile: string,
  options: LoadManifestOptions = {},
): Promise<LoadedPluginManifest> {
  const file = await manifestPath(dirOrFile);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw ConfigError.of({ code: "io", file, message: `cannot read: ${reason}` }, { cause: error });
  }
  return parsePluginManifest(text, { ...options, file });
}

/** Where the manifest is: the path itself if it is a file, else `<dir>/nexo-plugin.toml`. */
async function manifestPath(dirOrFile: string): Promise<string> {
  const absolute = resolve(dirOrFile);
  try {
    return (await stat(absolute)).isDirectory() ? join(absolute, MANIFEST_FILE_NAME) : absolute;
  } catch (error) {
    throw ConfigError.of(
      { code: "io", file: absolute, message: "no such plugin directory or manifest file" },
      { cause: error },
    );
  }
}

export interface ParseManifestOptions extends LoadManifestOptions {
  /** Absolute path of the manifest; its directory is the plugin directory. */
  file: string;
}

/** The in-memory half of `loadPluginManifest`: same checks, same errors, no disk read. */
export function parsePluginManifest(text: string, options: ParseManifestOptions): LoadedPluginManifest {
  const file = resolve(options.file);
  const dir = dirname(file);
  const env = options.env ?? process.env;
  const source = parseTomlSource(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, file);

  const { rest, tools } = withoutToolList(source.data);
  const validated = validateWithSchema(plugin.PluginManifestSchema, rest);
  const rawPlugin = (source.data as { plugin?: { id?: unknown; extends?: unknown } } | undefined)?.plugin;
  const issues: ConfigIssue[] = [
    ...(validated.ok ? [] : validated.issues),
    ...toolListIssues(tools, rawPlugin?.id, rawPlugin?.extends).map(({ path, message }) =>
      schemaIssue(path, message),
    ),
  ];
  if (!validated.ok || issues.length > 0) throw located(issues, source.locate, file);

  const manifest = validated.value;
  if (tools !== undefined) manifest.plugin.extends = { ...manifest.plugin.extends, tools: tools as string[] };
  const hostIssues: ConfigIssue[] = [];
  const command = checkEntrypoint(manifest.plugin, dir, env, hostIssues);
  checkMinVersion(manifest.plugin, options.nexoVersion ?? NEXO_VERSION, hostIssues);
  checkHostNetwork(manifest.plugin, env, hostIssues);
  if (hostIssues.length > 0 || command === undefined || manifest.plugin.entrypoint === undefined) {
    throw located(hostIssues, source.locate, file);
  }
  return {
    manifest,
    id: manifest.plugin.id,
    file,
    dir,
    entrypoint: manifest.plugin.entrypoint,
    command,
    channelKinds: channelKindsOf(manifest.plugin),
  };
}

function checkEntrypoint(
  manifest: plugin.ManifestPlugin,
  dir: string,
  env: Env,
  issues: ConfigIssue[],
): ResolvedCommand | undefined {
  const entrypoint = manifest.entrypoint;
  if (entrypoint === undefined) {
    issues.push(
      schemaIssue(
        ["plugin", "entrypoint"],
        "missing: a [plugin.entrypoint] table with a command is needed to run the plugin",
      ),
    );
    return undefined;
  }
  try {
    return resolveCommand(entrypoint.command, { pathEnv: env.PATH, cwd: dir });
  } catch (error) {
    if (!(error instanceof CommandNotFoundError)) throw error;
    issues.push(schemaIssue(["plugin", "entrypoint", "command"], error.message));
    return undefined;
  }
}

function checkMinVersion(manifest: plugin.ManifestPlugin, nexoVersion: string, issues: ConfigIssue[]): void {
  const path = ["plugin", "min_nexo_version"];
  try {
    const requirement = parseVersionRequirement(manifest.min_nexo_version);
    if (!satisfiesRequirement(parseSemVer(nexoVersion), requirement)) {
      issues.push(
        schemaIssue(
          path,
          `this plugin needs nexo ${manifest.min_nexo_version}, but this is nexo ${nexoVersion}`,
        ),
      );
    }
  } catch (error) {
    if (!(error instanceof VersionSyntaxError)) throw error;
    issues.push(schemaIssue(path, error.message));
  }
}

function checkHostNetwork(manifest: plugin.ManifestPlugin, env: Env, issues: ConfigIssue[]): void {
  const sandbox = manifest.sandbox;
  if (sandbox?.enabled !== true || sandbox.network !== "host") return;
  const path = ["plugin", "sandbox", "network"];
  try {
    if (!readSandboxKnobs(env).hostNetworkAllowed) {
      issues.push(
        schemaIssue(
          path,
          `network = "host" is only allowed when the operator sets ${SANDBOX_HOST_NET_ALLOW_VAR}=1`,
        ),
      );
    }
  } catch (error) {
    if (!(error instanceof SandboxConfigError)) throw error;
    issues.push(schemaIssue(path, error.message));
  }
}

function channelKindsOf(manifest: plugin.ManifestPlugin): string[] {
  const kinds = [
    ...(manifest.channels?.register ?? []).map((registration) => registration.kind),
    ...(manifest.extends?.channels ?? []),
  ];
  return [...new Set(kinds)];
}
