/**
 * The config writer behind the services: reads a config file as the operator wrote it, and edits
 * it so that the daemon's rules hold.
 *
 * - Reads return the data as written, `${...}` placeholders not expanded, so a read → change →
 *   write round trip keeps references such as `api_key: ${ANTHROPIC_API_KEY}` (and never hands a
 *   secret's value to a caller). The file is validated (with substitution) before it is returned.
 * - An edit goes through the atomic, comment-preserving YAML writer. Before anything is written,
 *   the whole directory is validated as it would be with the edited text (every file, the
 *   cross-file checks, the plugins' manifests); an edit that would leave it invalid is refused with
 *   every problem located, and the file is left as it was. A written edit is then applied by a
 *   real reload, so the daemon runs what the file says when the call returns.
 * - Edits and reloads through the services run one at a time.
 */
import { readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { Document } from "yaml";
import type { z } from "zod";
import { ConfigError, type Env, editYamlFile } from "../../config/index.js";
import { withPathLock } from "../../config/path-lock.js";
import { readSecretFiles } from "../../config/secret-files.js";
import { parseTomlSource } from "../../config/toml-source.js";
import { parseYamlSource } from "../../config/yaml-source.js";
import { resolveDaemonSettings } from "../config/daemon.js";
import { DaemonFileSchema, inspectDaemonConfig, type KnownFile } from "../config/index.js";
import { readConfigFile, scanConfigDir } from "../config/sources.js";
import type { ReloadOutcome } from "../reload.js";
import type { ReloadReport } from "../types.js";
import { InvalidConfigError, UnavailableError } from "./errors.js";

/** Where the services' config directory is, and the environment its `${VAR}`s are read with. */
export interface ConfigSource {
  readonly dir: string;
  readonly env: Env;
}

export interface ConfigFileLocation {
  readonly path: string;
  readonly exists: boolean;
  readonly format: "yaml" | "toml";
}

export interface ConfigEditResult {
  /** False when the edit left the file as it was: nothing was written or reloaded. */
  readonly changed: boolean;
  /** What the reload after the write changed; undefined when nothing was written. */
  readonly reload: ReloadReport | undefined;
}

export class ConfigFiles {
  constructor(
    private readonly source: ConfigSource | undefined,
    private readonly reloadDaemon: () => Promise<ReloadOutcome>,
  ) {}

  /** The file nexo reads for `name` (`.yaml`, `.yml` or `.toml`), or `<name>.yaml` when there is none. */
  async locate(name: KnownFile): Promise<ConfigFileLocation> {
    const { dir } = this.requireSource();
    const path = (await scanConfigDir(dir)).files[name];
    if (path === undefined) return { path: join(dir, `${name}.yaml`), exists: false, format: "yaml" };
    return { path, exists: true, format: path.endsWith(".toml") ? "toml" : "yaml" };
  }

  /**
   * The file's data as written (placeholders not expanded), after checking that the file is valid
   * against `schema` (with substitution). undefined when the file does not exist. Throws
   * InvalidConfigError when it is not valid.
   */
  async read<S extends z.ZodType>(name: KnownFile, schema: S): Promise<z.input<S> | undefined> {
    const env = name === "daemon" ? this.requireSource().env : await this.substitutionEnv();
    const location = await this.locate(name);
    if (!location.exists) return undefined;
    const text = await readFile(location.path, "utf8").catch((error: Error) => {
      throw new InvalidConfigError([
        { code: "io", file: location.path, message: `cannot read: ${error.message}` },
      ]);
    });
    const checked = await readConfigFile(location.path, schema, env, text);
    if (!checked.ok) throw new InvalidConfigError(checked.issues);
    const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    const parsed =
      location.format === "yaml"
        ? parseYamlSource(body, location.path)
        : parseTomlSource(body, location.path);
    return parsed.data as z.input<S>;
  }

  /**
   * Edits the YAML file for `name` (created when missing), validating the whole directory with the
   * result before writing, then reloads the daemon. Throws InvalidConfigError (nothing written) or
   * UnavailableError (the file is TOML, or the daemon has no config directory).
   */
  edit(name: KnownFile, edit: (doc: Document.Parsed) => void): Promise<ConfigEditResult> {
    return this.serially(async () => {
      const location = await this.locate(name);
      if (location.format === "toml") {
        throw new UnavailableError(
          `${basename(location.path)} is TOML; nexo edits YAML config files only (write it as ${name}.yaml to let nexo edit it)`,
        );
      }
      let changed: boolean;
      try {
        ({ changed } = await editYamlFile(location.path, edit, {
          createIfMissing: true,
          check: (text) => this.checkDirectoryWith(name, location.path, text),
        }));
      } catch (error) {
        if (error instanceof ConfigError) throw new InvalidConfigError(error.issues);
        throw error;
      }
      return { changed, reload: changed ? await this.applyNow() : undefined };
    });
  }

  /** The config directory; UnavailableError when the daemon was not started from one. */
  get dir(): string {
    return this.requireSource().dir;
  }

  /**
   * Runs a change to something in the config directory that is not one of its YAML files (a
   * skill's SKILL.md, say) in the same one-at-a-time queue as the edits, then, when the change
   * reports that it changed something, applies the directory with a reload.
   */
  change<T>(
    task: () => Promise<{ changed: boolean; value: T }>,
  ): Promise<{ value: T; reload: ReloadReport | undefined }> {
    return this.serially(async () => {
      const { changed, value } = await task();
      return { value, reload: changed ? await this.applyNow() : undefined };
    });
  }

  /**
   * Validates the whole directory as it is on disk and swaps it in. An invalid directory keeps the
   * running config and throws InvalidConfigError with every problem.
   */
  reload(): Promise<ReloadReport> {
    return this.serially(() => this.applyNow());
  }

  private async applyNow(): Promise<ReloadReport> {
    this.requireSource();
    const outcome = await this.reloadDaemon();
    if (outcome.ok) return outcome.report;
    if (outcome.issues.length > 0) throw new InvalidConfigError(outcome.issues);
    throw outcome.cause;
  }

  private async checkDirectoryWith(name: KnownFile, path: string, text: string): Promise<void> {
    const { dir, env } = this.requireSource();
    const report = await inspectDaemonConfig(dir, { env, overrides: { [name]: { path, text } } });
    if (report.config === undefined) throw new InvalidConfigError(report.issues);
  }

  /**
   * What the files other than daemon.yaml are read with, as the loader does: the environment and
   * the secrets stored in the state dir daemon.yaml names (`secrets/write`, an LLM key written
   * through the admin RPC), so a file referencing a stored secret reads as valid here too.
   */
  async substitutionEnv(): Promise<Env> {
    const { env } = this.requireSource();
    const stateDir = await this.stateDir();
    // An invalid daemon.yaml is reported where it is read; here it only means no stored secrets.
    return stateDir === undefined ? env : { ...env, ...readSecretFiles(stateDir) };
  }

  /**
   * The state directory daemon.yaml names (its default when there is no daemon.yaml), where stored
   * secrets live; undefined when daemon.yaml is not valid.
   */
  async stateDir(): Promise<string | undefined> {
    const { dir, env } = this.requireSource();
    const location = await this.locate("daemon");
    const daemon = location.exists ? await readConfigFile(location.path, DaemonFileSchema, env) : undefined;
    if (daemon !== undefined && !daemon.ok) return undefined;
    const file = daemon?.value ?? DaemonFileSchema.parse({});
    return resolveDaemonSettings(file, dir, env).state_dir;
  }

  private requireSource(): ConfigSource {
    if (this.source === undefined)
      throw new UnavailableError(
        "this daemon was not started from a config directory; there is nothing to edit",
      );
    return this.source;
  }

  private async serially<T>(task: () => Promise<T>): Promise<T> {
    // A key no file has: the services' own queue, next to the per-file locks of the writer.
    return withPathLock(join(this.requireSource().dir, "\u0000services"), task);
  }
}
