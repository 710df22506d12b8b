/**
 * The TypeScript examples ship compiled: each runs as one plain `node dist/plugin.js` process,
 * through the daemon's own plugin host, with no loader and no helper process beside it (under the
 * TypeScript loader a cold start spawned esbuild's service as a grandchild, and two such were once
 * left behind after a SIGTERM). A fresh TMPDIR per plugin makes every start a cold one. And
 * `nexo plugin check` passes on each.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { PluginHost } from "../../../packages/nexo/src/extensions/plugins/host.js";
import { loadPluginManifest } from "../../../packages/nexo/src/extensions/plugins/manifest.js";
import { lineageOf } from "../../../packages/nexo/src/process/lineage.js";
import { ProcessGroupRegistry } from "../../../packages/nexo/src/process/registry.js";
import { exampleDir } from "../test-helpers/plugin-process.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "nexo-compiled-examples-"));
after(() => rmSync(root, { recursive: true, force: true }));

const EXAMPLES = ["demo-tools", "loopback-channel", "pii-redactor"];

describe("the TypeScript example plugins, compiled", () => {
  for (const name of EXAMPLES) {
    it(`${name} runs as one plain node process with nothing beside it, and leaves nothing when stopped`, async () => {
      const manifest = await loadPluginManifest(exampleDir(name));
      assert.deepEqual(manifest.entrypoint.args, ["dist/plugin.js"], "no loader on the command line");
      const groups = new ProcessGroupRegistry();
      const host = new PluginHost({
        manifest,
        stateDir: mkdtempSync(join(root, `${name}-state-`)),
        env: {
          PATH: process.env.PATH,
          TMPDIR: mkdtempSync(join(root, `${name}-tmp-`)),
          // The 5 s default initialize bound was missed at load 40.
          NEXO_PLUGIN_INIT_TIMEOUT_MS: "30000",
        },
        processGroups: groups,
        shutdownTimeoutMs: 2_000,
      });
      try {
        const session = await host.start();
        const lineage = lineageOf([{ pgid: session.pid }])?.map((stat) => stat.pid);
        assert.deepEqual(lineage, [session.pid], "the plugin has no helper process");
        await host.stop("test over");
        assert.deepEqual(lineageOf([{ pgid: session.pid }]), []);
        assert.equal(host.status().lastExit?.signal, null, "it exited by itself after shutdown");
      } finally {
        await host.stop("test over");
        groups.killAll();
      }
    });
  }

  it("nexo plugin check passes on each", async () => {
    for (const name of EXAMPLES) {
      const run = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [
            "--conditions=@nexo/source",
            "--import",
            "tsx",
            "packages/nexo/src/cli/main.ts",
            "plugin",
            "check",
            exampleDir(name),
          ],
          {
            cwd: REPO,
            env: { PATH: process.env.PATH, NEXO_LOG: "silent" },
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        let stdout = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code, stdout }));
      });
      assert.equal(run.code, 0, `${name}: ${run.stdout}`);
      assert.match(run.stdout, /plugin check: passed/);
    }
  });
});
