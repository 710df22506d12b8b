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

  test("tasks that finish in any order are untracked exactly once; the rest stay listed oldest first", async () => {
    const tasks = new InflightTasks();
    const finish: Array<() => void> = [];
    const outcomes = ["a", "b", "c", "d", "e"].map((name) =>
      tasks.call(name, () => new Promise<string>((resolve) => finish.push(() => resolve(name)))),
    );
    assert.deepEqual(tasks.labels(), ["a", "b", "c", "d", "e"]);
    // The middle, the head, the tail: each unlinks only itself.
    finish[2]!();
    finish[0]!();
    finish[4]!();
    assert.deepEqual(await Promise.all([outcomes[2], outcomes[0], outcomes[4]]), ["c", "a", "e"]);
    assert.deepEqual(tasks.labels(), ["b", "d"]);
    assert.equal(tasks.size, 2);
    // A later task goes after the survivors; a synchronous one leaves the list as it found it.
    const late = tasks.call("f", () => new Promise<string>((resolve) => finish.push(() => resolve("f"))));
    assert.equal(
      tasks.call("sync", () => tasks.labels().join(",")),
      "b,d,f,sync",
    );
    assert.deepEqual(tasks.labels(), ["b", "d", "f"]);
    const drained = tasks.drain(60_000);
    finish[1]!();
    finish[3]!();
    finish[5]!();
    assert.deepEqual(await drained, []);
    assert.deepEqual(await Promise.all([outcomes[1], outcomes[3], late]), ["b", "d", "f"]);
    assert.equal(tasks.size, 0);
    // Abandoning an empty list abandons nothing, and the list still works afterwards.
    assert.deepEqual(tasks.abandon(new Error("nothing left")), []);
    assert.equal(
      tasks.call("again", () => tasks.size),
      1,
    );
    assert.equal(tasks.size, 0);
  });

  test("abandon aborts and rejects every task still listed, and only those", async () => {
    const tasks = new InflightTasks();
    let doneSignal: AbortSignal | undefined;
    await tasks.call("done", (task) => {
      doneSignal = task.signal;
      return Promise.resolve(1);
    });
    const signals: AbortSignal[] = [];
    const pending = ["x", "y", "z"].map(
      (name) =>
        tasks.call(name, (task) => {
          signals.push(task.signal);
          return new Promise<never>(() => {});
        }) as Promise<never>,
    );
    const gone = new Error("gone");
    assert.deepEqual(tasks.abandon(gone), ["x", "y", "z"]);
    for (const outcome of pending) await assert.rejects(outcome, (error: unknown) => error === gone);
    assert.deepEqual(
      signals.map((signal) => signal.aborted),
      [true, true, true],
    );
    assert.equal(doneSignal?.aborted, false);
    assert.equal(tasks.size, 0);
  });
});
