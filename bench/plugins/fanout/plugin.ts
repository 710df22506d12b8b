/**
 * The fan-out benchmark's plugin: counts the broker events it receives and reports the count
 * through its `<id>_count` tool. With FANOUT_STALL=1 it stops reading stdin at its first event
 * (and stays alive), which is the stalled plugin the benchmark proves harmless. Its manifest is
 * generated per instance by bench/plugins/fanout.ts; it runs with that directory as its cwd.
 */
import { readFileSync } from "node:fs";
import { PluginAdapter, parseManifest } from "nexo-plugin-sdk";

const manifestToml = readFileSync("nexo-plugin.toml", "utf8");
const id = parseManifest(manifestToml).plugin.id;
const stall = process.env.FANOUT_STALL === "1";
let count = 0;

const adapter = new PluginAdapter({
  manifestToml,
  tools: [
    { name: `${id}_count`, description: "How many broker events arrived", inputSchema: { type: "object" } },
  ],
  onTool: () => ({ count }),
  onEvent: async () => {
    count += 1;
    if (stall && count === 1) {
      process.stdin.pause();
      // A paused stdin no longer keeps the process alive; this does, until the host kills it.
      setInterval(() => {}, 60_000);
    }
  },
});

await adapter.run();
