/**
 * Who may start and under which sandbox policy (plugin contract §2.2): the operator knobs, the
 * host-network gate, the denylist re-checked on expanded real paths, "no bwrap → refuse, never
 * run unsandboxed", and the exact bwrap flags a policy becomes.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { buildLaunchSpec } from "../../src/extensions/launch.js";
import {
  BWRAP_HARDENING_FLAGS,
  buildBwrapArgs,
  resolveSandbox,
  type SandboxPolicy,
} from "../../src/extensions/sandbox.js";
import {
  SandboxConfigError,
  type SandboxError,
  SandboxHostNetworkError,
  SandboxPathError,
  SandboxRequiredError,
  SandboxUnavailableError,
} from "../../src/extensions/sandbox-errors.js";
import { Supervisor, SupervisorFailedError } from "../../src/extensions/supervisor.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";
const haveBwrap = () => "/usr/bin/bwrap";

let dir: string;
let stateDir: string;
before(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "nexo-sandbox-policy-")));
  stateDir = join(dir, "state");
});
after(() => rmSync(dir, { recursive: true, force: true }));

const resolve = (
  sandbox: Parameters<typeof resolveSandbox>[0],
  env: Record<string, string> = {},
  findBwrap: () => string | undefined = haveBwrap,
) => resolveSandbox(sandbox, { PATH, ...env }, { stateDir, findBwrap });

function rejectsWith<E extends SandboxError>(
  action: () => unknown,
  type: abstract new (...args: never[]) => E,
  pattern: RegExp,
): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
    assert.match((error as Error).message, pattern);
    return true;
  });
}

describe("operator knobs", () => {
  it("NEXO_PLUGIN_SANDBOX_REQUIRE=1 refuses a plugin without the sandbox, or with it disabled", () => {
    rejectsWith(
      () => resolve(undefined, { NEXO_PLUGIN_SANDBOX_REQUIRE: "1" }),
      SandboxRequiredError,
      /REQUIRE=1/,
    );
    rejectsWith(
      () => resolve({ enabled: false }, { NEXO_PLUGIN_SANDBOX_REQUIRE: "1" }),
      SandboxRequiredError,
      /enabled = true/,
    );
    assert.deepEqual(resolve(undefined, { NEXO_PLUGIN_SANDBOX_REQUIRE: "0" }), { enabled: false });
    assert.deepEqual(resolve(undefined), { enabled: false });
    assert.equal(resolve({ enabled: true }, { NEXO_PLUGIN_SANDBOX_REQUIRE: "1" }).enabled, true);
  });

  it("a knob value that is neither on nor off is an error, not silently off", () => {
    rejectsWith(
      () => resolve(undefined, { NEXO_PLUGIN_SANDBOX_REQUIRE: "ture" }),
      SandboxConfigError,
      /NEXO_PLUGIN_SANDBOX_REQUIRE="ture"/,
    );
  });

  it('network = "host" needs NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW=1', () => {
    rejectsWith(
      () => resolve({ enabled: true, network: "host" }),
      SandboxHostNetworkError,
      /HOST_NET_ALLOW=1/,
    );
    const allowed = resolve({ enabled: true, network: "host" }, { NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW: "1" });
    assert.ok(allowed.enabled && allowed.policy.network === "host");
  });

  it("defaults: network deny, drop_user true, no binds", () => {
    const decision = resolve({ enabled: true });
    assert.deepEqual(decision, {
      enabled: true,
      bwrapPath: "/usr/bin/bwrap",
      policy: { network: "deny", dropUser: true, readPaths: [], writePaths: [] },
    });
  });
});

describe("bind paths, checked as they will really be mounted", () => {
  it("refuses denylisted paths, and paths that cover one", () => {
    for (const path of ["/root", "/root/.ssh", "/etc", "/", "/proc/sys/kernel", "/var/run/docker.sock"]) {
      rejectsWith(() => resolve({ enabled: true, fs_read_paths: [path] }), SandboxPathError, /denylisted/);
    }
    rejectsWith(() => resolve({ enabled: true, fs_write_paths: ["/boot"] }), SandboxPathError, /denylisted/);
  });

  it("follows symlinks: a link to /root or to /etc is refused by its real path", () => {
    const toRoot = join(dir, "innocent-looking");
    const toEtc = join(dir, "config");
    symlinkSync("/root", toRoot);
    symlinkSync("/etc", toEtc);
    rejectsWith(
      () => resolve({ enabled: true, fs_read_paths: [toRoot] }),
      SandboxPathError,
      /resolves to \/root, which touches the denylisted host path \/root/,
    );
    rejectsWith(
      () => resolve({ enabled: true, fs_read_paths: [`${toEtc}/`] }),
      SandboxPathError,
      /resolves to \/etc, which touches the denylisted host path \/etc\/shadow/,
    );
  });

  it("refuses relative, missing and misplaced-${state_dir} paths", () => {
    rejectsWith(() => resolve({ enabled: true, fs_read_paths: ["etc/ssl"] }), SandboxPathError, /absolute/);
    rejectsWith(
      () => resolve({ enabled: true, fs_read_paths: [join(dir, "missing")] }),
      SandboxPathError,
      /does not exist/,
    );
    rejectsWith(
      () => resolve({ enabled: true, fs_read_paths: ["${state_dir}"] }),
      SandboxPathError,
      /only expanded in fs_write_paths/,
    );
    rejectsWith(
      () => resolve({ enabled: true, fs_write_paths: ["${state_dir}/../escape"] }),
      SandboxPathError,
      /climb out/,
    );
  });

  it("expands ${state_dir}, creates it and its subdirectories, and keeps links from leaving it", () => {
    const decision = resolve({ enabled: true, fs_write_paths: ["${state_dir}", "${state_dir}/cache"] });
    assert.ok(decision.enabled);
    assert.deepEqual(decision.policy.writePaths, [
      { source: stateDir, target: stateDir },
      { source: join(stateDir, "cache"), target: join(stateDir, "cache") },
    ]);
    assert.ok(existsSync(join(stateDir, "cache")));

    const outside = join(dir, "outside");
    mkdirSync(outside);
    symlinkSync(outside, join(stateDir, "sneaky"));
    rejectsWith(
      () => resolve({ enabled: true, fs_write_paths: ["${state_dir}/sneaky"] }),
      SandboxPathError,
      /outside the state dir/,
    );
  });

  it("a state dir may sit beneath a denylisted path (root's home) but never cover one", (t) => {
    if (process.getuid?.() !== 0) {
      t.skip("needs root to create a directory under /root");
      return;
    }
    const underRoot = `/root/.cache/nexo-sandbox-test-${randomUUID()}`;
    try {
      const decision = resolveSandbox(
        { enabled: true, fs_write_paths: ["${state_dir}"] },
        { PATH },
        { stateDir: `${underRoot}/state`, findBwrap: haveBwrap },
      );
      assert.ok(decision.enabled && decision.policy.writePaths[0]?.target === `${underRoot}/state`);
    } finally {
      rmSync(underRoot, { recursive: true, force: true });
    }
    rejectsWith(
      () => resolveSandbox({ enabled: true }, { PATH }, { stateDir: "/etc", findBwrap: haveBwrap }),
      SandboxPathError,
      /would expose the denylisted host path \/etc\/shadow/,
    );
  });
});

describe("no bubblewrap: refuse, never run unsandboxed", () => {
  it("refuses when bwrap is not on PATH, or the injected lookup finds none, or the host is not Linux", () => {
    rejectsWith(
      () => resolveSandbox({ enabled: true }, { PATH: join(dir, "empty-bin") }, { stateDir }),
      SandboxUnavailableError,
      /bwrap \(bubblewrap\) was not found on PATH.*refusing to start it unsandboxed/,
    );
    rejectsWith(() => resolve({ enabled: true }, {}, () => undefined), SandboxUnavailableError, /not found/);
    rejectsWith(
      () =>
        resolveSandbox({ enabled: true }, { PATH }, { stateDir, findBwrap: haveBwrap, platform: "darwin" }),
      SandboxUnavailableError,
      /Linux-only and this host is darwin/,
    );
  });

  it("the supervisor fails the plugin and its command never runs (control: it does run unsandboxed)", async () => {
    const marker = join(dir, `ran-${randomUUID()}`);
    const launch = (sandbox: { enabled: boolean }) =>
      buildLaunchSpec({
        command: process.execPath,
        args: ["-e", `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran")`],
        stateDir,
        sandbox,
        hostEnv: { PATH },
        findBwrap: () => undefined,
      });

    const refused = new Supervisor({ id: "needs-bwrap", spawn: () => launch({ enabled: true }) });
    let spawned = false;
    refused.on("started", () => {
      spawned = true;
    });
    await assert.rejects(refused.start(), (error: unknown) => {
      assert.ok(error instanceof SupervisorFailedError);
      assert.match(error.reason, /cannot be started: the plugin sandbox is enabled but unavailable/);
      return true;
    });
    assert.equal(refused.state, "failed");
    assert.equal(spawned, false);
    assert.equal(existsSync(marker), false);

    const control = new Supervisor({
      id: "unsandboxed",
      spawn: () => launch({ enabled: false }),
      restart: { respawn: false },
    });
    const exited = once(control, "exit");
    await control.start();
    await exited;
    assert.equal(existsSync(marker), true);
  });
});

describe("buildBwrapArgs", () => {
  const policy: SandboxPolicy = {
    network: "deny",
    dropUser: true,
    readPaths: [{ source: "/etc/ssl/certs", target: "/etc/ssl/certs" }],
    writePaths: [{ source: "/data/state/x", target: "/srv/state/x" }],
  };

  it("produces exactly the §2.2 flags in a stable order", () => {
    const args = buildBwrapArgs(policy, {
      commandDirs: ["/usr/local/bin", "/usr/bin"],
      pathExists: (path) => path !== "/lib64",
    });
    assert.deepEqual(args, [
      ...["--die-with-parent", "--unshare-pid", "--unshare-uts", "--unshare-ipc", "--new-session"],
      ...["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"],
      ...["--ro-bind", "/usr", "/usr", "--ro-bind", "/bin", "/bin", "--ro-bind", "/sbin", "/sbin"],
      ...["--ro-bind", "/lib", "/lib", "--ro-bind", "/etc/ssl", "/etc/ssl"],
      ...["--ro-bind", "/usr/local/bin", "/usr/local/bin", "--ro-bind", "/usr/bin", "/usr/bin"],
      "--unshare-net",
      ...["--unshare-user", "--uid", "65534", "--gid", "65534"],
      ...["--ro-bind", "/etc/ssl/certs", "/etc/ssl/certs"],
      ...["--bind", "/data/state/x", "/srv/state/x"],
    ]);
    assert.deepEqual(args.slice(0, 5), [...BWRAP_HARDENING_FLAGS]);
  });

  it("keeps the host network and the user when the policy says so, and binds a skeleton dir once", () => {
    const args = buildBwrapArgs(
      { ...policy, network: "host", dropUser: false },
      { commandDirs: ["/bin"], pathExists: () => true },
    );
    assert.equal(args.includes("--unshare-net"), false);
    assert.equal(args.includes("--unshare-user"), false);
    assert.deepEqual(args.slice(args.indexOf("--cap-drop"), args.indexOf("--cap-drop") + 2), [
      "--cap-drop",
      "ALL",
    ]);
    assert.equal(args.filter((arg) => arg === "/bin").length, 2, "one --ro-bind /bin /bin");
  });

  it("refuses a command directory that would expose a denylisted path", () => {
    rejectsWith(() => buildBwrapArgs(policy, { commandDirs: ["/"] }), SandboxPathError, /denylisted/);
    rejectsWith(() => buildBwrapArgs(policy, { commandDirs: ["/etc"] }), SandboxPathError, /\/etc\/shadow/);
  });
});

describe("buildLaunchSpec", () => {
  it("wraps the resolved command in bwrap, with HOME and TMPDIR that exist inside", () => {
    const spec = buildLaunchSpec({
      command: "node",
      args: ["main.js"],
      pluginDir: dir,
      stateDir,
      sandbox: { enabled: true, fs_write_paths: ["${state_dir}"] },
      hostEnv: { PATH, ANTHROPIC_API_KEY: "secret" },
      findBwrap: haveBwrap,
    });
    const node = realpathSync(process.execPath);
    assert.equal(spec.sandboxed, true);
    assert.equal(spec.command, "/usr/bin/bwrap");
    assert.equal(spec.cwd, dir);
    const separator = spec.args.indexOf("--");
    assert.ok(spec.args.slice(separator + 1).at(-1) === "main.js");
    assert.equal(realpathSync(spec.args[separator + 1]!), node);
    const flags = spec.args.slice(0, separator);
    assert.ok(flags.join(" ").includes(`--ro-bind ${dir} ${dir}`), "the plugin's own directory, read-only");
    assert.ok(flags.join(" ").includes(`--bind ${stateDir} ${stateDir}`));
    assert.equal(spec.env.HOME, stateDir);
    assert.equal(spec.env.TMPDIR, "/tmp");
    assert.equal(spec.env.ANTHROPIC_API_KEY, undefined);

    const withoutState = buildLaunchSpec({
      command: process.execPath,
      stateDir,
      sandbox: { enabled: true },
      hostEnv: { PATH },
      findBwrap: haveBwrap,
    });
    assert.equal(withoutState.env.HOME, "/tmp", "the state dir is not mounted, so HOME cannot be it");
  });
});
