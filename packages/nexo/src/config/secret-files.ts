/**
 * Secrets written through the admin RPC live as `<state dir>/secrets/<NAME>.txt`, one value per
 * file, readable by the daemon's user only (0600, in a 0700 directory). The daemon reads them back
 * at start-up so `${NAME}` in the config resolves across restarts; a file wins over a variable of
 * the same name in the daemon's environment, because writing it was the later, deliberate act.
 *
 * Names are the env-var alphabet (`^[A-Z][A-Z0-9_]{1,63}$`), which rules out path traversal, minus
 * the names that change how the daemon or its children run (PATH, LD_*, NODE_*, NEXO_*, …): a
 * secret must never be a way to redirect a command or switch a sandbox off.
 */

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import { join } from "node:path";
import * as admin from "@nexo/wire/schemas/admin";
import { writeFileAtomic } from "./write.js";

export const SECRETS_DIR_NAME = "secrets";

const RESERVED_NAMES = new Set([
  "PATH",
  "HOME",
  "TMPDIR",
  "SHELL",
  "USER",
  "LOGNAME",
  "PWD",
  "LANG",
  "LANGUAGE",
  "TZ",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "NO_PROXY",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
]);
const RESERVED_PREFIXES = ["NEXO_", "LD_", "DYLD_", "NODE_", "NPM_", "PYTHON", "LC_", "BWRAP"];

/** Why `name` cannot name a secret, or undefined when it can. */
export function secretNameProblem(name: string): string | undefined {
  if (!admin.SECRET_NAME_PATTERN.test(name))
    return "secret names are 2-64 chars of A-Z, 0-9 and '_', starting with a letter";
  if (RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix)))
    return `${name} is reserved: it changes how the daemon or its children run`;
  return undefined;
}

export function secretsDir(stateDir: string): string {
  return join(stateDir, SECRETS_DIR_NAME);
}

export interface WrittenSecret {
  path: string;
  /** A secret of that name was stored before and is now replaced. */
  replaced: boolean;
}

/** Writes the secret atomically, 0600 whatever was there before. */
export async function writeSecretFile(stateDir: string, name: string, value: string): Promise<WrittenSecret> {
  const problem = secretNameProblem(name);
  if (problem !== undefined) throw new RangeError(problem);
  return writePrivateFile(stateDir, `${name}.txt`, value);
}

/**
 * The daemon's operator token after a rotation through the admin RPC (auth/rotate_token): at
 * start-up it wins over daemon.yaml's `http.token`, which it replaced. Its lowercase name keeps it
 * apart from the `${NAME}` secrets.
 */
export const OPERATOR_TOKEN_FILE = "operator_token.txt";

export function writeOperatorTokenFile(stateDir: string, token: string): Promise<WrittenSecret> {
  return writePrivateFile(stateDir, OPERATOR_TOKEN_FILE, token);
}

/** The rotated operator token, or undefined when none was ever rotated. */
export function readOperatorTokenFile(stateDir: string): string | undefined {
  try {
    return readFileSync(join(secretsDir(stateDir), OPERATOR_TOKEN_FILE), "utf8").replace(/\r?\n$/, "");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

async function writePrivateFile(stateDir: string, file: string, value: string): Promise<WrittenSecret> {
  const dir = secretsDir(stateDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, file);
  const replaced = existsSync(path);
  await writeFileAtomic(path, value, { mode: 0o600 });
  // An existing file keeps its bits through writeFileAtomic; a secret never stays readable by others.
  await chmod(path, 0o600);
  return { path, replaced };
}

/**
 * The secrets stored under `stateDir`, by name. Files whose name is not a usable secret name are
 * skipped; one trailing newline (an editor's) is not part of the value.
 */
export function readSecretFiles(stateDir: string): Record<string, string> {
  let names: string[];
  try {
    names = readdirSync(secretsDir(stateDir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
  const secrets: Record<string, string> = {};
  for (const file of names) {
    if (!file.endsWith(".txt")) continue;
    const name = file.slice(0, -".txt".length);
    if (secretNameProblem(name) !== undefined) continue;
    secrets[name] = readFileSync(join(secretsDir(stateDir), file), "utf8").replace(/\r?\n$/, "");
  }
  return secrets;
}
