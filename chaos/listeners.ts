/**
 * Attack: the listeners from the network's side (issue 10.19).
 *
 * - Every socket the real daemon and its children listen on (its health listener, the loopback
 *   channel plugin's HTTP listener) is found in /proc and must be bound to loopback when nothing
 *   says otherwise.
 * - A non-loopback address without a token is refused: `nexo start` with `http.bind: 0.0.0.0:0`,
 *   `nexo app-server --listen ws://0.0.0.0:0`, and the loopback channel with `LOOPBACK_HOST=0.0.0.0`
 *   — none of them may end up listening there.
 * - With a token, every request without it, with a wrong one (same length, other length, another
 *   scheme) gets 401, on every path and method; the right token gets through.
 * - Every place that checks a presented token compares in constant time (read from the sources),
 *   and the figure: the median time of a near miss against a far miss.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { upgradeStatus } from "../packages/nexo/test/helpers/appserver-client.js";
import { CLI_PATH, runCli } from "../packages/nexo/test/helpers/cli.js";
import { EXAMPLE_PLUGINS } from "../packages/nexo/test/helpers/daemon-dir.js";
import { startDaemonProcess } from "../packages/nexo/test/helpers/daemon-process.js";
import { type Attack, processTree, runAttack, summarise } from "./lib.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TOKEN = "chaos-token-0123456789abcdef";

/** `a.b.c.d` or an IPv6 text from /proc/net/tcp{,6}'s little-endian hex. */
function hexAddress(hex: string): string {
  if (hex.length === 8)
    return [3, 2, 1, 0].map((i) => Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join(".");
  const words: string[] = [];
  for (let w = 0; w < 4; w++) {
    const word = hex.slice(w * 8, w * 8 + 8);
    const bytes = [3, 2, 1, 0].map((i) => word.slice(i * 2, i * 2 + 2));
    words.push(`${bytes[0]}${bytes[1]}`, `${bytes[2]}${bytes[3]}`);
  }
  return words.map((w) => w.replace(/^0+(?=.)/, "")).join(":");
}

const isLoopback = (address: string) =>
  address.startsWith("127.") || address === "0:0:0:0:0:0:0:1" || /^0:0:0:0:0:ffff:7f/.test(address);

/** Every TCP socket in LISTEN state owned by one of `pids`, with its address. */
function listeningSockets(pids: number[]): Array<{ pid: number; address: string; port: number }> {
  const byInode = new Map<string, { address: string; port: number }>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== "0A") continue; // 0A: LISTEN
      const [hex, port] = fields[1]!.split(":");
      byInode.set(fields[9]!, { address: hexAddress(hex!), port: Number.parseInt(port!, 16) });
    }
  }
  const found: Array<{ pid: number; address: string; port: number }> = [];
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        const socket = inode === undefined ? undefined : byInode.get(inode);
        if (socket) found.push({ pid, ...socket });
      } catch {
        // The descriptor was closed while we looked.
      }
    }
  }
  return found;
}

function configDir(attack: Attack, daemonYaml: string, pluginEnv = "{}"): { dir: string; stateDir: string } {
  const dir = attack.tempDir("listen-cfg");
  const stateDir = attack.tempDir("listen-state");
  mkdirSync(join(dir, "workspace"));
  writeFileSync(
    join(dir, "agents.yaml"),
    [
      "agents:",
      "  - id: ana",
      "    model: { provider: scripted, model: nexo-scripted-demo }",
      "    workspace: ./workspace",
      "    inbound_bindings: [{ plugin: loopback }]",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "plugins.yaml"),
    `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n    env: ${pluginEnv}\n`,
  );
  writeFileSync(join(dir, "daemon.yaml"), daemonYaml);
  return { dir, stateDir };
}

async function status(url: string, init: RequestInit = {}): Promise<number> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  await res.arrayBuffer();
  return res.status;
}

