/**
 * The component lifecycle: start in order, stop in reverse, and a failed start stops what had
 * started (newest first) and names the failing component. The components here are small real
 * objects that record what happened to them; the daemon's own components are exercised in
 * components/compose.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type Component, ComponentStartError, Lifecycle, Part } from "../../src/daemon/lifecycle.js";

const quiet = { info() {}, error() {}, debug() {} };

function recorder() {
  const events: string[] = [];
  const component = (name: string, options: { failStart?: Error; failStop?: Error; delayMs?: number } = {}) =>
    ({
      name,
      async start() {
        if (options.delayMs) await sleep(options.delayMs);
        if (options.failStart) {
          events.push(`${name} start failed`);
          throw options.failStart;
        }
        events.push(`${name} started`);
      },
      async stop(reason: string) {
        events.push(`${name} stopped (${reason})`);
        if (options.failStop) throw options.failStop;
      },
    }) satisfies Component;
  return { events, component };
}

describe("Lifecycle", () => {
  it("starts components in order and stops them in reverse, once", async () => {
    const { events, component } = recorder();
    const lifecycle = new Lifecycle([component("a"), component("b"), component("c")], quiet);
    assert.equal(lifecycle.state, "idle");
    await lifecycle.start();
    assert.equal(lifecycle.state, "running");
    await Promise.all([lifecycle.stop("bye"), lifecycle.stop("again")]);
    await lifecycle.stop("and again");
    assert.equal(lifecycle.state, "stopped");
    assert.deepEqual(events, [
      "a started",
      "b started",
      "c started",
      "c stopped (bye)",
      "b stopped (bye)",
      "a stopped (bye)",
    ]);
  });

  it("a component failing to start stops the started ones in reverse and names itself", async () => {
    const { events, component } = recorder();
    const cause = new Error("EADDRINUSE");
    const lifecycle = new Lifecycle(
      [component("lock"), component("store"), component("http", { failStart: cause }), component("plugins")],
      quiet,
    );
    const error = await lifecycle.start().then(
      () => assert.fail("start should have failed"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ComponentStartError);
    assert.equal(error.component, "http");
    assert.equal(error.cause, cause);
    assert.equal(error.message, "could not start http: EADDRINUSE");
    assert.deepEqual(events, [
      "lock started",
      "store started",
      "http start failed",
      "store stopped (http failed to start)",
      "lock stopped (http failed to start)",
    ]);
    assert.equal(lifecycle.state, "stopped");
    await lifecycle.stop("later");
    assert.equal(events.length, 5, "a later stop has nothing left to stop");
  });

  it("a component failing to stop is logged and the others still stop", async () => {
    const { events, component } = recorder();
    const logged: string[] = [];
    const logger = { ...quiet, error: (obj: object) => logged.push(JSON.stringify(obj)) };
    const lifecycle = new Lifecycle(
      [component("a"), component("b", { failStop: new Error("stuck") }), component("c")],
      logger,
    );
    await lifecycle.start();
    await lifecycle.stop("bye");
    assert.deepEqual(events.slice(3), ["c stopped (bye)", "b stopped (bye)", "a stopped (bye)"]);
    assert.equal(logged.length, 1);
    assert.match(logged[0]!, /"component":"b".*stuck/);
  });

  it("a stop requested during start-up lets the current component finish, then unwinds", async () => {
    const { events, component } = recorder();
    const lifecycle = new Lifecycle(
      [component("a"), component("slow", { delayMs: 50 }), component("c")],
      quiet,
    );
    const starting = lifecycle.start();
    await sleep(10);
    const stopping = lifecycle.stop("SIGTERM");
    await assert.rejects(
      starting,
      (error: unknown) =>
        error instanceof ComponentStartError &&
        error.component === "c" &&
        /asked to stop \(SIGTERM\)/.test(error.message),
    );
    await stopping;
    assert.deepEqual(events, ["a started", "slow started", "slow stopped (SIGTERM)", "a stopped (SIGTERM)"]);
    assert.equal(lifecycle.state, "stopped");
  });

  it("refuses two components of one name, and a second start", async () => {
    const { component } = recorder();
    assert.throws(
      () => new Lifecycle([component("x"), component("x")], quiet),
      /two components are named "x"/,
    );
    const lifecycle = new Lifecycle([component("x")], quiet);
    await lifecycle.start();
    assert.throws(() => lifecycle.start(), /already started/);
    await lifecycle.stop("done");
  });
});

describe("Part", () => {
  it("hands out what it made once started, and keeps it readable after stop", async () => {
    const closed: number[] = [];
    const part = new Part("thing", { start: async () => 42, stop: (value) => void closed.push(value) });
    assert.equal(part.ready, false);
    assert.throws(() => part.value, /thing has not started/);
    await part.start();
    assert.equal(part.value, 42);
    await part.stop("done");
    assert.deepEqual(closed, [42]);
    assert.equal(part.value, 42);
  });
});
