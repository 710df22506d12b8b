/**
 * `model/list` through the real `nexo app-server --config DIR`: each agent's model and each
 * provider's default model, owned by its provider entry; a configuration that cannot be read is
 * `success: false` (not an RPC error); no flag and -32601 without a config directory.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import type { AppServerProcess } from "../../../helpers/appserver-client.js";
import { AGENTS_YAML, configDir, LLM_YAML, managedServer } from "./management-helpers.js";

const processes: AppServerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop();
});

type Models = { success: boolean; models: Array<{ id: string; ownedBy: string; createdAt: string }> };

describe("AppServer model/list", () => {
  test("lists the configured models by provider", async () => {
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML });
    const { server, capabilities } = await managedServer(config, processes);
    assert.equal(capabilities.modelCatalogManagement, true);
    const result = await server.request<Models>("model/list");
    assert.equal(result.success, true);
    assert.deepEqual(
      result.models.map((m) => [m.ownedBy, m.id]),
      [
        ["main", "claude-default"],
        ["scripted", "scripted-1"],
        ["main", "claude-test"],
      ],
    );
    for (const model of result.models) assert.ok(!Number.isNaN(Date.parse(model.createdAt)));
  });

  test("a broken llm.yaml is success: false with the problem", async () => {
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML });
    const { server } = await managedServer(config, processes);
    config.write("llm.yaml", "providers:\n  main: { type: nonsense }\n");
    const result = await server.request<Models & { errorCode?: string; errorMessage?: string }>(
      "model/list",
      {},
    );
    assert.equal(result.success, false);
    assert.deepEqual(result.models, []);
    assert.equal(result.errorCode, "InvalidConfigError");
    assert.match(result.errorMessage ?? "", /llm\.yaml/);
  });

  test("without a config directory: no flag, -32601", async () => {
    const { server, capabilities } = await managedServer(undefined, processes);
    assert.equal(capabilities.modelCatalogManagement, undefined);
    assert.equal((await server.call("model/list", {})).error?.code, -32601);
  });
});
