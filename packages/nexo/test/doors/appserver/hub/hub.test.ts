/**
 * `nexo hub` as DotCraft Desktop's local mode drives it: find the hub through
 * `~/.craft/hub/hub.lock` (HOME is a fresh directory here), check it with the open
 * `GET /v1/status`, then `POST /v1/appservers/ensure` with the bearer token and connect to the
 * returned WebSocket. Starting, reusing, a canonical path, two concurrent ensures, a stale and a
 * live workspace lock, the errors, the event stream, restart, the health loop (every 300 ms here),
 * a second hub, and a stop that leaves no server behind.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { AppServerProcess, upgradeStatus, WsClient } from "../../../helpers/appserver-client.js";
import { CLI_PATH, runCli } from "../../../helpers/cli.js";

const WAIT_MS = 20_000;
const home = mkdtempSync(join(tmpdir(), "nexo-hub-home-"));
const stateDir = mkdtempSync(join(tmpdir(), "nexo-hub-state-"));
const env = {
  PATH: process.env.PATH,
  HOME: home,
  NEXO_STATE_DIR: stateDir,
  NEXO_LOG: "warn",
  NEXO_HUB_HEALTH_MS: "300",
};
const lockPath = join(home, ".craft", "hub", "hub.lock");
let hub: ChildProcess;
let hubExited: Promise<number | null>;
let hubStderr = "";
let info: { pid: number; apiBaseUrl: string; token: string; startedAt: string; version: string };

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; hub stderr: ${hubStderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function api(path: string, init: { method?: string; body?: unknown; token?: string | null } = {}) {
  const token = init.token === undefined ? info.token : init.token;
  const response = await fetch(`${info.apiBaseUrl}${path}`, {
    method: init.method ?? "GET",
    headers: {
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    ...(init.body === undefined
      ? {}
      : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: replies of several shapes (server, status, error), checked field by field below
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

interface HubEvent {
  kind: string;
  at: string;
  workspacePath: string | null;
  data: Record<string, unknown>;
}

/** `GET /v1/events` read as DotCraft Desktop reads it: split on blank lines, parse the data: line. */
async function subscribe(): Promise<{
  events: HubEvent[];
  next: (kind: string, ws: string) => Promise<HubEvent>;
  close: () => void;
}> {
  const abort = new AbortController();
  const response = await fetch(`${info.apiBaseUrl}/v1/events`, {
    headers: { authorization: `Bearer ${info.token}` },
    signal: abort.signal,
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  const events: HubEvent[] = [];
  let seen = 0;
  void (async () => {
    let buffer = "";
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split("\n").find((line) => line.startsWith("data:"));
          if (data !== undefined) events.push(JSON.parse(data.slice(5)) as HubEvent);
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    events,
    /** The next event of `kind` for `ws` after the last one returned. */
    next: (kind, ws) =>
      until(`event ${kind}`, () => {
        const at = events.findIndex((e, i) => i >= seen && e.kind === kind && e.workspacePath === ws);
        if (at === -1) return undefined;
        seen = at + 1;
        return events[at];
      }),
    close: () => abort.abort(),
  };
}

const ensure = (workspacePath: string) =>
  api("/v1/appservers/ensure", { method: "POST", body: { workspacePath } });
const workspace = () => mkdtempSync(join(tmpdir(), "nexo-hub-ws-"));

before(async () => {
  hub = spawn(process.execPath, [CLI_PATH, "hub"], { env, stdio: ["ignore", "ignore", "pipe"] });
  hub.stderr!.setEncoding("utf8").on("data", (text: string) => {
    hubStderr += text;
  });
  hubExited = new Promise((resolve) => hub.once("close", (code) => resolve(code)));
  info = await until("hub.lock", () =>
    existsSync(lockPath) ? JSON.parse(readFileSync(lockPath, "utf8")) : undefined,
  );
});
after(async () => {
  if (hub.exitCode === null) hub.kill("SIGKILL");
  await hubExited;
});

describe("nexo hub", () => {
  test("hub.lock says where the hub is, readable by its owner only; /v1/status is open", async () => {
    assert.equal(info.pid, hub.pid);
    assert.match(info.apiBaseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(info.token.length >= 32);
    assert.equal(statSync(lockPath).mode & 0o777, 0o600);
    const status = await api("/v1/status", { token: null });
    assert.equal(status.status, 200);
    assert.equal(status.body.pid, hub.pid);
    assert.equal(status.body.capabilities.appServerManagement, true);
  });

  test("no or a wrong token is 401 unauthorized; bad requests are typed", async () => {
    const ws = workspace();
    for (const token of [null, "wrong", `${info.token}x`]) {
      const reply = await api("/v1/appservers/ensure", {
        method: "POST",
        body: { workspacePath: ws },
        token,
      });
      assert.equal(reply.status, 401);
      assert.equal(reply.body.error.code, "unauthorized");
    }
    const missing = await ensure(join(ws, "nope"));
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, "workspaceNotFound");
    const garbage = await api("/v1/appservers/ensure", { method: "POST", body: "{not json" });
    assert.equal(garbage.status, 400);
    assert.equal(garbage.body.error.code, "invalidRequest");
    assert.equal(
      (await api("/v1/appservers/ensure", { method: "POST", body: {} })).body.error.code,
      "invalidRequest",
    );
    assert.equal((await api("/v1/nothing")).status, 404);
    assert.equal(existsSync(join(ws, ".nexo")), false, "nothing was started");
  });

  test("ensure starts a server a client can use, and reuses it (any spelling of the path)", async () => {
    const ws = workspace();
    const first = await ensure(ws);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.state, "running");
    assert.equal(first.body.startedByHub, true);
    const url: string = first.body.endpoints.appServerWebSocket;
    assert.match(url, /^ws:\/\/127\.0\.0\.1:\d+\/ws\?token=.+/);

    const client = new WsClient(url);
    await client.opened;
    const init = await client.initialize();
    assert.equal((init.result as { serverInfo: { name: string } }).serverInfo.name, "nexo");
    await client.request("thread/list", {
      identity: { channelName: "dotcraft-desktop", userId: "local", workspacePath: ws },
    });
    client.close();
    assert.equal(await upgradeStatus(url.replace(/token=.*/, "token=wrong")), 401);

    const lock = JSON.parse(readFileSync(join(ws, ".nexo", "appserver.lock"), "utf8"));
    assert.equal(lock.pid, first.body.pid);
    assert.equal(lock.managedByHub, true);
    assert.doesNotMatch(JSON.stringify(lock), /token=/);

    const again = await ensure(ws);
    assert.equal(again.body.pid, first.body.pid);
    const link = join(mkdtempSync(join(tmpdir(), "nexo-hub-link-")), "ws");
    symlinkSync(ws, link);
    const viaLink = await ensure(link);
    assert.equal(viaLink.body.pid, first.body.pid);
    assert.equal(viaLink.body.canonicalWorkspacePath, first.body.canonicalWorkspacePath);
    const listed = await api("/v1/appservers");
    assert.ok((listed.body as unknown as Array<{ pid: number }>).some((s) => s.pid === first.body.pid));
  });

  test("two concurrent ensures of one workspace start one server", async () => {
    const ws = workspace();
    const [a, b] = await Promise.all([ensure(ws), ensure(ws)]);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(a.body.pid, b.body.pid);
    assert.equal(a.body.endpoints.appServerWebSocket, b.body.endpoints.appServerWebSocket);
  });

  test("a stale workspace lock is taken over; a live one is workspaceLocked (409)", async () => {
    const stale = workspace();
    const killed = new AppServerProcess({
      cwd: stale,
      args: ["--listen", "ws://127.0.0.1:0"],
      stdin: "ignore",
    });
    await killed.websocketUrl();
    await until("the workspace lock", () =>
      existsSync(join(stale, ".nexo", "appserver.lock")) ? true : undefined,
    );
    killed.kill("SIGKILL");
    await killed.exited;
    const started = await ensure(stale);
    assert.equal(started.status, 200, JSON.stringify(started.body));
    assert.equal(
      JSON.parse(readFileSync(join(stale, ".nexo", "appserver.lock"), "utf8")).pid,
      started.body.pid,
    );

    const busy = workspace();
    const owner = new AppServerProcess({
      cwd: busy,
      args: ["--listen", "ws://127.0.0.1:0"],
      stdin: "ignore",
    });
    try {
      await owner.websocketUrl();
      await until("the workspace lock", () =>
        existsSync(join(busy, ".nexo", "appserver.lock")) ? true : undefined,
      );
      const refused = await ensure(busy);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.error.code, "workspaceLocked");
      assert.match(refused.body.error.message, new RegExp(`pid ${owner.child.pid}`));
      // A second WebSocket server in that workspace refuses to start too.
      const second = await runCli(["app-server", "--listen", "ws://127.0.0.1:0"], { env, cwd: busy });
      assert.equal(second.code, 2);
      assert.match(second.stderr, /in use by another nexo app-server/);
    } finally {
      await owner.stop();
    }
  });

  test("/v1/events streams a server's life; restart replaces the process; the health loop sees trouble", async () => {
    assert.equal((await api("/v1/status", { token: null })).body.capabilities.events, true);
    const refused = await fetch(`${info.apiBaseUrl}/v1/events`);
    assert.equal(refused.status, 401);
    const stream = await subscribe();
    try {
      const ws = realpathSync(workspace());
      const started = await ensure(ws);
      const pid: number = started.body.pid;
      assert.equal(
        (await stream.next("port.allocated", ws)).data.port,
        Number(new URL(started.body.endpoints.appServerWebSocket).port),
      );
      assert.equal((await stream.next("appserver.starting", ws)).data.pid, pid);
      assert.equal((await stream.next("appserver.running", ws)).data.pid, pid);
      assert.ok(
        stream.events.every(
          (e) =>
            !JSON.stringify(e).includes(
              new URL(started.body.endpoints.appServerWebSocket).searchParams.get("token")!,
            ),
        ),
        "no token in events",
      );

      // restart: the old process goes, a new one serves the workspace
      const restarted = await api("/v1/appservers/restart", { method: "POST", body: { workspacePath: ws } });
      assert.equal(restarted.status, 200);
      assert.equal(restarted.body.state, "running");
      const newPid: number = restarted.body.pid;
      assert.notEqual(newPid, pid);
      assert.equal((await stream.next("appserver.exited", ws)).data.pid, pid);
      assert.equal(alive(pid), false);
      assert.equal((await stream.next("appserver.running", ws)).data.pid, newPid);
      const client = new WsClient(restarted.body.endpoints.appServerWebSocket);
      await client.opened;
      await client.initialize();
      client.close();

      // the health loop: a server whose workspace lock is gone is unhealthy; ensure replaces it
      rmSync(join(ws, ".nexo", "appserver.lock"), { force: true });
      assert.equal((await stream.next("appserver.unhealthy", ws)).data.pid, newPid);
      const listed = await api(`/v1/appservers/by-workspace?path=${encodeURIComponent(ws)}`);
      assert.equal(listed.body.state, "unhealthy");
      assert.match(listed.body.lastError, /workspace lock/);
      const healed = await ensure(ws);
      assert.equal(healed.body.state, "running");
      assert.notEqual(healed.body.pid, newPid);
      assert.equal(alive(newPid), false);

      // an exit is seen and reported, and the hub does not restart it by itself
      assert.equal((await stream.next("appserver.exited", ws)).data.pid, newPid);
      process.kill(healed.body.pid, "SIGKILL");
      assert.equal((await stream.next("appserver.exited", ws)).data.pid, healed.body.pid);
      const after = await api(`/v1/appservers/by-workspace?path=${encodeURIComponent(ws)}`);
      assert.equal(after.body.state, "exited");
      assert.equal(after.body.pid, null);
      const missing = await api("/v1/appservers/restart", {
        method: "POST",
        body: { workspacePath: join(ws, "nope") },
      });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error.code, "workspaceNotFound");
    } finally {
      stream.close();
    }
  });

  test("a second hub refuses to start; stopping the hub stops its servers and removes hub.lock", async () => {
    const second = await runCli(["hub"], { env });
    assert.equal(second.code, 1);
    assert.match(second.stderr, /already running/);

    const ws = workspace();
    const started = await ensure(ws);
    const pid: number = started.body.pid;
    assert.ok(alive(pid));
    hub.kill("SIGTERM");
    assert.equal(await hubExited, 0);
    assert.equal(alive(pid), false, "the hub's AppServer is gone");
    assert.equal(existsSync(lockPath), false);
    assert.equal(existsSync(join(ws, ".nexo", "appserver.lock")), false);
  });
});
