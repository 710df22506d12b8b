/**
 * memory.yaml applied by a real daemon started from a config directory: `long_term.enabled: false`
 * takes the memory tools away from agents and refuses plugins' memory.recall (what is stored stays
 * stored), the recall limits shape memory_recall, and a reload switches both without a restart.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Daemon } from "../../src/daemon/daemon.js";
import type { AgentSession } from "../../src/engine/session.js";
import { type DaemonDir, startFromDir } from "../helpers/daemon-dir.js";
import { waitFor } from "../helpers/wait.js";

const KITCHEN = fileURLToPath(new URL("../fixtures/plugins/kitchen", import.meta.url));

const AGENTS = `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: web }]
    approval: { mode: yolo }
`;
const PLUGINS = `plugins:\n  - dir: ${KITCHEN}\n    grants: { memory_agents: "*" }\n`;

/** A session opened outside a turn: the engine's session code loads first (daemon/sessions.ts). */
async function session(daemon: Daemon, contact: string): Promise<AgentSession> {
  const key = { agentId: "ana", channel: "web", account: undefined, contact };
  await daemon.sessions.loading();
  return daemon.sessions.open(key);
}

const memoryTools = (s: AgentSession) =>
  s
    .toolSpecs()
    .map((spec) => spec.name)
    .filter((name) => name.startsWith("memory_"))
    .sort();

async function pluginRecall(daemon: Daemon, s: AgentSession): Promise<string> {
  await waitFor("the kitchen plugin", () =>
    daemon.plugins.status().some((p) => p.id === "kitchen" && p.state === "running") ? true : undefined,
  );
  return (
    await s.invokeTool(
      "kitchen_recall",
      { agent_id: "ana", query: "tea" },
      { callId: "c1", signal: new AbortController().signal },
    )
  ).output;
}

describe("memory.yaml", () => {
  const started: DaemonDir[] = [];
  after(async () => {
    for (const { daemon } of started) await daemon.stop("test over");
  });

  it("enabled: false takes the memory tools away and refuses plugins' memory.recall; a reload gives them back", async () => {
    const dir = await startFromDir({
      "agents.yaml": AGENTS,
      "plugins.yaml": PLUGINS,
      "memory.yaml": "long_term:\n  enabled: false\n",
    });
    started.push(dir);
    const { daemon } = dir;
    await daemon.store.memory.store("ana", "likes green tea");

    const off = await session(daemon, "off");
    assert.deepEqual(memoryTools(off), []);
    assert.match(await pluginRecall(daemon, off), /long-term memory is turned off/);
    assert.equal((await daemon.store.memory.recall("ana", "tea", 5)).length, 1, "what is stored stays");

    dir.write("memory.yaml", "long_term:\n  enabled: true\n");
    // Throws when the directory does not validate.
    await daemon.services.reload();
    const on = await session(daemon, "on");
    assert.deepEqual(memoryTools(on), ["memory_recall", "memory_store"]);
    assert.match(await pluginRecall(daemon, on), /likes green tea/);
  });

  it("recall limits: the default when the model asks for none, and the most it may ask for", async () => {
    const dir = await startFromDir({
      "agents.yaml": AGENTS,
      "memory.yaml": "long_term:\n  recall: { default_limit: 2, max_limit: 3 }\n",
    });
    started.push(dir);
    const { daemon } = dir;
    for (const n of [1, 2, 3, 4, 5]) await daemon.store.memory.store("ana", `tea fact ${n}`);
    const s = await session(daemon, "limits");
    const recall = (args: Record<string, unknown>) =>
      s.invokeTool(
        "memory_recall",
        { query: "tea", ...args },
        { callId: "c1", signal: new AbortController().signal },
      );
    assert.equal((await recall({})).output.split("\n").length, 2);
    assert.equal((await recall({ limit: 3 })).output.split("\n").length, 3);
    const tooMany = await recall({ limit: 4 });
    assert.equal(tooMany.isError, true);
    assert.match(tooMany.output, /limit must be <= 3/);
  });
});
