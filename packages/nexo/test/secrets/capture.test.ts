/**
 * Secrets taken out of the environment at start-up, checked from the attacker's side: another
 * process (this test, and a command the process itself runs) reads /proc/<pid>/environ.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { captureSecrets } from "../../src/secrets/index.js";

const FIXTURE = fileURLToPath(new URL("../fixtures/secrets-capture.ts", import.meta.url));
const SECRET = "nexo-test-secret-value-7f3kQ92LmZp0";

describe("captureSecrets", () => {
  it("keeps the secret in the view only: not in process.env, not in /proc/<pid>/environ", async (t) => {
    if (process.platform !== "linux") return t.skip("/proc/<pid>/environ is Linux's");
    const child = spawn(process.execPath, ["--conditions=@nexo/source", "--import", "tsx", FIXTURE], {
      env: { ...process.env, NEXO_TEST_API_KEY: SECRET, NEXO_TEST_PLAIN: "plain-value" },
      stdio: ["pipe", "pipe", "inherit"],
    });
    try {
      let line = "";
      child.stdout!.setEncoding("utf8");
      for await (const chunk of child.stdout!) {
        line += chunk;
        if (line.includes("\n")) break;
      }
      const report = JSON.parse(line) as {
        pid: number;
        captured: string[];
        warning: string | null;
        view: string | null;
        processEnv: string | null;
        plain: string | null;
        selfEnviron: string[];
        childSaw: string[];
      };
      assert.equal(report.warning, null);
      assert.ok(report.captured.includes("NEXO_TEST_API_KEY"));
      assert.equal(report.view, SECRET, "the start-up view keeps the secret for ${VAR} substitution");
      assert.equal(report.processEnv, null);
      assert.equal(report.plain, "plain-value");
      // What other processes read: the process itself, a command it ran, and this test from outside.
      const outside = readFileSync(`/proc/${report.pid}/environ`, "latin1").split("\0");
      for (const [who, entries] of [
        ["/proc/self/environ", report.selfEnviron],
        ["a child's /proc/$PPID/environ", report.childSaw],
        ["another process's /proc/<pid>/environ", outside],
      ] as const) {
        assert.ok(!entries.some((entry) => entry.includes(SECRET)), `${who} shows the secret`);
        assert.ok(
          entries.includes("NEXO_TEST_PLAIN=plain-value"),
          `${who} was not read: ${entries.length} entries`,
        );
      }
    } finally {
      child.stdin!.end();
      await once(child, "exit");
    }
  });

  it("on an environment object other than process.env, only that object changes", () => {
    const env: NodeJS.ProcessEnv = { PATH: "/bin", DB_PASSWORD: "pw-123456789", OTHER: "x" };
    const captured = captureSecrets(env);
    assert.deepEqual(captured.captured, ["DB_PASSWORD"]);
    assert.deepEqual(env, { PATH: "/bin", OTHER: "x" });
    assert.equal(captured.env.DB_PASSWORD, "pw-123456789");
    assert.equal(captured.warning, undefined);
  });
});
