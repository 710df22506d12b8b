/**
 * The daemon's components against real parts: the boot order and its reverse at shutdown, seen in
 * the daemon's own log; the health listener answering during and after boot; and a component that
 * fails mid-boot (the broker, pointed at a NATS port nobody listens on) stopping the ones started
 * before it, newest first, releasing the lock and the health port.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Daemon, type DaemonSpec } from "../../../src/daemon/daemon.js";
import { ComponentStartError } from "../../../src/daemon/lifecycle.js";
import { isGone } from "../../fixtures/processes.js";
import { SLOW_MACHINE_INIT_MS } from "../../helpers/daemon-dir.js";
import { captureLog } from "../../helpers/log-capture.js";
import { endpoint, say } from "../../helpers/loopback.js";

const examples = fileURLToPath(new URL("../../../../../examples/plugins/", import.meta.url));

/** A TCP port that was free a moment ago and has nobody listening on it now. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function spec(logger: DaemonSpec["logger"], extra: Partial<DaemonSpec> = {}): DaemonSpec {
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-compose-"));
  return {
    stateDir,
    agents: [
      {
        id: "assistant",
        active: true,
        provider: "scripted",
        model: "nexo-scripted-demo",
        maxTokens: 1024,
        maxTurns: 4,
        workspace: mkdtempSync(join(tmpdir(), "nexo-compose-ws-")),
        mode: "default",
        allow: ["info"],
        bindings: [{ plugin: "loopback" }],
        queueCap: 8,
      },
    ],
    llm: { providers: {}, tenants: {} },
    broker: { type: "local" },
    plugins: { dirs: [join(examples, "loopback-channel")], settings: {} },
    env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    logger,
    shutdownGraceMs: 2000,
    http: { host: "127.0.0.1", port: 0 },
    ...extra,
  };
}

const componentEvents = (messages: Array<Record<string, unknown>>, msg: string) =>
  messages.filter((line) => line.msg === msg).map((line) => line.component as string);

describe("the daemon's components", () => {
  it("start in boot order, serve, and stop in exactly the reverse order", async () => {
    const log = captureLog();
    const daemon = await Daemon.start(spec(log.logger));
    const order = [
      "state-lock",
      "http",
      "store",
      "broker",
      "plugins",
      "microapps",
      "mcp",
      "routing",
      "channels",
    ];
    let stopped = false;
    try {
      assert.deepEqual(daemon.components, order);
      assert.deepEqual(componentEvents(log.lines(), "component started"), order);
      const messages = log.messages();
      const ready = messages.findIndex((m) => m.startsWith("nexo daemon ready"));
      assert.ok(ready > messages.indexOf("health and metrics listening"), "ready comes after the listener");
      assert.equal(messages.filter((m) => m.startsWith("nexo daemon ready")).length, 1);

      const url = daemon.summary().http!;
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const readyz = await fetch(`${url}/readyz`);
      assert.equal(readyz.status, 200);
      const body = (await readyz.json()) as {
        checks: Array<{ name: string; ready: boolean; detail: string }>;
      };
      assert.deepEqual(
        body.checks.find((check) => check.name === "daemon"),
        { name: "daemon", ready: true, detail: "running" },
      );
      assert.match(await say(await endpoint(daemon.spec.stateDir), "ann", "hello"), /demo model/i);

      const pid = daemon.plugins.status()[0]!.pid!;
      const lockFile = join(daemon.spec.stateDir, "daemon.lock");
      assert.ok(existsSync(lockFile));
      await daemon.stop("test over");
      stopped = true;
      assert.deepEqual(componentEvents(log.lines(), "component stopped"), [...order].reverse());
      assert.ok(isGone(pid), "the plugin process is gone");
      assert.equal(existsSync(lockFile), false, "the lock is released");
      await assert.rejects(fetch(`${url}/healthz`), "the health listener is closed");
    } finally {
      if (!stopped) await daemon.stop("test failed");
    }
  });

  it("a component failing mid-boot stops the ones before it, newest first, and is named", async () => {
    const log = captureLog();
    const failing = spec(log.logger, {
      broker: { type: "nats", url: `nats://127.0.0.1:${await closedPort()}` },
    });
    const error = await Daemon.start(failing).then(
      () => assert.fail("the daemon should not have started"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ComponentStartError, String(error));
    assert.equal(error.component, "broker");
    assert.match(error.message, /^could not start broker: cannot connect to NATS/);
    assert.deepEqual(componentEvents(log.lines(), "component started"), ["state-lock", "http", "store"]);
    assert.deepEqual(componentEvents(log.lines(), "component stopped"), ["store", "http", "state-lock"]);
    assert.equal(
      log.messages().some((m) => m.startsWith("nexo daemon ready")),
      false,
    );
    assert.equal(existsSync(join(failing.stateDir, "daemon.lock")), false, "the lock is released");
    assert.equal(existsSync(join(failing.stateDir, "plugins", "loopback")), false, "no plugin was started");
    // The state dir can be used again at once: nothing holds it.
    const again = await Daemon.start({ ...failing, broker: { type: "local" } });
    await again.stop("test over");
  });

  it("the health port taken: nothing else starts, and the error says how to fix it", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const { port } = holder.address() as { port: number };
    try {
      const log = captureLog();
      const taken = spec(log.logger, { http: { host: "127.0.0.1", port } });
      const error = await Daemon.start(taken).then(
        () => assert.fail("the daemon should not have started"),
        (e: unknown) => e,
      );
      assert.ok(error instanceof ComponentStartError);
      assert.equal(error.component, "http");
      assert.match(error.message, /cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/);
      assert.match(error.message, /http: \{ bind: 127\.0\.0\.1:0 \}/);
      assert.deepEqual(componentEvents(log.lines(), "component stopped"), ["state-lock"]);
      assert.equal(existsSync(join(taken.stateDir, "daemon.lock")), false);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
