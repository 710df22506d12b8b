/**
 * The vector memory wrapper against a real plugin process: upsert, search and delete through the
 * VectorBackendRegistry, -33301..-33304 as the typed memory errors, and the timeout.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import {
  MemoryCollectionNotFoundError,
  MemoryDimensionMismatchError,
  MemoryRateLimitedError,
  MemoryWriteFailedError,
  TimeoutError,
} from "@nexo/wire";
import { registerPluginVectorBackends } from "../../../src/extensions/plugins/memory.js";
import { VectorBackendRegistry } from "../../../src/memory/vector.js";
import { cleanupHosts, startHost as started } from "../../fixtures/plugins/harness.js";

afterEach(cleanupHosts);

describe("vector memory wrapper", () => {
  it("upserts, searches and deletes through the registered backend", async () => {
    const { host } = await started();
    const registry = new VectorBackendRegistry();
    registerPluginVectorBackends(host, registry);
    const backend = registry.require("kitchen_vec");
    assert.equal(
      await backend.upsert("kb", [
        { id: "a", content: "apples", embedding: [1, 0, 0], metadata: { n: 1 } },
        { id: "b", content: "bananas", embedding: [0, 1, 0] },
      ]),
      2,
    );
    const matches = await backend.search("kb", { embedding: [0.9, 0.1, 0], limit: 1 });
    assert.deepEqual(matches, [{ id: "a", content: "apples", score: 0.9, metadata: { n: 1 } }]);
    assert.equal(await backend.delete("kb", ["a", "zzz"]), 1);
  });

  it("maps -33301..-33304 to the typed memory errors", async () => {
    const { host } = await started();
    const backend = new VectorBackendRegistry();
    registerPluginVectorBackends(host, backend);
    const vec = backend.require("kitchen_vec");
    await assert.rejects(vec.search("missing", { embedding: [1, 2, 3], limit: 3 }), (error: unknown) => {
      assert.ok(error instanceof MemoryCollectionNotFoundError);
      assert.equal(error.collection, "missing");
      return true;
    });
    await assert.rejects(
      vec.upsert("kb", [{ id: "x", content: "", embedding: [1, 2] }]),
      (error: unknown) => {
        assert.ok(error instanceof MemoryDimensionMismatchError);
        assert.deepEqual([error.expected, error.got], [3, 2]);
        return true;
      },
    );
    await assert.rejects(vec.delete("limited", ["x"]), (error: unknown) => {
      assert.ok(error instanceof MemoryRateLimitedError);
      assert.equal(error.retryAfterSecs, 7);
      return true;
    });
    await assert.rejects(vec.upsert("readonly", []), MemoryWriteFailedError);
    await assert.rejects(
      vec.upsert("kb", [{ id: "x", content: "", embedding: [] }]),
      /embedding must not be empty/,
    );
  });

  it("times out after NEXO_PLUGIN_MEMORY_TIMEOUT_MS", async () => {
    const { host } = await started({ NEXO_PLUGIN_MEMORY_TIMEOUT_MS: "300" });
    const registry = new VectorBackendRegistry();
    registerPluginVectorBackends(host, registry);
    await assert.rejects(
      registry.require("kitchen_vec").search("slow", { embedding: [1, 1, 1], limit: 1 }),
      TimeoutError,
    );
  });
});