async function loopbackByDefault(attack: Attack): Promise<void> {
  // The daemon's own default is 127.0.0.1:7780; only the port is changed, so that this run does
  // not collide with a daemon already on 7780. The plugin gets no LOOPBACK_HOST at all.
  const { dir, stateDir } = configDir(attack, "http: { bind: 127.0.0.1:0 }\n");
  const daemon = await startDaemonProcess({ config: dir, stateDir });
  attack.defer(() => daemon.stop("SIGKILL"));
  const deadline = Date.now() + 30_000;
  let sockets = listeningSockets(processTree(daemon.pid));
  while (sockets.length < 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    sockets = listeningSockets(processTree(daemon.pid));
  }
  const exposed = sockets.filter((s) => !isLoopback(s.address));
  attack.figure("listening sockets of the daemon and its children", sockets.length);
  attack.figure("of them bound beyond loopback", exposed.length);
  attack.expect(
    sockets.length >= 2,
    `expected the health listener and the channel's, found ${sockets.length}`,
  );
  attack.expect(exposed.length === 0, `listening beyond loopback: ${JSON.stringify(exposed)}`);
  await daemon.stop();

  // The daemon's default bind as the config loader resolves it for an empty daemon.yaml.
  const { loadDaemonConfig } = await import("../packages/nexo/src/daemon/config/index.js");
  const bare = attack.tempDir("listen-bare");
  writeFileSync(
    join(bare, "agents.yaml"),
    "agents:\n  - id: a\n    model: { provider: scripted, model: m }\n",
  );
  const loaded = await loadDaemonConfig(bare, { env: {} });
  attack.expect(isLoopback(loaded.daemon.http.host), `the default bind is ${loaded.daemon.http.bind}`);
}

/** `nexo start` and `nexo app-server` on 0.0.0.0 without a token; how many refused. */
async function refusedWithoutToken(attack: Attack): Promise<number> {
  let refusals = 0;
  const { dir, stateDir } = configDir(attack, "http: { bind: 0.0.0.0:0 }\n");
  const daemon = await runCli(["start", "--config", dir, "--state-dir", stateDir], {
    env: { PATH: process.env.PATH, NEXO_LOG: "info" },
    timeoutMs: 30_000,
  });
  const refused = daemon.code !== 0 && daemon.code !== null && /requires a token/.test(daemon.stderr);
  attack.expect(refused, `nexo start on 0.0.0.0 without a token: exit ${daemon.code}, ${daemon.stderr}`);
  if (refused) refusals++;

  const server = await runCli(
    ["app-server", "--listen", "ws://0.0.0.0:0", "--provider", "scripted", "--state-dir", stateDir],
    { env: { PATH: process.env.PATH }, timeoutMs: 30_000 },
  );
  const serverRefused = server.code !== 0 && server.code !== null && /token is required/.test(server.stderr);
  attack.expect(
    serverRefused,
    `app-server on 0.0.0.0 without a token: exit ${server.code}, ${server.stderr}`,
  );
  if (serverRefused) refusals++;

  return refusals;
}

/**
 * The daemon on 0.0.0.0 with a token, its channel plugin told to listen on 0.0.0.0 without one;
 * then the AppServer on 0.0.0.0 with a token.
 */
