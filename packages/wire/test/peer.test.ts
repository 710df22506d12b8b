import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { getEventListeners } from "node:events";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import {
  ConnectionClosedError,
  InvalidParamsError,
  JsonRpcPeer,
  JsonText,
  type MessageTransport,
  RequestCancelledError,
  RpcError,
  type StreamPeerOptions,
  TimeoutError,
  ToolUnavailableError,
} from "@nexo/wire";
import fc from "fast-check";
import { outcomes, rawPeer } from "./helpers/raw-peer.js";

/** Two peers wired back to back over in-memory streams. */
function pair(aOptions: Partial<StreamPeerOptions> = {}, bOptions: Partial<StreamPeerOptions> = {}) {
  const a2b = new PassThrough();
  const b2a = new PassThrough();
  const a = JsonRpcPeer.overStreams({ input: b2a, output: a2b, name: "a", ...aOptions });
  const b = JsonRpcPeer.overStreams({ input: a2b, output: b2a, name: "b", ...bOptions });
  return { a, b, a2b, b2a };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("JsonRpcPeer", () => {
  test("requests, results and typed errors cross both ways", async () => {
    const { a, b } = pair();
    b.onRequest("echo", (p) => p);
    b.onRequest("fail", () => {
      throw new InvalidParamsError("bad things", { field: "x" });
    });
    b.onRequest("busy", () => {
      throw new ToolUnavailableError("later", 1500);
    });
    a.onRequest("whoami", () => "a");
    assert.deepEqual(await a.request("echo", { x: [1, "é"] }), { x: [1, "é"] });
    assert.equal(await b.request("whoami"), "a");
    await assert.rejects(a.request("fail"), (e: unknown) => {
      assert.ok(e instanceof InvalidParamsError);
      assert.equal(e.code, -32602);
      assert.deepEqual(e.data, { field: "x" });
      return true;
    });
    await assert.rejects(a.request("busy"), (e: unknown) => {
      assert.ok(e instanceof ToolUnavailableError);
      assert.equal(e.retryAfterMs, 1500);
      return true;
    });
    await assert.rejects(a.request("nope"), (e: unknown) => e instanceof RpcError && e.code === -32601);
  });

  test("a plain exception becomes -32603 with its message", async () => {
    const { a, b } = pair();
    b.onRequest("boom", async () => {
      throw new Error("kaput");
    });
    await assert.rejects(
      a.request("boom"),
      (e: unknown) => e instanceof RpcError && e.code === -32603 && e.message === "kaput",
    );
  });

  test("notifications reach their handler; handler failures do not break the peer", async () => {
    const { a, b } = pair();
    const got: unknown[] = [];
    b.onNotification("note", (p) => {
      got.push(p);
      if ((p as { boom?: boolean }).boom) throw new Error("handler failure");
    });
    b.onRequest("ping", () => "pong");
    await a.notify("note", { n: 1 });
    await a.notify("note", { boom: true });
    await a.notify("note", { n: 2 });
    assert.equal(await a.request("ping"), "pong");
    assert.deepEqual(got, [{ n: 1 }, { boom: true }, { n: 2 }]);
  });

  test("a slow handler never blocks the reader: replies come in completion order", async () => {
    const { a, b } = pair();
    let releaseSlow!: () => void;
    b.onRequest("slow", () => new Promise((r) => (releaseSlow = () => r("slow"))));
    b.onRequest("fast", () => "fast");
    const order: string[] = [];
    const slow = a.request("slow").then((v) => order.push(v as string));
    const fast = a.request("fast").then((v) => order.push(v as string));
    await fast;
    assert.deepEqual(order, ["fast"]);
    releaseSlow();
    await slow;
    assert.deepEqual(order, ["fast", "slow"]);
  });

  test("timeouts fail exactly the request that timed out", async () => {
    const { a, b } = pair({ requestTimeoutMs: 50 });
    b.onRequest("never", () => new Promise(() => {}));
    b.onRequest("quick", () => 1);
    const never = a.request("never");
    assert.equal(await a.request("quick"), 1);
    await assert.rejects(never, (e: unknown) => e instanceof TimeoutError && e.timeoutMs === 50);
    assert.equal(a.pendingRequests, 0);
    assert.equal(await a.request("quick", undefined, { timeoutMs: 0 }), 1);
  });

  test("requests with different timeouts expire in deadline order, each with its own", async () => {
    const { a, b } = pair({ requestTimeoutMs: 10_000 });
    b.onRequest("never", () => new Promise(() => {}));
    b.onRequest("quick", () => 1);
    const order: number[] = [];
    const expire = (timeoutMs: number) =>
      a.request("never", undefined, { timeoutMs }).catch((e: unknown) => {
        assert.ok(e instanceof TimeoutError && e.timeoutMs === timeoutMs);
        order.push(timeoutMs);
      });
    const started = performance.now();
    const long = expire(300); // sent first, expires last: the shared timer is moved earlier for the others
    const short = expire(40);
    const middle = expire(120);
    const untimed = a.request("never", undefined, { timeoutMs: 0 });
    assert.equal(await a.request("quick"), 1);
    await Promise.all([long, short, middle]);
    assert.deepEqual(order, [40, 120, 300]);
    assert.ok(performance.now() - started >= 299, "none expires before its deadline");
    assert.equal(a.pendingRequests, 1); // the untimed one
    a.close();
    await assert.rejects(untimed, ConnectionClosedError);
  });

  test("between requests the shared timer holds no process open; a later request still times out", async () => {
    const { a, b } = pair();
    b.onRequest("quick", () => 1);
    b.onRequest("never", () => new Promise(() => {}));
    const refTimers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const idle = refTimers();
    assert.equal(await a.request("quick", undefined, { timeoutMs: 30 }), 1);
    assert.equal(refTimers(), idle, "no request pending: the timer left set for 30 ms is unref'd");
    const started = performance.now();
    const late = a.request("never", undefined, { timeoutMs: 150 });
    assert.equal(refTimers(), idle + 1, "a pending request keeps the process alive until its deadline");
    // The timer first fires at the settled request's deadline, finds nothing due and moves on.
    await assert.rejects(late, (e: unknown) => e instanceof TimeoutError && e.timeoutMs === 150);
    assert.ok(performance.now() - started >= 149, "not before its own deadline");
    assert.equal(refTimers(), idle);
    assert.equal(await a.request("quick", undefined, { timeoutMs: 30 }), 1);
    a.close();
    assert.equal(refTimers(), idle);
    await assert.rejects(a.request("quick"), ConnectionClosedError);
  });

  test("a late reply after a timeout is reported as an unknown id, not delivered", async () => {
    const { peer, toPeer, fromPeer, problems } = rawPeer({ requestTimeoutMs: 20 });
    const frames: string[] = [];
    fromPeer.on("data", (c: Buffer) => frames.push(c.toString()));
    await assert.rejects(peer.request("x"), TimeoutError);
    const id = JSON.parse(frames.join("").trim()).id;
    toPeer.write(`${JSON.stringify({ jsonrpc: "2.0", id, result: 1 })}\n`);
    await tick();
    assert.deepEqual(problems, [{ kind: "unknown_response_id", id }]);
  });

  test("an AbortSignal cancels one request", async () => {
    const { a, b } = pair();
    b.onRequest("never", () => new Promise(() => {}));
    const controller = new AbortController();
    const p = a.request("never", undefined, { signal: controller.signal });
    controller.abort(new Error("user pressed stop"));
    await assert.rejects(
      p,
      (e: unknown) => e instanceof RequestCancelledError && /user pressed stop/.test(e.message),
    );
    assert.equal(a.pendingRequests, 0);
    await assert.rejects(a.request("never", undefined, { signal: controller.signal }), RequestCancelledError);
  });

  test("signals shared by many requests cancel exactly theirs; a settled request leaves one listener at most", async () => {
    const { a, b } = pair();
    b.onRequest("never", () => new Promise(() => {}));
    b.onRequest("quick", () => 1);
    const turn1 = new AbortController();
    const turn2 = new AbortController();
    const listeners = (c: AbortController) => getEventListeners(c.signal, "abort").length;
    assert.equal(await a.request("quick", undefined, { signal: turn1.signal }), 1);
    assert.equal(await a.request("quick", undefined, { signal: turn1.signal }), 1);
    assert.equal(listeners(turn1), 1, "kept for the next request of the same turn, not one per request");
    const outcome = (p: Promise<unknown>) =>
      p.then(
        () => "answered",
        (e: unknown) => (e instanceof RequestCancelledError ? e.message : `other: ${String(e)}`),
      );
    const first = [1, 2, 3].map(() => outcome(a.request("never", undefined, { signal: turn1.signal })));
    const second = [1, 2].map(() => outcome(a.request("never", undefined, { signal: turn2.signal })));
    const quick = a.request("quick", undefined, { signal: turn2.signal });
    assert.equal(listeners(turn1), 1);
    assert.equal(await quick, 1);
    turn2.abort(new Error("second stopped"));
    for (const message of await Promise.all(second)) assert.match(message, /second stopped/);
    assert.equal(a.pendingRequests, 3, "turn1's requests are untouched");
    assert.equal(listeners(turn2), 0, "its own listeners are gone with its requests");
    turn1.abort(new Error("first stopped"));
    for (const message of await Promise.all(first)) assert.match(message, /first stopped/);
    assert.equal(a.pendingRequests, 0);
    // The listener moves to the next signal once nothing pending needs the old one; close removes it.
    const turn3 = new AbortController();
    assert.equal(await a.request("quick", undefined, { signal: turn3.signal }), 1);
    assert.equal(listeners(turn1), 0);
    assert.equal(listeners(turn3), 1);
    a.close();
    assert.equal(listeners(turn3), 0);
  });

  test("when the stream ends every pending request fails at once, and handlers are aborted", async () => {
    const { a, b, b2a } = pair({ requestTimeoutMs: 0 });
    let handlerSignal: AbortSignal | undefined;
    a.onRequest("hang", (_p, ctx) => {
      handlerSignal = ctx.signal;
      return new Promise(() => {});
    });
    b.onRequest("hang", () => new Promise(() => {}));
    void b.request("hang").catch(() => {});
    const pending = [a.request("hang"), a.request("hang"), a.request("hang")];
    await tick();
    assert.equal(a.pendingRequests, 3);
    b2a.end();
    const results = await Promise.allSettled(pending);
    for (const r of results) {
      assert.equal(r.status, "rejected");
      assert.ok((r as PromiseRejectedResult).reason instanceof ConnectionClosedError);
    }
    assert.equal((await a.closed).reason, "input ended");
    assert.equal(handlerSignal?.aborted, true);
    await assert.rejects(a.request("hang"), ConnectionClosedError);
    await assert.rejects(a.notify("x"), ConnectionClosedError);
  });

  test("a real child process that dies fails its pending requests with ConnectionClosedError", async () => {
    const child = spawn(process.execPath, ["-e", "process.stdin.once('data', () => process.exit(3))"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const peer = JsonRpcPeer.overStreams({
      input: child.stdout,
      output: child.stdin,
      requestTimeoutMs: 10_000,
    });
    await assert.rejects(peer.request("anything"), ConnectionClosedError);
  });

  test("streamed replies: deltas correlated by request_id, then the final result", async () => {
    const { a, b } = pair();
    b.onRequest("llm.complete", async (params, ctx) => {
      for (const chunk of (params as { words: string[] }).words) {
        await ctx.sendDelta("llm.complete.delta", { chunk });
      }
      return { finish_reason: "stop" };
    });
    const chunksA: string[] = [];
    const chunksB: string[] = [];
    const [ra, rb] = await Promise.all([
      a.requestStream(
        "llm.complete",
        { words: ["he", "llo"] },
        {
          deltaMethod: "llm.complete.delta",
          onDelta: (d: { chunk: string }) => chunksA.push(d.chunk),
        },
      ),
      a.requestStream(
        "llm.complete",
        { words: ["wor", "ld", "!"] },
        {
          deltaMethod: "llm.complete.delta",
          onDelta: (d: { chunk: string }) => chunksB.push(d.chunk),
        },
      ),
    ]);
    assert.deepEqual(ra, { finish_reason: "stop" });
    assert.deepEqual(rb, { finish_reason: "stop" });
    assert.deepEqual(chunksA, ["he", "llo"]);
    assert.deepEqual(chunksB, ["wor", "ld", "!"]);
  });

  test("a delta for no pending stream is dropped and reported", async () => {
    const { peer, toPeer, problems, fromPeer } = rawPeer();
    const frames: string[] = [];
    fromPeer.on("data", (c: Buffer) => frames.push(c.toString()));
    const p = peer.requestStream("s", {}, { deltaMethod: "s.delta", onDelta: () => {} });
    await tick();
    const id = JSON.parse(frames.join("").trim()).id;
    toPeer.write(`${JSON.stringify({ method: "s.delta", params: { request_id: 999, chunk: "x" } })}\n`);
    toPeer.write(`${JSON.stringify({ id, result: {} })}\n`);
    await p;
    assert.deepEqual(problems, [{ kind: "orphan_delta", method: "s.delta", requestId: 999 }]);
  });

  test("malformed input, reply policy: -32700 / -32600 with id null, and the peer keeps serving", async () => {
    const { peer, toPeer, nextLines, problems } = rawPeer({ malformed: "reply", maxFrameBytes: 64 });
    peer.onRequest("ping", () => "pong");
    toPeer.write("{not json\n");
    toPeer.write("[1,2]\n");
    toPeer.write("42\n");
    toPeer.write('{"jsonrpc":"2.0","id":7}\n');
    toPeer.write(`{"pad":"${"x".repeat(100)}"}\n`);
    toPeer.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    assert.deepEqual(outcomes(await nextLines(6)), [
      [null, -32700],
      [null, -32600],
      [null, -32600],
      [7, -32600],
      [null, -32600],
      [1, "pong"],
    ]);
    assert.equal(problems.length, 5);
  });

  test("malformed input, ignore policy: nothing is written back", async () => {
    const { peer, toPeer, nextLines, lines } = rawPeer({ malformed: "ignore" });
    peer.onRequest("ping", () => "pong");
    toPeer.write("{not json\n[]\n\n");
    toPeer.write('{"id":1,"method":"ping"}\n');
    const [reply] = (await nextLines(1)) as Array<{ id: number; result: string }>;
    assert.deepEqual(reply, { jsonrpc: "2.0", id: 1, result: "pong" });
    await tick();
    assert.equal(lines.length, 0);
  });

  test("id strategies: integers, uuid and prefixed strings", async () => {
    for (const [ids, check] of [
      ["integer", (id: unknown) => typeof id === "number"],
      ["uuid", (id: unknown) => typeof id === "string" && /^[0-9a-f-]{36}$/.test(id)],
      [{ prefix: "app:" }, (id: unknown) => typeof id === "string" && id.startsWith("app:")],
    ] as const) {
      const { peer, fromPeer, toPeer } = rawPeer({ ids });
      const frames: string[] = [];
      fromPeer.on("data", (c: Buffer) => frames.push(c.toString()));
      const p = peer.request("m");
      await tick();
      const sent = JSON.parse(frames.join("").trim());
      assert.ok(check(sent.id), `bad id ${sent.id} for ${JSON.stringify(ids)}`);
      toPeer.write(`${JSON.stringify({ id: sent.id, result: "ok" })}\n`);
      assert.equal(await p, "ok");
    }
  });

  test("property: ids never collide under concurrency, every reply reaches its caller", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ value: fc.jsonValue({ maxDepth: 2 }), delay: fc.integer({ min: 0, max: 3 }) }), {
          minLength: 1,
          maxLength: 60,
        }),
        fc.constantFrom<"integer" | "uuid">("integer", "uuid"),
        async (calls, ids) => {
          const { a, b } = pair({ ids });
          const seen = new Set<unknown>();
          b.onRequest("echo", async (params, ctx) => {
            assert.ok(!seen.has(ctx.id), `id ${String(ctx.id)} reused`);
            seen.add(ctx.id);
            const { value, delay } = params as { value: unknown; delay: number };
            for (let i = 0; i < delay; i++) await tick();
            return { value };
          });
          const results = await Promise.all(calls.map((c) => a.request<{ value: unknown }>("echo", c)));
          assert.deepEqual(
            results.map((r) => r.value),
            calls.map((c) => JSON.parse(JSON.stringify(c.value))),
          );
          a.close();
          b.close();
        },
      ),
      { numRuns: 40 },
    );
  });

  test("property: timeouts and close fail exactly the pending calls", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }), async (answers) => {
        const { a, b, b2a } = pair({ requestTimeoutMs: 0 });
        b.onRequest("maybe", (p) => ((p as { answer: boolean }).answer ? "done" : new Promise(() => {})));
        const calls = answers.map((answer) => a.request("maybe", { answer }));
        const answered = await Promise.all(calls.filter((_, i) => answers[i]));
        assert.ok(answered.every((v) => v === "done"));
        assert.equal(a.pendingRequests, answers.filter((x) => !x).length);
        b2a.end();
        const settled = await Promise.allSettled(calls);
        settled.forEach((s, i) => {
          if (answers[i]) assert.equal(s.status, "fulfilled");
          else assert.ok(s.status === "rejected" && s.reason instanceof ConnectionClosedError);
        });
        assert.equal(a.pendingRequests, 0);
      }),
      { numRuns: 30 },
    );
  });

  test("property: runningHandlers counts the handlers still running, whatever order they settle in; close aborts the rest in arrival order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }).chain((n) =>
          fc.tuple(
            fc.shuffledSubarray(
              Array.from({ length: n }, (_, i) => i),
              { minLength: 0, maxLength: n },
            ),
            fc.constant(n),
            fc.boolean(),
          ),
        ),
        async ([settleOrder, n, throwOne]) => {
          const { a, b } = pair({ requestTimeoutMs: 0 });
          const release: Array<() => void> = [];
          const abortedOrder: number[] = [];
          let seenInside = -1;
          b.onRequest("sync", (_p, ctx) => {
            // A handler that runs synchronously is counted while it runs.
            seenInside = b.runningHandlers;
            if (throwOne) throw new Error(`sync ${ctx.id}`);
            return "sync";
          });
          b.onRequest("wait", (p, ctx) => {
            const index = (p as { i: number }).i;
            ctx.signal.addEventListener("abort", () => abortedOrder.push(index));
            return new Promise((resolve, reject) => {
              release[index] = () => (index % 2 === 0 ? resolve(index) : reject(new Error(`no ${index}`)));
            });
          });
          const calls = Array.from({ length: n }, (_, i) => a.request("wait", { i }).catch(() => "rejected"));
          while (release.length < n || release.includes(undefined as never)) await tick();
          assert.equal(b.runningHandlers, n);
          await a.request("sync").catch(() => undefined);
          assert.equal(seenInside, n + 1);
          assert.equal(b.runningHandlers, n);
          for (const [k, i] of settleOrder.entries()) {
            release[i]!();
            await calls[i];
            assert.equal(b.runningHandlers, n - k - 1);
          }
          b.close();
          const left = Array.from({ length: n }, (_, i) => i).filter((i) => !settleOrder.includes(i));
          assert.deepEqual(abortedOrder, left);
          assert.equal(b.runningHandlers, 0);
          // A handler settling after the close changes nothing.
          for (const i of left) release[i]!();
          await tick();
          assert.equal(b.runningHandlers, 0);
          a.close();
        },
      ),
      { numRuns: 40 },
    );
  });

  test("strictJson refuses to send NaN instead of turning it into null", async () => {
    const { a, b } = pair({ strictJson: true });
    b.onRequest("x", () => 1);
    await assert.rejects(a.request("x", { n: Number.NaN }), /NaN cannot be represented/);
    assert.equal(a.pendingRequests, 0);
  });

  test("a JsonText result goes into the frame as given: the same bytes as serializing the value", async () => {
    for (const id of [7, 'req-"7"', null] as const) {
      const value = { content: [{ type: "text", text: "é\n\u2028" }], is_error: false, n: 1.5 };
      const plain = rawPeer();
      const text = rawPeer();
      plain.peer.setFallbackRequestHandler(() => value);
      text.peer.setFallbackRequestHandler(() => new JsonText(JSON.stringify(value)));
      const frame = `${JSON.stringify({ jsonrpc: "2.0", id, method: "x" })}\n`;
      const raw = (r: ReturnType<typeof rawPeer>) =>
        new Promise<string>((resolve) => r.fromPeer.once("data", (chunk: Buffer) => resolve(String(chunk))));
      const [a, b] = [raw(plain), raw(text)];
      plain.toPeer.write(frame);
      text.toPeer.write(frame);
      assert.equal(await b, await a);
      assert.equal(await b, `${JSON.stringify({ jsonrpc: "2.0", id, result: value })}\n`);
    }
  });

  test("a JsonText result over a transport without sendSerialized is sent as the value", async () => {
    const sent: unknown[] = [];
    let sink: Parameters<MessageTransport["start"]>[0] | undefined;
    const transport: MessageTransport = {
      start: (s) => {
        sink = s;
      },
      send: async (message) => {
        sent.push(message);
      },
      close: () => undefined,
      queuedMessages: 0,
    };
    const peer = new JsonRpcPeer({ transport });
    peer.onRequest("x", () => new JsonText('{"a":[1,"b"]}'));
    sink?.message({ jsonrpc: "2.0", id: 1, method: "x" });
    await tick();
    assert.deepEqual(sent, [{ jsonrpc: "2.0", id: 1, result: { a: [1, "b"] } }]);
  });

  test("a JsonText result over the outbound cap gets an error reply", async () => {
    // 120 bytes: room for the error reply, not for the result.
    const { a, b } = pair({}, { maxOutgoingFrameBytes: 120 });
    b.onRequest("big", () => new JsonText(JSON.stringify("x".repeat(200))));
    await assert.rejects(a.request("big"), (e: unknown) => e instanceof RpcError && e.code === -32603);
  });

  test("JsonText params go into the request frame as given: the same bytes as serializing the value", async () => {
    for (const ids of ["integer", "uuid"] as const) {
      const plain = new PassThrough();
      const text = new PassThrough();
      const a = JsonRpcPeer.overStreams({ input: new PassThrough(), output: plain, ids });
      const b = JsonRpcPeer.overStreams({ input: new PassThrough(), output: text, ids });
      const lines = (stream: PassThrough) => {
        const seen: string[] = [];
        stream.on("data", (chunk: Buffer) => seen.push(...String(chunk).split("\n").filter(Boolean)));
        return seen;
      };
      const [fromPlain, fromText] = [lines(plain), lines(text)];
      // Two methods one after the other, and back: the envelope's method is not the previous one's.
      for (const method of ["tool.invoke", "tool.invoke", 'other/"method"', "tool.invoke"]) {
        const params = {
          plugin_id: "p",
          tool_name: "t",
          args: { text: "é\n\u2028", n: 1.5 },
          agent_id: null,
        };
        a.request(method, params).catch(() => undefined);
        b.request(method, new JsonText(JSON.stringify(params))).catch(() => undefined);
      }
      await tick();
      assert.equal(fromText.length, 4);
      fromText.forEach((line, i) => {
        const sent = JSON.parse(fromPlain[i]!) as { id: unknown };
        const got = JSON.parse(line) as { id: unknown };
        // The ids differ between the two peers only for uuids; the rest is byte for byte the same.
        assert.equal(line, fromPlain[i]!.replace(JSON.stringify(sent.id), JSON.stringify(got.id)));
      });
      a.close();
      b.close();
    }
  });

  test("JsonText params over a transport without sendSerialized are sent as the value", async () => {
    const sent: unknown[] = [];
    const transport: MessageTransport = {
      start: () => undefined,
      send: async (message) => {
        sent.push(message);
      },
      close: () => undefined,
      queuedMessages: 0,
    };
    const peer = new JsonRpcPeer({ transport });
    peer.request("x", new JsonText('{"a":[1,"b"]}')).catch(() => undefined);
    await tick();
    assert.deepEqual(sent, [{ jsonrpc: "2.0", id: 1, method: "x", params: { a: [1, "b"] } }]);
    peer.close();
  });

  test("a request with JsonText params over the outbound cap fails that request", async () => {
    const { a } = pair({ maxOutgoingFrameBytes: 100 });
    await assert.rejects(
      a.request("big", new JsonText(JSON.stringify({ text: "x".repeat(200) }))),
      (e: unknown) => e instanceof Error && /exceeds the 100-byte limit/.test(e.message),
    );
    assert.equal(a.pendingRequests, 0);
  });

  test("a handler result that cannot be serialized still gets an error reply", async () => {
    const { a, b } = pair({}, { strictJson: true });
    b.onRequest("bad", () => ({ n: Number.POSITIVE_INFINITY }));
    await assert.rejects(a.request("bad"), (e: unknown) => e instanceof RpcError && e.code === -32603);
  });
});
