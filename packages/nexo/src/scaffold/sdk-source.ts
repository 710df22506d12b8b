/**
 * Where a new TypeScript extension (`nexo plugin new --lang ts`, `nexo microapp new --lang ts`)
 * gets nexo-plugin-sdk, which is not on the npm registry:
 *
 * 1. `--sdk PATH`: a packed SDK tarball (`npm run package` in a clone) or an SDK directory.
 * 2. The tarball shipped inside this nexo: a nexo installed from its packed tarball carries the
 *    SDK's in `sdk/` (scripts/pack-packages.mjs).
 * 3. The SDK package beside this nexo: in a clone, packages/sdk (linked by the workspace).
 *
 * A tarball is copied into the new extension's directory and depended on by a relative
 * `file:` path, so the extension installs and builds wherever it is moved; a directory is depended
 * on by its absolute path (npm links it).
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const SDK_PACKAGE = "nexo-plugin-sdk";

export type SdkSource = { kind: "tarball" | "directory"; path: string };

/** A packed SDK's file name: `nexo-plugin-sdk-0.1.0.tgz`. */
const SDK_TARBALL = /^nexo-plugin-sdk-[\w.+-]+\.tgz$/;

/** The directory of the package named `name` that holds this module (dist/ or bundle/ inside it). */
function ownPackageRoot(name: string): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (; dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (!existsSync(manifest)) continue;
    try {
      if ((JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === name) return dir;
    } catch {
      // not a package manifest we can read: keep walking up
    }
  }
  return undefined;
}

function isSdkDirectory(dir: string): boolean {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown };
    return manifest.name === SDK_PACKAGE && existsSync(join(dir, "dist"));
  } catch {
    return false;
  }
}

/** The SDK tarball in this nexo's sdk/ folder (a nexo installed from its packed tarball). */
function shippedTarball(): string | undefined {
  const root = ownPackageRoot("nexo");
  const folder = root === undefined ? undefined : join(root, "sdk");
  if (folder === undefined || !existsSync(folder)) return undefined;
  const tarball = readdirSync(folder).find((file) => SDK_TARBALL.test(file));
  return tarball === undefined ? undefined : join(folder, tarball);
}

/** The SDK package as this nexo resolves it (a clone's packages/sdk). */
function besideDirectory(): string | undefined {
  let entry: string;
  try {
    // Its exports do not include package.json: resolve the entry and walk up to the package root.
    entry = realpathSync(createRequire(import.meta.url).resolve(SDK_PACKAGE));
  } catch {
    return undefined;
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    if (isSdkDirectory(dir)) return dir;
  }
  return undefined;
}

/** The SDK to depend on, or a sentence saying why none can be used. */
export function findSdk(flag: string | undefined): SdkSource | { error: string } {
  if (flag !== undefined) {
    const path = resolve(flag);
    if (!existsSync(path)) return { error: `--sdk ${flag}: no such file or directory` };
    if (statSync(path).isDirectory()) {
      return isSdkDirectory(path)
        ? { kind: "directory", path }
        : {
            error: `--sdk ${flag}: not a built ${SDK_PACKAGE} package (no package.json naming it, or no dist/)`,
          };
    }
    return SDK_TARBALL.test(basename(path))
      ? { kind: "tarball", path }
      : { error: `--sdk ${flag}: expected a packed SDK named nexo-plugin-sdk-<version>.tgz` };
  }
  const tarball = shippedTarball();
  if (tarball !== undefined) return { kind: "tarball", path: tarball };
  const directory = besideDirectory();
  if (directory !== undefined) return { kind: "directory", path: directory };
  return {
    error: `${SDK_PACKAGE} is not installed with this nexo: give --sdk PATH (a tarball from \`npm run package\` in a nexo clone), or use --lang python`,
  };
}

/**
 * Puts the SDK where the new extension in `target` can depend on it and returns the dependency's
 * version spec for its package.json: `file:nexo-plugin-sdk-<v>.tgz` (copied beside it) or
 * `file:/abs/sdk`.
 */
export function provideSdk(source: SdkSource, target: string): string {
  if (source.kind === "directory") return `file:${source.path}`;
  const name = basename(source.path);
  copyFileSync(source.path, join(target, name));
  return `file:${name}`;
}
