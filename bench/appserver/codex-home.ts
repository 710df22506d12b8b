/**
 * A CODEX_HOME for the benchmark: config.toml points Codex at the mock model API as a custom model
 * provider (OpenAI's Responses API at the mock's /v1, key from an environment variable, no retries)
 * and lets it run commands without asking and without a sandbox, as nexo's side runs its Read tool
 * without asking. Codex's unified exec tool (`exec_command`) is how it reads a file.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CODEX_KEY_ENV = "NEXO_BENCH_MOCK_KEY";

export function codexHome(mockUrl: string): string {
  const home = mkdtempSync(join(tmpdir(), "nexo-bench-codex-"));
  writeFileSync(
    join(home, "config.toml"),
    [
      'model = "mock-model"',
      'model_provider = "mock"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      "",
      "[model_providers.mock]",
      'name = "nexo mock-llm"',
      `base_url = "${mockUrl}/v1"`,
      'wire_api = "responses"',
      `env_key = "${CODEX_KEY_ENV}"`,
      "request_max_retries = 0",
      "stream_max_retries = 0",
      "",
    ].join("\n"),
  );
  return home;
}