async function tokenChecks(attack: Attack, refusals: number): Promise<void> {
  const { dir, stateDir } = configDir(
    attack,
    `http: { bind: 0.0.0.0:0, token: ${TOKEN} }\n`,
    '{ LOOPBACK_HOST: "0.0.0.0" }',
  );
  const daemon = await startDaemonProcess({ config: dir, stateDir });
  attack.defer(() => daemon.stop("SIGKILL"));
  // The channel refuses to listen there without LOOPBACK_TOKEN; the daemon runs on without it.
  const deadline = Date.now() + 20_000;
  const saidWhy = () => /LOOPBACK_TOKEN/.test(daemon.stderr());
  while (!saidWhy() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const exposed = listeningSockets(processTree(daemon.pid)).filter(
    (s) => !isLoopback(s.address) && s.pid !== daemon.pid,
  );
  attack.expect(saidWhy(), "the channel's refusal to listen on 0.0.0.0 without LOOPBACK_TOKEN is not logged");
  attack.expect(exposed.length === 0, `the channel listens beyond loopback: ${JSON.stringify(exposed)}`);
  if (saidWhy() && exposed.length === 0) refusals++;
  attack.figure("non-loopback listeners without a token refused", refusals, "of 3");

  const port = new URL(daemon.healthUrl ?? "http://x:0").port;
  const base = `http://127.0.0.1:${port}`;
  const wrong: Array<Record<string, string>> = [
    {},
    { authorization: `Bearer ${TOKEN.slice(0, -1)}x` },
    { authorization: `Bearer ${TOKEN}x` },
    { authorization: `Bearer ${TOKEN.slice(0, 16)}` },
    { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString("base64")}` },
    { authorization: TOKEN },
    { authorization: `Bearer ${TOKEN.toUpperCase()}` },
  ];
  let denied = 0;
  let tried = 0;
  for (const path of ["/healthz", "/readyz", "/metrics", "/nope"]) {
    for (const method of ["GET", "POST"]) {
      for (const headers of wrong) {
        tried++;
        if ((await status(`${base}${path}`, { method, headers })) === 401) denied++;
      }
    }
  }
  attack.figure("daemon requests with a missing or wrong token", tried);
  attack.figure("of them answered 401", denied);
  attack.expect(denied === tried, `${tried - denied} requests without the right token were not refused`);
  const right = await status(`${base}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } });
  attack.expect(right === 200, `the right token got ${right}`);

  // The figure for the constant-time compare: a near miss (only the last character differs)
  // against a far miss (the first character differs), interleaved.
  const near: number[] = [];
  const far: number[] = [];
  const rounds = attack.pick(50, 2_000);
  for (let i = 0; i < rounds; i++) {
    for (const [into, token] of [
      [near, `${TOKEN.slice(0, -1)}x`],
      [far, `x${TOKEN.slice(1)}`],
    ] as const) {
      const started = performance.now();
      await status(`${base}/healthz`, { headers: { authorization: `Bearer ${token}` } });
      into.push(performance.now() - started);
    }
  }
  const nearMs = summarise(near).p50Ms;
  const farMs = summarise(far).p50Ms;
  attack.figure("median 401 time, near miss", nearMs * 1000, "µs");
  attack.figure("median 401 time, far miss", farMs * 1000, "µs");
  await daemon.stop();

  // The AppServer's WebSocket: ?token= checked before the upgrade.
  const server = spawn(
    process.execPath,
    [CLI_PATH, "app-server", "--listen", "ws://0.0.0.0:0", "--token", TOKEN, "--provider", "scripted"],
    { stdio: ["ignore", "ignore", "pipe"], env: { PATH: process.env.PATH, NEXO_STATE_DIR: stateDir } },
  );
  attack.defer(() => server.kill("SIGKILL"));
  let stderr = "";
  server.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const wsDeadline = Date.now() + 30_000;
  while (!/listening on ws:\/\/[^:]+:\d+/.test(stderr) && Date.now() < wsDeadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const wsPort = /listening on ws:\/\/[^ ]*:(\d+)/.exec(stderr)?.[1];
  attack.expect(wsPort !== undefined, `the AppServer did not say where it listens: ${stderr}`);
  if (wsPort === undefined) return;
  const ws = `ws://127.0.0.1:${wsPort}/ws`;
  const wsWrong = ["", "?token=", `?token=${TOKEN.slice(0, -1)}x`, `?token=${TOKEN}x`, "?tok=x"];
  let wsDenied = 0;
  for (const query of wsWrong) if ((await upgradeStatus(`${ws}${query}`)) === 401) wsDenied++;
  attack.figure(
    "AppServer upgrades with a missing or wrong token answered 401",
    wsDenied,
    `of ${wsWrong.length}`,
  );
  attack.expect(
    wsDenied === wsWrong.length,
    `${wsWrong.length - wsDenied} AppServer upgrades were not refused`,
  );
  const opened = await upgradeStatus(`${ws}?token=${TOKEN}`);
  attack.expect(opened === 101, `the right AppServer token got ${opened}`);
  server.kill("SIGTERM");
  await once(server, "exit");
}

/** Every source file that reads a presented token must compare it in constant time. */
function constantTimeEverywhere(attack: Attack): void {
  const readsToken = /headers\.authorization|searchParams\.get\("token"\)/;
  const constantTime = /constantTimeEqual\(|timingSafeEqual\(/;
  // A token or a presented value compared with `===` to anything but undefined, null or "".
  const side = String.raw`(?:[\w$]+\.)*(?:token|presented)\b`;
  const other = String.raw`(?!\s|undefined\b|null\b|""|'')`;
  const plainCompare = new RegExp(
    String.raw`${side}\s*[=!]==\s*${other}\S|\S\s*[=!]==\s*${other}${side}`,
    "i",
  );
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (["node_modules", "dist", "bundle", "test"].includes(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|mjs|js)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) files.push(path);
    }
  };
  walk(join(ROOT, "packages"));
  walk(join(ROOT, "examples"));
  const checking = files.filter((file) => readsToken.test(readFileSync(file, "utf8")));
  const unsafe = checking.filter((file) => {
    const text = readFileSync(file, "utf8");
    return !constantTime.test(text) || plainCompare.test(text);
  });
  attack.figure("source files that check a presented token", checking.length);
  attack.expect(
    checking.length >= 2,
    "no token check found in the sources: the scan looks in the wrong place",
  );
  attack.expect(
    unsafe.length === 0,
    `token checks without a constant-time compare: ${unsafe.map((f) => relative(ROOT, f)).join(", ")}`,
  );
}

await runAttack("listeners", async (attack) => {
  constantTimeEverywhere(attack);
  await loopbackByDefault(attack);
  await tokenChecks(attack, await refusedWithoutToken(attack));
});
