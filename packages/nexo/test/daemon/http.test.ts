/**
 * The health listener from the attacker's side: a non-loopback bind without a token is refused,
 * every path needs the exact bearer token, the token comparison is constant-time (a unit test of
 * the compare function), and /readyz follows real state — a real LocalBroker and a real plugin
 * that is killed, restarts, and then loses its broker.
 */
import assert from "node:assert/strict";
import crypto from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, describe, it, mock } from "node:test";
import { Gauge } from "prom-client";
import { LocalBroker } from "../../src/broker/local.js";
import {
  type HealthServer,
  HealthServerError,
  type HealthServerOptions,
  startHealthServer,
} from "../../src/daemon/http.js";
import { bearerToken, constantTimeEqual, tokenProblem } from "../../src/daemon/http-auth.js";
import { Metrics } from "../../src/daemon/metrics.js";
import { daemonReadiness } from "../../src/daemon/readiness.js";
import { PluginManager } from "../../src/extensions/plugins/index.js";
import { ProcessGroupRegistry } from "../../src/extensions/reaper.js";
import { baseEnv, pluginDir } from "../fixtures/plugins/harness.js";
import { recordingLogger, waitUntil } from "../fixtures/processes.js";

const TOKEN = "s3cret-token-0123456789abcdef";
const root = mkdtempSync(join(tmpdir(), "nexo-health-"));
after(() => rmSync(root, { recursive: true, force: true }));

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function broker(): LocalBroker {
  const made = new LocalBroker({ logger: recordingLogger() as never });
  cleanups.push(() => made.close({ drainTimeoutMs: 0 }));
  return made;
}

async function serve(options: Partial<HealthServerOptions> = {}): Promise<HealthServer> {
  const server = await startHealthServer({
    port: 0,
    metrics: new Metrics({ processMetrics: false }),
    readiness: daemonReadiness({ broker: broker() }),
    logger: recordingLogger(),
    ...options,
  });
  cleanups.push(() => server.close());
  return server;
}

async function get(
  server: HealthServer,
  path: string,
  init: { method?: string; authorization?: string; host?: string } = {},
): Promise<{ status: number; body: string; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (init.authorization !== undefined) headers.authorization = init.authorization;
  const base = init.host === undefined ? server.url : `http://${init.host}:${server.port}`;
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? "GET",
    headers,
  });
  return { status: response.status, body: await response.text(), headers: response.headers };
}

async function refusedToStart(options: Partial<HealthServerOptions>): Promise<HealthServerError> {
  try {
    await serve(options);
  } catch (error) {
    assert.ok(error instanceof HealthServerError, `expected a HealthServerError, got ${String(error)}`);
    return error;
  }
  assert.fail("the health server started");
}

describe("health listener without a token, on loopback", () => {
  it("defaults to 127.0.0.1 and serves /healthz, /readyz and /metrics to GET only", async () => {
    const metrics = new Metrics({ processMetrics: false });
    metrics.turnFinished("ana", "completed", 0.4);
    const server = await serve({ metrics });
    assert.equal(server.host, "127.0.0.1");

    const health = await get(server, "/healthz");
    assert.equal(health.status, 200);
    assert.equal(health.body, "ok\n");
    assert.equal(health.headers.get("cache-control"), "no-store");

    const scraped = await get(server, "/metrics?x=1");
    assert.equal(scraped.status, 200);
    assert.match(scraped.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    assert.match(scraped.body, /^nexo_turns_total\{agent="ana",outcome="completed"\} 1$/m);

    assert.equal((await get(server, "/readyz")).status, 200);
    assert.equal((await get(server, "/")).status, 404);
    assert.equal((await get(server, "/healthz/")).status, 404);
    for (const method of ["POST", "PUT", "DELETE", "HEAD"]) {
      const response = await get(server, "/healthz", { method });
      assert.equal(response.status, 405, method);
      assert.equal(response.headers.get("allow"), "GET");
    }
  });

  it("refuses to bind a non-loopback address without a token", async () => {
    // A host name other than localhost may resolve to any interface, so it counts as exposed.
    for (const host of ["0.0.0.0", "::", "[::]", "10.1.2.3", "::ffff:10.0.0.1", "nexo-health.example"]) {
      const error = await refusedToStart({ host });
      assert.equal(error.code, "token_required", host);
      assert.match(error.message, /token/);
    }
    // Loopback in any spelling needs none.
    for (const host of ["localhost", "LOCALHOST", "127.0.0.2", "::1", "[::1]", "::ffff:127.0.0.1"]) {
      const server = await serve({ host });
      assert.equal((await get(server, "/healthz")).status, 200, host);
    }
    assert.equal(
      (await serve({ host: "localhost" })).host,
      "127.0.0.1",
      "localhost is not left to the resolver",
    );
  });

  it("refuses empty hosts, bad ports, weak tokens and ports in use, each with its own code", async () => {
    assert.equal((await refusedToStart({ host: "" })).code, "invalid_bind");
    assert.equal((await refusedToStart({ port: 70_000 })).code, "invalid_bind");
    assert.equal((await refusedToStart({ port: 1.5 })).code, "invalid_bind");
    assert.equal((await refusedToStart({ host: "0.0.0.0", token: "short" })).code, "weak_token");
    assert.equal((await refusedToStart({ token: "has a space in it, long enough" })).code, "weak_token");

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => taken.close(resolve)));
    const port = (taken.address() as { port: number }).port;
    const error = await refusedToStart({ port });
    assert.equal(error.code, "listen_failed");
    assert.match(error.message, /EADDRINUSE/);
  });
});

