/**
 * The plugin protocol's wire schemas are built on first use (@nexo/wire's schemas/lazy.ts), as an
 * idle daemon's memory asks (issue 15): starting the quickstart's tool plugin (a real child, its
 * handshake, its tools registered) builds none of the schemas of the methods it does not speak —
 * `llm.*`, `memory.*`, `hook.on_hook`, the host services, `channel.*` — and keeps none of its
 * manifest's or its handshake's (built on use and let go); a tool call builds none either:
 * its reply's usual shape is checked by hand (extensions/plugins/tool.ts), and ToolResponseSchema
 * is built only for a reply that check does not recognise.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { builtSchemaGroups } from "@nexo/wire/schemas/lazy";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import { PluginManager } from "../../../src/extensions/plugins/manager.js";
import { recordingLogger } from "../../fixtures/processes.js";

const DEMO_TOOLS = fileURLToPath(new URL("../../../../../examples/plugins/demo-tools/", import.meta.url));

const pluginGroups = () => [...builtSchemaGroups()].filter((group) => group.startsWith("plugin.")).sort();

test("a tool plugin's start and its calls keep no schema of its manifest, its handshake or the methods it does not speak", async () => {
  const stateRoot = mkdtempSync(join(tmpdir(), "nexo-plugin-schemas-"));
  const tools = new ToolRegistry();
  const manager = new PluginManager({
    plugins: [DEMO_TOOLS],
    stateRoot,
    env: { PATH: process.env.PATH },
    registries: { tools },
    logger: recordingLogger(),
  });
  try {
    assert.deepEqual(pluginGroups(), [], "plugin schemas were built at import");
    const [status] = await manager.start();
    assert.equal(status?.state, "running", status?.lastError?.message);
    const unused = ["plugin.channel", "plugin.hook", "plugin.llm", "plugin.memory", "plugin.services"];
    const atStart = pluginGroups();
    for (const group of [...unused, "plugin.tool"])
      assert.ok(!atStart.includes(group), `${group} was built by the start (built: ${atStart.join(", ")})`);
    // The manifest's and the handshake's schemas are built on use and let go (@nexo/wire's
    // plugin/manifest.ts and plugin/lifecycle.ts): the start read them, yet no kept group holds them.
    for (const group of ["plugin.manifest", "plugin.lifecycle", "plugin.channel-features"])
      assert.ok(!atStart.includes(group), `${group} was built for good (built: ${atStart.join(", ")})`);
    assert.equal(status?.id, "demo");

    const ctx = {
      signal: new AbortController().signal,
      sessionId: "s1",
      agentId: "ana",
      callId: "c1",
      workspace: stateRoot,
      unconfined: false,
    };
    const out = await tools.invoke("demo_dice", { sides: 6, count: 1, seed: 7 }, ctx);
    assert.notEqual(out.isError, true, out.output);
    assert.match(out.output, /\d/);
    const afterCall = pluginGroups();
    for (const group of [...unused, "plugin.tool"])
      assert.ok(
        !afterCall.includes(group),
        `${group} was built by a tool call (built: ${afterCall.join(", ")})`,
      );
  } finally {
    await manager.stop("test over");
    rmSync(stateRoot, { recursive: true, force: true });
  }
});
