#!/usr/bin/env node
// The microapp of the microapp benchmark (bench/microapps.bench.ts), written with the SDK as an
// author would: `bench_echo` answers its text (the same trivial tool as the plugin benchmark's
// bench_echo), `bench_admin` makes admin calls back to back for a while and says how many.
import { Microapp } from "nexo-plugin-sdk/microapp";

const app = new Microapp({ id: "bench", version: "0.1.0" });

app.tool({
  name: "bench_echo",
  description: "Echoes its text",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string" }, n: { type: "number" } },
    required: ["text"],
  },
  handler: (args) => args.text,
});

app.tool({
  name: "bench_admin",
  description: "Admin round trips (microapp_audit/tail) for `seconds` with `concurrency` in flight",
  inputSchema: {
    type: "object",
    properties: { seconds: { type: "number" }, concurrency: { type: "number" } },
    required: ["seconds"],
  },
  handler: async ({ seconds, concurrency = 1 }, { admin }) => {
    const deadline = performance.now() + seconds * 1000;
    let done = 0;
    const lane = async () => {
      while (performance.now() < deadline) {
        const page = await admin.microapp_audit.tail({ limit: 1 });
        if (!Array.isArray(page.entries)) throw new Error("microapp_audit/tail answered no entries");
        done++;
      }
    };
    const start = performance.now();
    await Promise.all(Array.from({ length: concurrency }, lane));
    return { per_second: done / ((performance.now() - start) / 1000), calls: done };
  },
});

await app.run();