describe("health listener with a bearer token", () => {
  it("binds 0.0.0.0 only with a token, and then refuses every request without the exact token", async () => {
    const server = await serve({ host: "0.0.0.0", token: TOKEN });
    const wrong = [
      undefined,
      "",
      "Bearer",
      "Bearer ",
      `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}`,
      `Token ${TOKEN}`,
      `Bearer ${TOKEN.slice(0, -1)}`, // a prefix
      `Bearer ${TOKEN.slice(0, 8)}`,
      `Bearer ${TOKEN}x`, // longer
      `Bearer ${TOKEN.slice(0, -1)}F`, // same length, last character differs
      `Bearer ${TOKEN.toUpperCase()}`,
      `Bearer ${TOKEN} ${TOKEN}`,
      TOKEN,
    ];
    for (const authorization of wrong) {
      for (const path of ["/healthz", "/readyz", "/metrics", "/nope"]) {
        const response = await get(server, path, {
          host: "127.0.0.1",
          ...(authorization === undefined ? {} : { authorization }),
        });
        assert.equal(response.status, 401, `${path} with ${JSON.stringify(authorization)}`);
        assert.equal(response.body, "", "a 401 carries no detail");
        assert.equal(response.headers.get("www-authenticate"), "Bearer");
      }
    }
    // The method check comes after authentication, so it reveals nothing either.
    assert.equal((await get(server, "/healthz", { host: "127.0.0.1", method: "POST" })).status, 401);

    for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `Bearer  ${TOKEN}`]) {
      for (const path of ["/healthz", "/readyz", "/metrics"]) {
        const response = await get(server, path, { host: "127.0.0.1", authorization });
        assert.equal(response.status, 200, `${path} with ${authorization}`);
      }
    }
    assert.equal(
      (await get(server, "/nope", { host: "127.0.0.1", authorization: `Bearer ${TOKEN}` })).status,
      404,
    );
  });

  it("on loopback with a token, the token is still required", async () => {
    const server = await serve({ token: TOKEN });
    assert.equal((await get(server, "/healthz")).status, 401);
    assert.equal((await get(server, "/healthz", { authorization: `Bearer ${TOKEN}` })).status, 200);
  });
});

describe("token comparison", () => {
  it("accepts exactly the token and nothing else", () => {
    assert.ok(constantTimeEqual(TOKEN, TOKEN));
    for (const other of [
      "",
      TOKEN.slice(0, -1),
      `${TOKEN}x`,
      `x${TOKEN}`,
      TOKEN.toUpperCase(),
      `${TOKEN}\0`,
    ]) {
      assert.ok(!constantTimeEqual(other, TOKEN), JSON.stringify(other));
    }
  });

  it("always compares two equal-length digests with crypto.timingSafeEqual, whatever the lengths", () => {
    const spy = mock.method(crypto, "timingSafeEqual");
    // Propagates the mock to the named import the module under test holds.
    syncBuiltinESMExports();
    try {
      for (const presented of ["", "a", TOKEN.slice(0, 3), TOKEN, `${TOKEN}${"x".repeat(1000)}`]) {
        constantTimeEqual(presented, TOKEN);
      }
      assert.equal(spy.mock.callCount(), 5);
      for (const call of spy.mock.calls) {
        const [a, b] = call.arguments as [Buffer, Buffer];
        assert.equal(a.length, 32);
        assert.equal(b.length, 32);
      }
    } finally {
      spy.mock.restore();
      syncBuiltinESMExports();
    }
  });

  it("parses the bearer scheme and vets tokens", () => {
    assert.equal(bearerToken(`Bearer ${TOKEN}`), TOKEN);
    assert.equal(bearerToken(`BEARER ${TOKEN}`), TOKEN);
    assert.equal(bearerToken("Bearer"), undefined);
    assert.equal(bearerToken(`Bearer a b`), undefined);
    assert.equal(bearerToken(undefined), undefined);
    assert.equal(tokenProblem(TOKEN), undefined);
    assert.match(tokenProblem("abc") ?? "", /at least 16/);
    assert.match(tokenProblem("ünïcödé-token-long-enough") ?? "", /ASCII/);
    assert.match(tokenProblem("tab\tinside-a-long-token") ?? "", /ASCII/);
  });
});

