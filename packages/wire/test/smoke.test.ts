import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { JsonRpcPeer } from "@nexo/wire";

test("two peers talk", async () => {
  const a2b = new PassThrough();
  const b2a = new PassThrough();
  const a = new JsonRpcPeer({ input: b2a, output: a2b, name: "a" });
  const b = new JsonRpcPeer({ input: a2b, output: b2a, name: "b" });
  b.onRequest("add", (p) => (p as number[]).reduce((x, y) => x + y, 0));
  assert.equal(await a.request("add", [1, 2, 3]), 6);
});
