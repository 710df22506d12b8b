/**
 * The sandbox proven from the inside, with the real bubblewrap on this machine: a probe program
 * (fixtures/sandbox-probe.mjs) runs under the supervisor exactly as a plugin would, reports what it
 * could do, and the test checks it from the outside. A second run with the host network and the
 * host user shows that the same probe does notice the difference, so the checks can fail.
 *
 * Skipped (with the reason) only where bwrap is not installed; on a machine with bwrap a failure
 * here is a real sandbox failure.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import {
  copyFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { JsonRpcPeer } from "@nexo/wire";
import type { plugin } from "@nexo/wire/schemas";
import { resolveCommand } from "../../src/extensions/command.js";
import { buildLaunchSpec } from "../../src/extensions/launch.js";
import { SANDBOX_GID, SANDBOX_UID } from "../../src/extensions/sandbox.js";
import { Supervisor } from "../../src/extensions/supervisor.js";
import { FIXTURES_DIR, isGone, pidsWithMarker, waitUntil } from "../fixtures/processes.js";

const bwrapMissing = (() => {
  try {
    resolveCommand("bwrap", { pathEnv: process.env.PATH });
    return false;
  } catch {
    return "bwrap is not installed on this machine";
  }
})();

interface ProbeReport {
  uid: number;
  gid: number;
  home: string;
  /** Effective capabilities (hex, from /proc/self/status). */
  capEff: string;
  visiblePids: number;
  interfaces: string[];
  read: Record<string, string>;
  write: Record<string, string>;
  connect: Record<string, string>;
  listen: string | undefined;
}

let dir: string;
let stateDir: string;
let allowedFile: string;
let secretFile: string;
let server: Server;
let port: number;
/** A non-loopback address of this host, to tell "no route" from "nothing listening". */
let hostAddress: string | undefined;

before(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "nexo-sandbox-isolation-")));
  stateDir = join(dir, "state");
  mkdirSync(join(dir, "allowed"));
  allowedFile = join(dir, "allowed", "hello.txt");
  writeFileSync(allowedFile, "allowed");
  secretFile = join(dir, "secret.txt");
  writeFileSync(secretFile, "secret");
  server = createServer((socket) => {
    socket.on("error", () => {}); // the probe hangs up as soon as it has connected
    socket.end("hello from the host\n");
  });
  server.listen(0, "0.0.0.0");
  await once(server, "listening");
  port = (server.address() as { port: number }).port;
  hostAddress = Object.values(networkInterfaces())
    .flat()
    .find((address) => address !== undefined && address.family === "IPv4" && !address.internal)?.address;
});

after(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function runProbe(
  sandbox: plugin.ManifestSandbox,
  hostEnv: Record<string, string> = {},
): Promise<{ report: ProbeReport; sandboxed: boolean }> {
  const probeConfig = {
    read: [allowedFile, secretFile, "/etc/hostname", join(FIXTURES_DIR, "../../package.json")],
    write: [join(stateDir, "written.txt"), join(dir, "allowed", "written.txt"), "/usr/nexo-probe-written"],
    connect: [{ host: "127.0.0.1", port }, ...(hostAddress ? [{ host: hostAddress, port }] : [])],
    listen: { host: "127.0.0.1", port },
  };
  const spec = buildLaunchSpec({
    command: "node",
    args: ["sandbox-probe.mjs", JSON.stringify(probeConfig)],
    pluginDir: FIXTURES_DIR,
    stateDir,
    sandbox,
    hostEnv: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...hostEnv },
  });
  let report: ProbeReport | undefined;
  const supervisor = new Supervisor({
    id: "probe",
    spawn: spec,
    restart: { respawn: false },
    onStarted: async (incarnation) => {
      const lines = createInterface({ input: incarnation.stdout });
      const [line] = (await once(lines, "line")) as [string];
      lines.close();
      report = JSON.parse(line) as ProbeReport;
    },
  });
  try {
    await supervisor.start();
  } catch (error) {
    throw new Error(
      `probe failed: ${(error as Error).message}\nstderr:\n${supervisor.stderrTail().join("\n")}`,
    );
  } finally {
    await supervisor.stop();
  }
  return { report: report!, sandboxed: spec.sandboxed };
}