describe("/readyz follows the real state of the broker and the plugins", () => {
  it("goes 503 while a plugin is down, 200 once it is back, 503 when the broker closes", async () => {
    const localBroker = broker();
    const groups = new ProcessGroupRegistry();
    const manager = new PluginManager({
      plugins: [pluginDir("minimal")],
      stateRoot: join(root, "plugins"),
      env: baseEnv(),
      broker: localBroker,
      logger: recordingLogger(),
      processGroups: groups,
      shutdownTimeoutMs: 1_000,
      // A restart slow enough to observe the plugin down; the fixture's manifest leaves respawn off.
      restart: { respawn: true, initialDelayMs: 600, jitter: 0 },
    });
    cleanups.push(async () => {
      await manager.stop();
      groups.killAll("SIGKILL");
    });
    const server = await serve({ readiness: daemonReadiness({ broker: localBroker, plugins: manager }) });
    const readyz = async () => {
      const response = await get(server, "/readyz");
      return { status: response.status, body: JSON.parse(response.body) as Record<string, unknown> };
    };

    await manager.start();
    let probe = await readyz();
    assert.equal(probe.status, 200);
    assert.deepEqual(
      (probe.body.checks as Array<{ name: string; ready: boolean }>).map((c) => [c.name, c.ready]),
      [
        ["broker", true],
        ["plugin:minimal", true],
      ],
    );

    const pid = manager.status()[0]?.pid;
    assert.ok(pid !== undefined);
    process.kill(pid, "SIGKILL");
    await waitUntil(() => manager.status()[0]?.state === "backoff", 3_000, "the plugin to be in backoff");
    probe = await readyz();
    assert.equal(probe.status, 503);
    assert.equal(probe.body.status, "not_ready");
    assert.deepEqual(probe.body.not_ready, [
      {
        name: "plugin:minimal",
        ready: false,
        detail: (probe.body.not_ready as Array<{ detail: string }>)[0]!.detail,
      },
    ]);
    assert.match((probe.body.not_ready as Array<{ detail: string }>)[0]!.detail, /^backoff/);

    await waitUntil(() => manager.status()[0]?.state === "running", 5_000, "the plugin to restart");
    probe = await readyz();
    assert.equal(probe.status, 200);
    assert.equal(probe.body.status, "ready");

    await localBroker.close();
    probe = await readyz();
    assert.equal(probe.status, 503);
    assert.deepEqual(
      (probe.body.not_ready as Array<{ name: string }>).map((c) => c.name),
      ["broker"],
    );
  });

  it("a /metrics scrape that fails is a bare 500, logged, and the listener keeps serving", async () => {
    const metrics = new Metrics({ processMetrics: false });
    new Gauge({
      name: "broken_collector",
      help: "A collector that fails, as a metric with a bug would.",
      registers: [metrics.registry],
      collect() {
        throw new Error("secret detail");
      },
    });
    const logger = recordingLogger();
    const server = await serve({ metrics, logger });
    const response = await get(server, "/metrics");
    assert.equal(response.status, 500);
    assert.equal(response.body, "");
    assert.ok(logger.entries.some((entry) => entry.level === "error" && entry.fields.path === "/metrics"));
    assert.equal((await get(server, "/healthz")).status, 200);
  });

  it("a readiness check that throws is reported as not ready, not as a crash", async () => {
    const server = await serve({
      readiness: () => {
        throw new Error("boom");
      },
    });
    const response = await get(server, "/readyz");
    assert.equal(response.status, 503);
    assert.doesNotMatch(response.body, /boom/);
  });
});
