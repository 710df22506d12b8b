import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { describe, it } from "node:test";
import {
  acquireMatchWorker,
  MatchWorkerError,
  releaseMatchWorker,
  SearchesBusyError,
} from "../../../src/engine/tools/match-workers.js";

const never = new AbortController().signal;

describe("the match worker pool", () => {
  it("keeps a finished worker warm and lends it again", async () => {
    const first = await acquireMatchWorker(never);
    first.setPattern(/x/);
    assert.deepEqual(
      await first.match({ files: [Buffer.from("x")], lines: false, maxLineChars: 9, maxLinesPerFile: 9 }),
      [true],
    );
    releaseMatchWorker(first);
    const again = await acquireMatchWorker(never);
    assert.equal(again, first);
    releaseMatchWorker(again);
  });

  it("never lends a stopped worker again", async () => {
    const worker = await acquireMatchWorker(never);
    worker.stop(new MatchWorkerError("stopped by the test"));
    assert.equal(worker.usable, false);
    await assert.rejects(
      worker.match({ files: [], lines: false, maxLineChars: 1, maxLinesPerFile: 1 }),
      /stopped by the test/,
    );
    releaseMatchWorker(worker);
    const next = await acquireMatchWorker(never);
    assert.notEqual(next, worker);
    releaseMatchWorker(next);
  });

  it("runs four searches at once, queues the next ones and refuses past the bound", async () => {
    const busy = await Promise.all([1, 2, 3, 4].map(() => acquireMatchWorker(never)));
    const cancel = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    const queued = Array.from({ length: 64 }, () => acquireMatchWorker(cancel.signal));
    // One abort listener for all of a signal's waiters: no leak warning past ten. (Counted now,
    // asserted once the pool is free again, so a failure does not leave workers running.)
    const listeners = [getEventListeners(cancel.signal, "abort").length];
    await assert.rejects(acquireMatchWorker(never), SearchesBusyError);
    // The first waiter gets the first worker given back; the others give up when cancelled.
    releaseMatchWorker(busy[0]!);
    const handedOver = await queued[0]!;
    assert.equal(handedOver, busy[0]);
    listeners.push(getEventListeners(cancel.signal, "abort").length);
    cancel.abort(new Error("gave up waiting"));
    const outcomes = await Promise.allSettled(queued.slice(1));
    assert.ok(outcomes.every((outcome) => outcome.status === "rejected"));
    listeners.push(getEventListeners(cancel.signal, "abort").length);
    await new Promise((resolve) => setImmediate(resolve));
    process.off("warning", onWarning);
    for (const worker of [handedOver, ...busy.slice(1)]) releaseMatchWorker(worker);
    // The pool is usable again.
    releaseMatchWorker(await acquireMatchWorker(never));
    assert.deepEqual(listeners, [1, 1, 0], "one listener while 64, then 63 wait; none once all gave up");
    assert.deepEqual(
      warnings.map((warning) => warning.name),
      [],
    );
  });

  it("drops a signal's abort listener once its last waiter is served", async () => {
    const busy = await Promise.all([1, 2, 3, 4].map(() => acquireMatchWorker(never)));
    const turn = new AbortController();
    const queued = [acquireMatchWorker(turn.signal), acquireMatchWorker(turn.signal)];
    releaseMatchWorker(busy[0]!);
    const first = await queued[0]!;
    const listeners = [getEventListeners(turn.signal, "abort").length];
    releaseMatchWorker(busy[1]!);
    const second = await queued[1]!;
    listeners.push(getEventListeners(turn.signal, "abort").length);
    for (const worker of [first, second, ...busy.slice(2)]) releaseMatchWorker(worker);
    assert.deepEqual(listeners, [1, 0]);
  });
});
