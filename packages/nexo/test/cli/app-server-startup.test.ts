/**
 * What `nexo app-server` loads before its first `initialize` answer (the start-up time launchers
 * wait for). The fast start (cli/app-server-fast.ts) answers before the door loads: the bundle's
 * static imports from main.js to it are read, and none may bring zod, pino, commander, the wire
 * schemas or the families. When the door answers itself (a first line the fast start leaves to
 * it), the bundled chunks are recorded by a module hook, and none may carry what only other
 * launches use — the management families and the daemon's config (`--config`), the WebSocket
 * server (`--listen ws://`), the broker's NATS client, YAML/TOML parsing, the admin and plugin wire
 * schemas, SQLite — nor zod's non-English messages (scripts/bundle-cli.mjs). With `--config` the
 * management families are loaded, which shows the recording sees them.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { fastStartSources, NOT_IN_A_FAST_START } from "../helpers/bundle.js";
import { CLI_PATH } from "../helpers/cli.js";

const HOOKS = `export async function load(url, context, next) {
  if (url.startsWith("file:")) (await import("node:fs")).appendFileSync(process.env.NEXO_TEST_LOAD_LOG, url + "\\n");
  return next(url, context);
}`;
const REGISTER = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

/** The source files (esbuild's path comments) of every bundle chunk loaded up to the first answer. */
async function loadedUntilInitialize(
  args: string[],
  capabilities: Record<string, unknown> = {},
): Promise<{ files: string[]; sources: string }> {
  const dir = mkdtempSync(join(tmpdir(), "nexo-as-startup-"));
  const log = join(dir, "loaded.txt");
  try {
    const child = spawn(
      process.execPath,
      ["--import", `data:text/javascript,${encodeURIComponent(REGISTER)}`, CLI_PATH, "app-server", ...args],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          HOME: dir,
          NEXO_STATE_DIR: join(dir, "state"),
          NEXO_TEST_LOAD_LOG: log,
        },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no initialize answer: ${stderr}`)), 60_000);
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
        if (stdout.includes('"id":1')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { clientInfo: { name: "t", version: "1" }, capabilities } })}\n`,
      );
    });
    // Read before the process ends: what its shutdown loads is not start-up.
    const urls = readFileSync(log, "utf8").split("\n").filter(Boolean);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("close", resolve));
    const files = urls.filter((u) => u.includes("/bundle/")).map((u) => fileURLToPath(u));
    assert.ok(files.length > 0, `no bundle chunk recorded: ${urls.join(" ")}`);
    return { files: urls, sources: files.map((f) => readFileSync(f, "utf8")).join("\n") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the fast start answers initialize with main.js and its own small chunk only", () => {
  const sources = fastStartSources("app-server-fast");
  assert.ok(sources.includes("// packages/nexo/dist/doors/appserver/capability-flags.js"));
  for (const absent of NOT_IN_A_FAST_START) {
    assert.ok(!sources.includes(absent), `${absent} is loaded before the fast answer`);
  }
});

test("nexo app-server's door answers initialize without loading what other launches use", async () => {
  // A capability the fast start does not know: the door answers, with what it has loaded by then.
  const { files, sources } = await loadedUntilInitialize([], { futureFlag: true });
  assert.ok(sources.includes("doors/appserver/families/threads.js"), "the core families are loaded");
  for (const absent of [
    "doors/appserver/families/models.js",
    "doors/appserver/standalone.js",
    "daemon/services/index.js",
    "node_modules/ws/",
    "node_modules/nats/",
    "node_modules/yaml/",
    "node_modules/smol-toml/",
    "wire/dist/schemas/admin/",
    "wire/dist/schemas/plugin/",
    "zod/v4/locales/fr.js",
  ]) {
    assert.ok(
      !sources.includes(`// ${absent}`) && !sources.includes(absent),
      `${absent} is loaded before initialize`,
    );
  }
  assert.ok(!files.some((f) => f.includes("better-sqlite3")), "SQLite is loaded before initialize");
});

test("with --config the management families are loaded (the recording sees them)", async () => {
  const config = mkdtempSync(join(tmpdir(), "nexo-as-startup-cfg-"));
  try {
    const { sources } = await loadedUntilInitialize(["--config", config]);
    assert.ok(sources.includes("doors/appserver/families/models.js"));
    assert.ok(sources.includes("doors/appserver/standalone.js"));
  } finally {
    rmSync(config, { recursive: true, force: true });
  }
});
