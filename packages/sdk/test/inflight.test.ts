import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { InflightTasks } from "../src/inflight.js";

describe("InflightTasks.call", () => {
  test("synchronous work gives its value synchronously and leaves no task behind", () => {
    const tasks = new InflightTasks();
    let sizeDuring = -1;
    const value = tasks.call("sync", () => {
      sizeDuring = tasks.size;
      return 42;
    });
    assert.equal(value, 42);
    assert.equal(sizeDuring, 1, "the work runs as a tracked task");
    assert.equal(tasks.size, 0);
  });

  test("synchronous work that throws rethrows its error and leaves no task behind", () => {
    const tasks = new InflightTasks();
    const boom = new Error("boom");
    assert.throws(
      () =>
        tasks.call("sync", () => {
          throw boom;
        }),
      (error: unknown) => error === boom,
    );
    assert.equal(tasks.size, 0);
  });

  test("work that returns a promise is tracked until it settles", async () => {
    const tasks = new InflightTasks();
    let finish!: (value: string) => void;
    const outcome = tasks.call("async", () => new Promise<string>((resolve) => (finish = resolve)));
    assert.ok(outcome instanceof Promise);
    assert.equal(tasks.size, 1);
    assert.deepEqual(tasks.labels(), ["async"]);
    finish("done");
    assert.equal(await outcome, "done");
    assert.equal(tasks.size, 0);
  });

  test("an abandoned promised task rejects with the abandonment error and aborts its signal", async () => {
    const tasks = new InflightTasks();
    let signal: AbortSignal | undefined;
    const outcome = tasks.call(
      () => "named late",
      (task) => {
        signal = task.signal;
        return new Promise<never>(() => {});
      },
    );
    const gone = new Error("gone");
    assert.deepEqual(tasks.abandon(gone), ["named late"]);
    await assert.rejects(outcome as Promise<never>, (error: unknown) => error === gone);
    assert.equal(signal?.aborted, true);
    assert.equal(tasks.size, 0);
  });

  test("a rejected promise rejects the call with the same error", async () => {
    const tasks = new InflightTasks();
    const boom = new Error("later boom");
    await assert.rejects(
      tasks.call("async", () => Promise.reject(boom)) as Promise<never>,
      (error: unknown) => error === boom,
    );
    assert.equal(tasks.size, 0);
  });
});
