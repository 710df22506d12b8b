/**
 * Claude Code, the CLI agent a user would pick instead of `nexo agent`: installed from npm on demand
 * into the benchmark's cache directory (NEXO_BENCH_CACHE, default ~/.cache/nexo-bench), the native
 * binary of the platform package run directly (what the package's launcher copies into place; npm's
 * install scripts are not needed). Unavailable (offline, unsupported platform) → the reason, so the
 * benchmark prints a one-line skip instead of failing.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/** The version measured (pinned: a peer's speed changes between releases). */
export const CLAUDE_CODE_VERSION = "2.1.332";

const run = promisify(execFile);

export function benchCache(): string {
  return process.env.NEXO_BENCH_CACHE ?? join(homedir(), ".cache", "nexo-bench");
}

export async function claudeBinary(): Promise<{ path: string } | { skip: string }> {
  const cache = join(benchCache(), `claude-code-${CLAUDE_CODE_VERSION}`);
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
        "--ignore-scripts",
        "--prefix",
        cache,
        `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`,
      ],
      { timeout: 600_000 },
    );
  } catch (error) {
    // npm's own reason (offline, 404, …) is on stderr; the error's message only repeats the command.
    const stderr = String((error as { stderr?: unknown }).stderr ?? "");
    const reason =
      stderr.split("\n").find((line) => /^npm (error|ERR!) /.test(line) && !/complete log/.test(line)) ??
      (error as Error).message.split("\n")[0];
    return { skip: `npm install @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} failed: ${reason}` };
  }
  const installed = findBinary(cache);
  return installed
    ? { path: installed }
    : { skip: `no native Claude Code binary for ${process.platform}-${process.arch}` };
}

/** node_modules/@anthropic-ai/claude-code-<platform>/claude */
function findBinary(cache: string): string | undefined {
  const scope = join(cache, "node_modules", "@anthropic-ai");
  if (!existsSync(scope)) return undefined;
  for (const pkg of readdirSync(scope).filter((name) => name.startsWith("claude-code-"))) {
    const binary = join(scope, pkg, "claude");
    if (existsSync(binary)) return binary;
  }
  return undefined;
}

/**
 * Claude Code's environment: the mock as its API, a throw-away HOME and config directory (no
 * login, no settings or hooks of the benchmarking user), and every optional network use off —
 * telemetry, error reporting, auto-update, non-essential traffic — so only model calls leave it.
 */
export function claudeEnv(home: string, mockUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, ".claude"),
    ANTHROPIC_BASE_URL: mockUrl,
    ANTHROPIC_API_KEY: "bench",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_AUTOUPDATER: "1",
  };
}
