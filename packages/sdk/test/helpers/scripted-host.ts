/**
 * A scripted host for SDK tests: spawns a fixture plugin or microapp as a real child process
 * (the fixture and the SDK's TypeScript sources bundled into one plain-JS file, or any other
 * command) and speaks to it with a
 * JsonRpcPeer over the child's stdio, the way the daemon will. It also keeps every raw stdout
 * line, to prove that nothing but whole JSON frames ever reaches the host, and the child's stderr,
 * where the SDK logs.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ErrorProtocol, JsonRpcPeer, type ProtocolProblem } from "@nexo/wire";
import { buildSync } from "esbuild";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

const bundles = new Map<string, string>();
let bundleDir: string | undefined;

/**
 * `fixture` (a .ts path) bundled from the current sources (the "@nexo/source" condition) into one
 * plain-JS file, built once per test process. Plain node starts it in about a third of the CPU
 * time that loading the sources through tsx takes, and tests spawn many; source maps keep stack
 * traces pointing at the sources.
 */
export function bundledFixture(fixture: string): string {
  let out = bundles.get(fixture);
  if (out !== undefined) return out;
  if (bundleDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "nexo-sdk-fixtures-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    bundleDir = dir;
  }
  out = join(bundleDir, `${bundles.size}-${basename(fixture).replace(/\.ts$/, "")}.mjs`);
  buildSync({
    entryPoints: [fixture],
    outfile: out,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@nexo/source"],
    sourcemap: "inline",
    logLevel: "warning",
    // CommonJS dependencies bundled into an ES module still call require() for Node's built-ins.
    banner: {
      js: 'import { createRequire as __nexoRequire } from "node:module"; const require = __nexoRequire(import.meta.url);',
    },
  });
  bundles.set(fixture, out);
  return out;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Default timeout of the host's requests, ms. */
  requestTimeoutMs?: number;
  /** The child's command and arguments instead of `node <the fixture, bundled>`. */
  command?: readonly [string, ...string[]];
  /** How errors the child answers are decoded. Default "plugin". */
  errorProtocol?: ErrorProtocol;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class ScriptedHost {
  readonly child: ChildProcessWithoutNullStreams;
  readonly peer: JsonRpcPeer;
  /** Every line the child wrote to stdout, in order. */
  readonly stdoutLines: string[] = [];
  readonly problems: ProtocolProblem[] = [];
  /** `broker.publish` params, in arrival order. */
  readonly published: Array<{ topic: string; event: Record<string, unknown> }> = [];
  readonly exited: Promise<Exit>;
  private stdoutRest = "";
  private exitInfo: Exit | undefined;
  private stderrText = "";
  private readonly watchers = new Set<() => void>();

  constructor(fixture: string, options: StartOptions = {}) {
    const [command, ...args] = options.command ?? [
      process.execPath,
      "--enable-source-maps",
      bundledFixture(fixturePath(fixture)),
    ];
    this.child = spawn(command, args, {
      cwd: repoRoot,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.exited = new Promise((resolve) => {
      // "close", not "exit": it comes after the child's stdout and stderr have been read to the end.
      this.child.once("close", (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
        this.wake();
      });
    });
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.stdoutRest += chunk.toString("utf8");
      let newline = this.stdoutRest.indexOf("\n");
      while (newline !== -1) {
        this.stdoutLines.push(this.stdoutRest.slice(0, newline));
        this.stdoutRest = this.stdoutRest.slice(newline + 1);
        newline = this.stdoutRest.indexOf("\n");
      }
      this.wake();
    });
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderrText += chunk.toString("utf8");
      this.wake();
    });
    // Writes to a child that already exited must not crash the test process.
    this.child.stdin.on("error", () => undefined);
    this.peer = JsonRpcPeer.overStreams({
      input: this.child.stdout,
      output: this.child.stdin,
      name: "scripted-host",
      errorProtocol: options.errorProtocol ?? "plugin",
      // Generous: a child started from TypeScript sources on a loaded machine can take many
      // seconds to answer its first request.
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      onProtocolProblem: (problem) => this.problems.push(problem),
      endOutputOnClose: false,
    });
    this.peer.onNotification("broker.publish", (params) => {
      this.published.push(params as { topic: string; event: Record<string, unknown> });
      this.wake();
    });
  }

  get stderr(): string {
    return this.stderrText;
  }

  private wake(): void {
    for (const watcher of this.watchers) watcher();
  }

  /** Resolves once `check` returns a value other than undefined; fails after `timeoutMs`. */
  async until<T>(what: string, check: () => T | undefined, timeoutMs = 30_000): Promise<T> {
    const first = check();
    if (first !== undefined) return first;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.watchers.delete(watcher);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; stderr so far:\n${this.stderrText}`,
          ),
        );
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

  /** Waits for a stderr line matching `pattern` and returns the match. */
  stderrMatch(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray> {
    return this.until(`stderr ${pattern}`, () => this.stderrText.match(pattern) ?? undefined, timeoutMs);
  }

  waitPublished(
    count: number,
    timeoutMs?: number,
  ): Promise<Array<{ topic: string; event: Record<string, unknown> }>> {
    return this.until(
      `${count} broker.publish notification(s)`,
      () => (this.published.length >= count ? this.published.slice(0, count) : undefined),
      timeoutMs,
    );
  }

  /** Writes raw bytes to the child's stdin, bypassing the peer (malformed or oversize input). */
  writeRaw(data: string | Buffer): void {
    this.child.stdin.write(data);
  }

  /** Every stdout line so far is one JSON object: nothing the plugin printed leaked into them. */
  assertFramesIntact(): void {
    for (const line of this.stdoutLines) {
      let parsed: unknown;
      assert.doesNotThrow(
        () => {
          parsed = JSON.parse(line);
        },
        `stdout line is not JSON: ${JSON.stringify(line.slice(0, 200))}`,
      );
      assert.ok(
        parsed !== null && typeof parsed === "object" && !Array.isArray(parsed),
        `not an object: ${line}`,
      );
    }
    assert.equal(this.stdoutRest, "", "stdout ends with a partial line");
  }

  waitExit(timeoutMs = 30_000): Promise<Exit> {
    return this.until("the child to exit", () => this.exitInfo, timeoutMs);
  }

  /** Kills the child if it is still running (test cleanup). */
  async dispose(): Promise<void> {
    this.peer.close("test finished");
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGKILL");
      await this.exited;
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
