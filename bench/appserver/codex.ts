/**
 * `codex app-server`, the peer a user would pick instead of nexo's AppServer: installed from npm on
 * demand into a cache directory (NEXO_BENCH_CACHE, default ~/.cache/nexo-bench), the native binary
 * of the platform package run directly (what Codex's launcher script execs). Unavailable (offline,
 * unsupported platform) → undefined and the reason, so the benchmark prints a clear skip.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/** The version measured; 0.169.0 is the one checked to answer `initialize` over stdio. */
export const CODEX_VERSION = "0.169.0";

const run = promisify(execFile);

export async function codexBinary(): Promise<{ path: string } | { skip: string }> {
  const cache = join(
    process.env.NEXO_BENCH_CACHE ?? join(homedir(), ".cache", "nexo-bench"),
    `codex-${CODEX_VERSION}`,
  );
  const found = findBinary(cache);
  if (found) return { path: found };
  mkdirSync(cache, { recursive: true });
  try {
    await run(
      "npm",
      [
        "install",
        "--no-save",
        "--no-audit",
        "--no-fund",
        "--prefix",
        cache,
        `@openai/codex@${CODEX_VERSION}`,
      ],
      {
        timeout: 600_000,
      },
    );
  } catch (error) {
    return {
      skip: `npm install @openai/codex@${CODEX_VERSION} failed: ${(error as Error).message.split("\n")[0]}`,
    };
  }
  const installed = findBinary(cache);
  return installed
    ? { path: installed }
    : { skip: `no native codex binary for ${process.platform}-${process.arch}` };
}

/** node_modules/@openai/codex-<platform>/vendor/<target triple>/bin/codex */
function findBinary(cache: string): string | undefined {
  const scope = join(cache, "node_modules", "@openai");
  if (!existsSync(scope)) return undefined;
  for (const pkg of readdirSync(scope).filter((name) => name.startsWith("codex-"))) {
    const vendor = join(scope, pkg, "vendor");
    if (!existsSync(vendor)) continue;
    for (const triple of readdirSync(vendor)) {
      const binary = join(vendor, triple, "bin", "codex");
      if (existsSync(binary)) return binary;
    }
  }
  return undefined;
}
