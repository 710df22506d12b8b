/**
 * Runs an example plugin the way the daemon does and talks to it the way the daemon does.
 *
 * The manifest is loaded and validated by the daemon's own loader, and the process is built by
 * the daemon's own launcher: the entrypoint command and args from nexo-plugin.toml, the plugin
 * directory as the working directory, a scrubbed environment (PATH, HOME = a fresh state dir,
 * the manifest's env, the test's env, the NEXO_* variables). A JsonRpcPeer then plays the host
 * over the child's stdio, recording every `broker.publish` and the child's stderr.
 *
 * The TypeScript plugins run compiled (dist/plugin.js), exactly as the daemon runs them;
 * scripts/run-tests.mjs compiles them from the current sources (SDK and wire included) before
 * any test runs, so a test never sees a stale file.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { JsonRpcPeer, type ProtocolProblem } from "@nexo/wire";
import { buildLaunchSpec } from "../../../packages/nexo/src/extensions/launch.js";
import {
  type LoadedPluginManifest,
  loadPluginManifest,
} from "../../../packages/nexo/src/extensions/plugins/manifest.js";

/** `examples/plugins/<name>`, absolute. */
export function exampleDir(name: string): string {
  return fileURLToPath(new URL(`../${name}/`, import.meta.url));
}

export interface PluginProcessOptions {
  /** Variables the operator would give the plugin (they win over the manifest's). */
  env?: Record<string, string>;
  /** Default timeout of the host's requests, ms. */
  requestTimeoutMs?: number;
  /** An existing state dir (a restart of the same plugin); the test removes it, not dispose(). */
  stateDir?: string;
}

export interface Published {
  topic: string;
  event: { topic: string; source: string; payload: Record<string, unknown>; [key: string]: unknown };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class PluginProcess {
  readonly manifest: LoadedPluginManifest;
  readonly child: ChildProcessWithoutNullStreams;
  readonly peer: JsonRpcPeer;
  readonly stateDir: string;
  readonly published: Published[] = [];
  readonly problems: ProtocolProblem[] = [];
  readonly exited: Promise<Exit>;
  private readonly ownStateDir: boolean;
  private stderrText = "";
  private exitInfo: Exit | undefined;
  private readonly watchers = new Set<() => void>();

  private constructor(manifest: LoadedPluginManifest, options: PluginProcessOptions) {
    this.manifest = manifest;
    this.ownStateDir = options.stateDir === undefined;
    this.stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), `nexo-example-${manifest.id}-`));
    const spec = buildLaunchSpec({
      command: manifest.entrypoint.command,
      args: manifest.entrypoint.args ?? [],
      pluginDir: manifest.dir,
      stateDir: this.stateDir,
      env: {
        manifestEnv: manifest.entrypoint.env ?? {},
        operatorEnv: { ...options.env },
        nexoVars: { NEXO_PLUGIN_ID: manifest.id, NEXO_STATE_DIR: this.stateDir },
      },
    });
    this.child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.exited = new Promise((resolve) => {
      // "close" comes after stdout and stderr have been read to the end.
      this.child.once("close", (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
        this.wake();
      });
    });
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderrText += chunk.toString("utf8");
      this.wake();
    });
    // A write to a child that already exited must not crash the test process.
    this.child.stdin.on("error", () => undefined);
    this.peer = JsonRpcPeer.overStreams({
      input: this.child.stdout,
      output: this.child.stdin,
      name: `host-of-${manifest.id}`,
      errorProtocol: "plugin",
      requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
      onProtocolProblem: (problem) => this.problems.push(problem),
      endOutputOnClose: false,
    });
    this.peer.onNotification("broker.publish", (params) => {
      this.published.push(params as Published);
      this.wake();
    });
  }

  /** Loads `examples/plugins/<name>/nexo-plugin.toml` with the daemon's loader and spawns it. */
  static async start(name: string, options: PluginProcessOptions = {}): Promise<PluginProcess> {
    const manifest = await loadPluginManifest(exampleDir(name));
    return new PluginProcess(manifest, options);
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** The `initialize` handshake, with the reply's identity checked as the daemon checks it. */
  async initialize(): Promise<Record<string, unknown>> {
    const reply = await this.peer.request<Record<string, unknown>>("initialize", { nexo_version: "0.1.0" });
    const manifest = reply.manifest as { plugin?: { id?: unknown } } | undefined;
    assert.equal(manifest?.plugin?.id, this.manifest.id, "the plugin echoes its own id");
    return reply;
  }

  /** Resolves once `check` returns something other than undefined; fails after `timeoutMs`. */
  until<T>(what: string, check: () => T | undefined, timeoutMs = 10_000): Promise<T> {
    const first = check();
    if (first !== undefined) return Promise.resolve(first);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.watchers.delete(watcher);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stderr:\n${this.stderrText}`));
      }, timeoutMs);
      const watcher = () => {
        const value = check();
        if (value === undefined) return;
        clearTimeout(timer);
        this.watchers.delete(watcher);
        resolve(value);
      };
      this.watchers.add(watcher);
    });
  }

  /** Call after something outside the child changed what `until` checks. */
  wake(): void {
    for (const watcher of this.watchers) watcher();
  }

  waitPublished(count: number, timeoutMs?: number): Promise<Published[]> {
    return this.until(
      `${count} broker.publish notification(s)`,
      () => (this.published.length >= count ? this.published.slice(0, count) : undefined),
      timeoutMs,
    );
  }

  stderrMatch(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray> {
    return this.until(`stderr ${pattern}`, () => this.stderrText.match(pattern) ?? undefined, timeoutMs);
  }

  /** `shutdown`, then the exit the contract expects within the 1 s grace (a little slack here). */
  async shutdown(timeoutMs = 3_000): Promise<{ reply: unknown; exit: Exit }> {
    const reply = await this.peer.request("shutdown", { reason: "test finished" });
    const exit = await this.until(
      "the plugin to exit after its shutdown ack",
      () => this.exitInfo,
      timeoutMs,
    );
    return { reply, exit };
  }

  /** Kills the child if it is still running and removes the state dir (test cleanup). */
  async dispose(): Promise<void> {
    this.peer.close("test finished");
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGKILL");
      await this.exited;
    }
    if (this.ownStateDir) rmSync(this.stateDir, { recursive: true, force: true });
  }
}