describe("a sandboxed plugin, observed from the inside", { skip: bwrapMissing }, () => {
  let report: ProbeReport;
  before(async () => {
    const run = await runProbe({
      enabled: true,
      network: "deny",
      fs_read_paths: [join(dir, "allowed")],
      fs_write_paths: ["${state_dir}"],
    });
    assert.equal(run.sandboxed, true);
    report = run.report;
  });

  it("runs as nobody (uid/gid 65534)", () => {
    assert.equal(report.uid, SANDBOX_UID);
    assert.equal(report.gid, SANDBOX_GID);
  });

  it("cannot read host paths outside its allowlist, can read the allowlisted one", () => {
    assert.equal(report.read[allowedFile], "ok");
    assert.equal(report.read[secretFile], "ENOENT");
    assert.equal(report.read["/etc/hostname"], "ENOENT");
    assert.equal(report.read[join(FIXTURES_DIR, "../../package.json")], "ENOENT");
  });

  it("can write its state dir (and the file lands on the host), nothing read-only", () => {
    assert.equal(report.write[join(stateDir, "written.txt")], "ok");
    assert.equal(readFileSync(join(stateDir, "written.txt"), "utf8"), `written by uid ${SANDBOX_UID}`);
    assert.equal(report.write[join(dir, "allowed", "written.txt")], "EROFS");
    assert.equal(report.write["/usr/nexo-probe-written"], "EROFS");
    assert.equal(report.home, stateDir);
  });

  it('under network = "deny" it has only a private loopback: no route out, the host unreachable', () => {
    assert.deepEqual(report.interfaces, ["lo"]);
    assert.equal(report.connect[`127.0.0.1:${port}`], "ECONNREFUSED", "the host's listener is not reachable");
    if (hostAddress) assert.equal(report.connect[`${hostAddress}:${port}`], "ENETUNREACH");
    // The host holds this port on every address; binding it succeeds only in a separate network stack.
    assert.equal(report.listen, "ok");
  });

  it("sees only its own pid namespace", () => {
    assert.ok(report.visiblePids < 10, `sees ${report.visiblePids} processes`);
  });
});

describe("the same probe without those restrictions (control)", { skip: bwrapMissing }, () => {
  it('with network = "host" and drop_user = false it reaches the host and keeps the daemon user', async () => {
    const { report } = await runProbe(
      { enabled: true, network: "host", drop_user: false, fs_write_paths: ["${state_dir}"] },
      { NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW: "1" },
    );
    assert.equal(report.uid, process.getuid?.());
    assert.equal(report.connect[`127.0.0.1:${port}`], "ok");
    assert.equal(report.listen, "EADDRINUSE");
    assert.notDeepEqual(report.interfaces, ["lo"]);
    assert.equal(report.read[secretFile], "ENOENT", "the filesystem is still confined");
    assert.equal(report.capEff, "0000000000000000", "keeping the user never keeps root's capabilities");
  });
});

describe("stopping a sandboxed plugin", { skip: bwrapMissing }, () => {
  it("kills the sandbox and everything inside it, grandchildren included", async () => {
    const marker = `nexo-sandboxed-grandchild-${randomUUID()}`;
    const spec = buildLaunchSpec({
      command: "node",
      args: ["rpc-child.mjs", "--linger", "--ignore-sigterm"],
      pluginDir: FIXTURES_DIR,
      stateDir,
      sandbox: { enabled: true },
      hostEnv: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    let peer: JsonRpcPeer | undefined;
    const supervisor = new Supervisor({
      id: "sandboxed-rpc",
      spawn: spec,
      onStarted: (incarnation) => {
        peer = JsonRpcPeer.overStreams({ input: incarnation.stdout, output: incarnation.stdin });
      },
      shutdown: () => peer!.request("shutdown", undefined, { timeoutMs: 2_000 }),
    });
    const incarnation = await supervisor.start();
    const insidePid = await peer!.request<number>("spawn_grandchild", { marker });
    const [grandchild] = pidsWithMarker(marker);
    assert.ok(grandchild !== undefined, "the grandchild runs, seen from the host");
    assert.notEqual(grandchild, insidePid, "inside, it has a pid of the sandbox's own namespace");

    await supervisor.stop();
    assert.ok(isGone(incarnation.pid), "bwrap itself is gone");
    await waitUntil(() => pidsWithMarker(marker).length === 0, 3_000, "the sandboxed grandchild to die");
  });
});

describe("a PATH binary behind a symlink", { skip: bwrapMissing }, () => {
  it("runs sandboxed when its real file lives outside the skeleton (like /usr/local/bin/node → ~/.nvm/…)", async () => {
    const realDir = join(dir, "nvm", "versions", "node", "bin");
    const linkDir = join(dir, "local-bin");
    mkdirSync(realDir, { recursive: true });
    mkdirSync(linkDir);
    try {
      linkSync(realpathSync(process.execPath), join(realDir, "node"));
    } catch {
      copyFileSync(realpathSync(process.execPath), join(realDir, "node"));
    }
    symlinkSync(join(realDir, "node"), join(linkDir, "node"));
    const pathEnv = `${linkDir}:${process.env.PATH ?? "/usr/bin:/bin"}`;

    const spec = buildLaunchSpec({
      command: "node",
      args: ["-e", 'process.stdout.write(process.execPath + "\\n"); process.stdin.resume()'],
      stateDir,
      sandbox: { enabled: true },
      hostEnv: { PATH: pathEnv },
    });
    const flags = spec.args.slice(0, spec.args.indexOf("--")).join(" ");
    assert.ok(flags.includes(`--ro-bind ${linkDir} ${linkDir}`), "the symlink's directory");
    assert.ok(flags.includes(`--ro-bind ${realDir} ${realDir}`), "and the real binary's directory");

    let execPath = "";
    const supervisor = new Supervisor({
      id: "nvm-node",
      spawn: spec,
      restart: { respawn: false },
      onStarted: async (incarnation) => {
        const lines = createInterface({ input: incarnation.stdout });
        [execPath] = (await once(lines, "line")) as [string];
        lines.close();
      },
    });
    try {
      await supervisor.start();
    } finally {
      await supervisor.stop();
    }
    assert.equal(execPath, join(realDir, "node"));
  });
});
