/**
 * The benchmark's tool plugin: `bench_echo` answers its `text` as a text result. Written with
 * nexo-plugin-sdk exactly as a plugin author ships it (plain JavaScript on the built SDK, no
 * TypeScript loader at run time), so the benchmark measures the SDK too.
 */
import { readFileSync } from "node:fs";
import { PluginAdapter, textResult } from "nexo-plugin-sdk";

const adapter = new PluginAdapter({
  manifestToml: readFileSync(new URL("./nexo-plugin.toml", import.meta.url), "utf8"),
  tools: [
    {
      name: "bench_echo",
      description: "Echoes its text",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string" }, n: { type: "number" } },
        required: ["text"],
      },
    },
  ],
  onTool: (inv) => textResult(inv.args.text),
});

await adapter.run();
