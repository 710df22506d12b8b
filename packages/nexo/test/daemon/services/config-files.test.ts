/**
 * services.config, the config writer, against a real daemon: reads give the file as written
 * (placeholders kept, so secrets never come back), edits create missing files, run one at a time
 * so none is lost, and TOML files are refused rather than rewritten without their comments.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TenantsFileSchema } from "../../../src/daemon/config/index.js";
import { InvalidConfigError, UnavailableError } from "../../../src/daemon/services/index.js";
import { LlmConfigSchema } from "../../../src/engine/providers/llm-config.js";
import { type DaemonDir, startFromDir } from "../../helpers/daemon-dir.js";

const agent = (id: string) => `  - id: ${id}\n    model: { provider: scripted, model: nexo-scripted-demo }\n`;

describe("services.config", () => {
  let env: DaemonDir;
  before(async () => {
    env = await startFromDir(
      {
        "agents.yaml": `agents:\n${agent("ana")}`,
        "llm.yaml": "providers:\n  hosted:\n    type: anthropic\n    api_key: ${HOSTED_KEY}\n",
        "memory.toml": "# recall limits\n[long_term]\nenabled = true\n",
      },
      { env: { PATH: process.env.PATH, HOSTED_KEY: "sk-secret-value" } },
    );
  });
  after(() => env.daemon.stop("test over"));

  it("reads a file as written: placeholders stay, values from the environment never appear", async () => {
    const llm = await env.daemon.services.config.read("llm", LlmConfigSchema);
    assert.equal(llm?.providers?.hosted?.api_key, "${HOSTED_KEY}");
    assert.doesNotMatch(JSON.stringify(llm), /sk-secret-value/);
    assert.equal(await env.daemon.services.config.read("tenants", TenantsFileSchema), undefined);
  });

  it("a file broken by hand is reported, not returned", async () => {
    const before = env.read("llm.yaml");
    env.write("llm.yaml", "providers:\n  hosted:\n    type: antropic\n");
    try {
      await assert.rejects(env.daemon.services.config.read("llm", LlmConfigSchema), (e: unknown) => {
        assert.ok(e instanceof InvalidConfigError);
        assert.equal(e.issues[0]?.keyPath, "providers.hosted.type");
        assert.equal(e.issues[0]?.line, 3);
        return true;
      });
    } finally {
      env.write("llm.yaml", before);
    }
  });

  it("creates a missing file, validated with the whole directory, and applies it", async () => {
    const result = await env.daemon.services.config.edit("tenants", (doc) => {
      doc.setIn(["tenants"], doc.createNode([{ id: "acme" }]));
    });
    assert.equal(result.changed, true);
    assert.ok(result.reload !== undefined);
    assert.equal(env.read("tenants.yaml"), "tenants:\n  - id: acme\n");
    const noop = await env.daemon.services.config.edit("tenants", () => undefined);
    assert.deepEqual(noop, { changed: false, reload: undefined });
  });

  it("runs concurrent edits one after another, so none is lost", async () => {
    const ids = ["b1", "b2", "b3", "b4", "b5"];
    await Promise.all(
      ids.map((id) =>
        env.daemon.services.agents.upsert({
          id,
          model: { provider: "scripted", model: "nexo-scripted-demo" },
        }),
      ),
    );
    assert.deepEqual(
      (await env.daemon.services.agents.list()).map((a) => a.id),
      ["ana", ...ids],
    );
    assert.deepEqual(env.daemon.summary().agents, ["ana", ...ids]);
  });

  it("refuses to edit a TOML file and leaves it alone", async () => {
    const before = env.read("memory.toml");
    await assert.rejects(
      env.daemon.services.config.edit("memory", (doc) => doc.setIn(["long_term", "enabled"], false)),
      (e: unknown) => {
        assert.ok(e instanceof UnavailableError);
        assert.equal(e.kind, "unavailable");
        assert.match(e.message, /memory\.toml is TOML; nexo edits YAML config files only/);
        return true;
      },
    );
    assert.equal(env.read("memory.toml"), before);
  });
});
