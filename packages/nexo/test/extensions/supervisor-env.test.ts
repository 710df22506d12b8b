/**
 * A child's environment holds only what was granted: the safe base, the manifest's and the
 * operator's variables, passthrough names, and the daemon's NEXO_* variables — never the daemon's
 * secrets. Checked on the built object and from inside a real child process.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { buildChildEnv, ChildEnvError, FALLBACK_PATH } from "../../src/extensions/env.js";
import { buildLaunchSpec } from "../../src/extensions/launch.js";
import { Supervisor } from "../../src/extensions/supervisor.js";
import { fixture } from "../fixtures/processes.js";

const hostEnv = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: "/root",
  LANG: "C.UTF-8",
  TZ: "Europe/Madrid",
  TMPDIR: "/var/tmp",
  ANTHROPIC_API_KEY: "sk-ant-secret",
  OPENAI_API_KEY: "sk-secret",
  DATABASE_URL: "postgres://u:p@db/x",
  NEXO_HOME: "/root/.nexo",
  SHARED_SETTING: "shared",
};

describe("buildChildEnv", () => {
  it("starts from nothing and adds only the safe base", () => {
    const env = buildChildEnv({ stateDir: "/state/p", hostEnv });
    assert.deepEqual(env, {
      PATH: hostEnv.PATH,
      HOME: "/state/p",
      TMPDIR: "/var/tmp",
      LANG: "C.UTF-8",
      TZ: "Europe/Madrid",
    });
  });

  it("falls back to a minimal PATH and /tmp when the daemon has neither", () => {
    const env = buildChildEnv({ stateDir: "/state/p", hostEnv: {} });
    assert.deepEqual(env, { PATH: FALLBACK_PATH, HOME: "/state/p", TMPDIR: "/tmp" });
  });

  it("layers passthrough, manifest, operator and daemon variables, the operator over the manifest", () => {
    const env = buildChildEnv({
      stateDir: "/state/p",
      hostEnv,
      passthrough: ["SHARED_SETTING", "NOT_SET_ANYWHERE"],
      manifestEnv: { RUST_LOG: "info", LEVEL: "manifest" },
      operatorEnv: { LEVEL: "operator", EXTRA: "1" },
      nexoVars: { NEXO_PLUGIN_ID: "slack", NEXO_STATE_DIR: "/state/p" },
    });
    assert.equal(env.SHARED_SETTING, "shared");
    assert.equal("NOT_SET_ANYWHERE" in env, false);
    assert.equal(env.RUST_LOG, "info");
    assert.equal(env.LEVEL, "operator");
    assert.equal(env.EXTRA, "1");
    assert.equal(env.NEXO_PLUGIN_ID, "slack");
    assert.equal(env.NEXO_STATE_DIR, "/state/p");
    for (const secret of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DATABASE_URL", "NEXO_HOME"]) {
      assert.equal(secret in env, false, `${secret} leaked`);
    }
  });

  it("refuses NEXO_* keys from the manifest, the operator and passthrough, naming the source", () => {
    const cases = [
      { input: { manifestEnv: { NEXO_PLUGIN_ID: "other" } }, source: "manifest", key: "NEXO_PLUGIN_ID" },
      { input: { operatorEnv: { NEXO_LOG: "debug" } }, source: "operator", key: "NEXO_LOG" },
      { input: { passthrough: ["NEXO_HOME"] }, source: "passthrough", key: "NEXO_HOME" },
    ];
    for (const { input, source, key } of cases) {
      assert.throws(
        () => buildChildEnv({ stateDir: "/s", hostEnv, ...input }),
        (error: unknown) =>
          error instanceof ChildEnvError &&
          error.source === source &&
          error.key === key &&
          /reserved/.test(error.message),
      );
    }
  });

  it("refuses daemon variables outside NEXO_*, unusable names, NUL values and a relative HOME", () => {
    assert.throws(() => buildChildEnv({ stateDir: "/s", nexoVars: { PLUGIN_ID: "x" } }), ChildEnvError);
    assert.throws(() => buildChildEnv({ stateDir: "/s", manifestEnv: { "A=B": "x" } }), ChildEnvError);
    assert.throws(() => buildChildEnv({ stateDir: "/s", operatorEnv: { A: "x\0y" } }), ChildEnvError);
    assert.throws(() => buildChildEnv({ stateDir: "relative/dir" }), /absolute/);
  });
});

describe("a real child's environment", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "nexo-supervisor-env-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("contains exactly the granted variables, and no secret of the daemon's", async () => {
    process.env.ANTHROPIC_API_KEY = "sk-ant-must-not-leak";
    process.env.NEXO_TEST_DAEMON_ONLY = "daemon-only";
    try {
      const stateDir = join(dir, "state");
      const spec = buildLaunchSpec({
        command: process.execPath,
        args: [fixture("print-env.mjs")],
        stateDir,
        env: {
          manifestEnv: { RUST_LOG: "info" },
          operatorEnv: { GREETING: "hello" },
          nexoVars: { NEXO_PLUGIN_ID: "envcheck", NEXO_STATE_DIR: stateDir },
        },
      });
      assert.equal(spec.sandboxed, false);
      const seen = new Promise<Record<string, string>>((resolve) => {
        const supervisor = new Supervisor({
          id: "envcheck",
          spawn: spec,
          onStarted: async (incarnation) => {
            const [chunk] = (await once(incarnation.stdout, "data")) as [Buffer];
            resolve(JSON.parse(chunk.toString("utf8")) as Record<string, string>);
          },
        });
        void supervisor.start().then(() => supervisor.stop());
      });
      const childEnv = await seen;
      assert.equal(childEnv.ANTHROPIC_API_KEY, undefined);
      assert.equal(childEnv.NEXO_TEST_DAEMON_ONLY, undefined);
      const expectedKeys = [
        "GREETING",
        "HOME",
        "NEXO_PLUGIN_ID",
        "NEXO_PROCESS_TAG",
        "NEXO_STATE_DIR",
        "PATH",
        "RUST_LOG",
        "TMPDIR",
      ];
      for (const optional of ["LANG", "LC_ALL", "TZ"]) if (process.env[optional]) expectedKeys.push(optional);
      assert.deepEqual(Object.keys(childEnv).sort(), expectedKeys.sort());
      assert.equal(childEnv.HOME, stateDir);
      assert.equal(childEnv.GREETING, "hello");
      // Added by the supervisor to every child: how its lineage is found (process/lineage.ts).
      assert.match(childEnv.NEXO_PROCESS_TAG ?? "", /^[0-9a-f]{12}\.\d+$/);
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
      delete process.env.NEXO_TEST_DAEMON_ONLY;
    }
  });
});
