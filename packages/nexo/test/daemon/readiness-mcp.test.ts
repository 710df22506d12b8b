/**
 * Issue 14.6: /readyz reports the MCP servers' real state — a connected server is ready with its
 * tool count, one that cannot start keeps the daemon not ready and says why. A real daemon, the
 * real stdio echo MCP server, and a server whose command does not exist.
 */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { stringify } from "yaml";
import { echoServerConfig } from "../fixtures/mcp-helpers.js";
import { type DaemonDir, startFromDir } from "../helpers/daemon-dir.js";

interface Readyz {
  status: "ready" | "not_ready";
  checks: Array<{ name: string; ready: boolean; detail: string }>;
}

let run: DaemonDir;
before(async () => {
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-readyz-mcp-"));
  run = await startFromDir({
    "daemon.yaml": `state_dir: ${stateDir}\nhttp: { bind: "127.0.0.1:0" }\n`,
    "agents.yaml": "agents:\n  - id: ana\n    model: { provider: scripted, model: demo }\n",
    "mcp.yaml": stringify({
      servers: {
        echo: echoServerConfig(),
        broken: { transport: "stdio", command: "/nonexistent/mcp-server", restart: { max_restarts: 0 } },
      },
    }),
  });
});
after(() => run.daemon.stop("test over"));

describe("/readyz and MCP servers", () => {
  it("shows each server's state; a failed one keeps the daemon not ready", { timeout: 60_000 }, async () => {
    const url = `${run.daemon.summary().http}/readyz`;
    let report: { status: number; body: Readyz } | undefined;
    for (const deadline = Date.now() + 45_000; report === undefined && Date.now() < deadline; ) {
      const res = await fetch(url);
      const body = (await res.json()) as Readyz;
      const echo = body.checks.find((c) => c.name === "mcp:echo");
      const broken = body.checks.find((c) => c.name === "mcp:broken");
      if (echo?.ready && broken?.detail.startsWith("failed")) report = { status: res.status, body };
      else await sleep(100);
    }
    assert.ok(report, "both MCP servers settle");
    assert.equal(report.status, 503);
    assert.equal(report.body.status, "not_ready");
    assert.match(report.body.checks.find((c) => c.name === "mcp:echo")!.detail, /^connected \(\d+ tools\)$/);
    assert.match(report.body.checks.find((c) => c.name === "mcp:broken")!.detail, /^failed \(.+\)$/);
  });
});
