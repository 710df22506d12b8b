/**
 * The skills store: markdown skills kept as files in the config directory, one directory per skill.
 *
 *   skills/<name>/SKILL.md                      a global skill (every agent may use it)
 *   skills/_tenants/<tenant>/<name>/SKILL.md    a tenant's own skill
 *
 * Names and tenant ids are checked against the admin RPC's rules (lowercase letters, digits and
 * `-`), so no path built here can climb out of the root, and `_tenants` can never be a skill's
 * name. At run time (`resolve`) a tenant's skill shadows the global skill of the same name, and the
 * global one serves the tenants without their own copy.
 *
 * Writes never follow a symlink below the root: a component that is a symlink (or not a directory)
 * refuses the write (SkillPathError) instead of putting a file wherever it points. Reads follow
 * what the operator linked there. Each write is atomic (temp file + rename); writes through one
 * store run one at a time. The store knows nothing of agents or the daemon: the daemon's services,
 * the AppServer's skills methods and the prompt builder all use it as it is.
 */
import { lstat, mkdir, readdir, readFile, rm, rmdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import * as admin from "@nexo/wire/schemas/admin";
import { writeFileAtomicIn } from "../config/index.js";
import { withPathLock } from "../config/path-lock.js";
import { parseSkillFile, renderSkillFile, type SkillContent, SkillFileError } from "./skill-file.js";

export const SKILL_FILE = "SKILL.md";
/** The directory under the root that holds the tenants' namespaces; never a valid skill name. */
export const TENANTS_DIR = "_tenants";

/** A skill as stored. `tenantId` undefined: the global namespace. */
export interface Skill extends SkillContent {
  name: string;
  tenantId: string | undefined;
  /** When SKILL.md last changed. */
  updatedAt: Date;
  /** The SKILL.md file. */
  path: string;
}

/** One entry of a listing. A SKILL.md that cannot be read is listed with its problem. */
export interface SkillListing {
  name: string;
  tenantId: string | undefined;
  displayName?: string | undefined;
  description?: string | undefined;
  updatedAt: Date;
  problem?: string | undefined;
}

export interface SkillListOptions {
  /** The tenant's namespace; undefined: the global one. */
  tenantId?: string | undefined;
  /** Only names starting with this. */
  prefix?: string | undefined;
}

/** A skill name or tenant id that breaks the rules; nothing was read or written. */
export class SkillNameError extends Error {
  override readonly name = "SkillNameError";
  readonly code = "skill_name_invalid" as const;
  constructor(
    readonly field: "name" | "tenant_id",
    readonly value: string,
    rule: string,
  ) {
    super(`${field} ${JSON.stringify(value.slice(0, 80))}: ${rule}`);
  }
}

/** A path below the root that a write would have to go through is a symlink or not a directory. */
export class SkillPathError extends Error {
  override readonly name = "SkillPathError";
  readonly code = "skill_path_refused" as const;
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path}: ${reason}; nexo does not write skills through it`);
  }
}

const NAME_RULE = "1-64 characters of a-z, 0-9 and '-', not starting with '-'";

export function checkSkillName(name: string): void {
  if (!admin.SKILL_NAME_PATTERN.test(name)) throw new SkillNameError("name", name, NAME_RULE);
}

function checkTenant(tenantId: string | undefined): void {
  if (tenantId !== undefined && !admin.TENANT_ID_PATTERN.test(tenantId))
    throw new SkillNameError("tenant_id", tenantId, NAME_RULE);
}

export class SkillStore {
  constructor(
    /** The skills directory (`<config dir>/skills`). It may not exist yet. */
    readonly root: string,
  ) {}

  /** The namespace's own skills, sorted by name (a tenant's listing does not include global ones). */
  async list(options: SkillListOptions = {}): Promise<SkillListing[]> {
    checkTenant(options.tenantId);
    const dir = this.namespaceDir(options.tenantId);
    const names = (await readdirOrEmpty(dir))
      .filter((name) => admin.SKILL_NAME_PATTERN.test(name))
      .filter((name) => options.prefix === undefined || name.startsWith(options.prefix))
      .sort();
    const listings: SkillListing[] = [];
    for (const name of names) {
      const path = join(dir, name, SKILL_FILE);
      const info = await stat(path).catch(() => undefined);
      if (!info?.isFile()) continue; // a directory without SKILL.md is not a skill
      try {
        const skill = await this.readAt(path, name, options.tenantId);
        listings.push({
          name,
          tenantId: options.tenantId,
          displayName: skill.displayName,
          description: skill.description,
          updatedAt: skill.updatedAt,
        });
      } catch (error) {
        if (!(error instanceof SkillFileError)) throw error;
        listings.push({ name, tenantId: options.tenantId, updatedAt: info.mtime, problem: error.message });
      }
    }
    return listings;
  }

  /** The namespace's own skill; undefined when there is none. Throws SkillFileError for a broken file. */
  async get(name: string, tenantId?: string): Promise<Skill | undefined> {
    checkSkillName(name);
    checkTenant(tenantId);
    const path = this.skillFile(name, tenantId);
    try {
      return await this.readAt(path, name, tenantId);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  /** The skill an agent of `tenantId` gets for `name`: the tenant's own, else the global one. */
  async resolve(name: string, tenantId?: string): Promise<Skill | undefined> {
    if (tenantId !== undefined) {
      const own = await this.get(name, tenantId);
      if (own !== undefined) return own;
    }
    return this.get(name);
  }

  /** Writes the skill (replacing the whole file). `created` is false when it existed before. */
  async upsert(
    name: string,
    content: SkillContent,
    tenantId?: string,
  ): Promise<{ skill: Skill; created: boolean }> {
    checkSkillName(name);
    checkTenant(tenantId);
    const text = renderSkillFile(content);
    parseSkillFile(text, this.skillFile(name, tenantId)); // never write what cannot be read back
    return withPathLock(this.lockKey(), async () => {
      const dir = await this.ensureDirs([...this.namespaceParts(tenantId), name]);
      const created = (await lstat(join(dir, SKILL_FILE)).catch(() => undefined)) === undefined;
      await writeFileAtomicIn(dir, SKILL_FILE, text, { mode: 0o644 });
      const skill = await this.get(name, tenantId);
      if (skill === undefined)
        throw new Error(`${join(dir, SKILL_FILE)} vanished right after it was written`);
      return { skill, created };
    });
  }

  /**
   * Removes the skill's SKILL.md, then its directory if nothing else is in it (files an operator
   * put beside the skill are left alone). False when there was no such skill.
   */
  async delete(name: string, tenantId?: string): Promise<boolean> {
    checkSkillName(name);
    checkTenant(tenantId);
    return withPathLock(this.lockKey(), async () => {
      const dir = await this.existingDirs([...this.namespaceParts(tenantId), name]);
      if (dir === undefined) return false;
      const file = join(dir, SKILL_FILE);
      const info = await lstat(file).catch(() => undefined);
      if (info === undefined) return false;
      if (!info.isFile() && !info.isSymbolicLink()) throw new SkillPathError(file, "not a file");
      await unlink(file);
      await rmdir(dir).catch(() => undefined); // not empty: the operator's other files stay
      return true;
    });
  }

  /** Removes a tenant's whole namespace (every skill in it). False when it had none. */
  async deleteTenant(tenantId: string): Promise<boolean> {
    checkTenant(tenantId);
    return withPathLock(this.lockKey(), async () => {
      const dir = await this.existingDirs(this.namespaceParts(tenantId));
      if (dir === undefined) return false;
      await rm(dir, { recursive: true });
      return true;
    });
  }

  private async readAt(path: string, name: string, tenantId: string | undefined): Promise<Skill> {
    const [text, info] = await Promise.all([readFile(path, "utf8"), stat(path)]);
    return { ...parseSkillFile(text, path), name, tenantId, updatedAt: info.mtime, path };
  }

  private namespaceParts(tenantId: string | undefined): string[] {
    return tenantId === undefined ? [] : [TENANTS_DIR, tenantId];
  }

  private namespaceDir(tenantId: string | undefined): string {
    return join(this.root, ...this.namespaceParts(tenantId));
  }

  private skillFile(name: string, tenantId: string | undefined): string {
    return join(this.namespaceDir(tenantId), name, SKILL_FILE);
  }

  private lockKey(): string {
    return join(this.root, "\u0000skills");
  }

  /** Creates each directory below the root as needed, refusing symlinks and non-directories. */
  private async ensureDirs(parts: readonly string[]): Promise<string> {
    await mkdir(this.root, { recursive: true });
    let dir = this.root;
    for (const part of parts) {
      dir = join(dir, part);
      let info = await lstat(dir).catch(() => undefined);
      if (info === undefined) {
        await mkdir(dir).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== "EEXIST") throw error;
        });
        info = await lstat(dir);
      }
      if (info.isSymbolicLink()) throw new SkillPathError(dir, "is a symlink");
      if (!info.isDirectory()) throw new SkillPathError(dir, "is not a directory");
    }
    return dir;
  }

  /** The directory of `parts` below the root if it exists; refuses symlinks on the way. */
  private async existingDirs(parts: readonly string[]): Promise<string | undefined> {
    let dir = this.root;
    for (const part of parts) {
      dir = join(dir, part);
      const info = await lstat(dir).catch(() => undefined);
      if (info === undefined) return undefined;
      if (info.isSymbolicLink()) throw new SkillPathError(dir, "is a symlink");
      if (!info.isDirectory()) return undefined;
    }
    return dir;
  }
}

async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw error;
  }
}
