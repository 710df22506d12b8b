/**
 * The floor under `nexo agent --json-stream`'s one-shot row: the least a Node program does to
 * answer one piped question with the official Anthropic SDK — read the `message` line from stdin,
 * stream one Messages request, write each text delta and a `stream_end` as json-stream lines,
 * leave when stdin ends. No store, no engine, no tools, no protocol schemas: what is left is
 * Node's start, loading the SDK, Node's `fetch` (undici) and the request. The benchmark bundles
 * this file the way scripts/bundle-cli.mjs bundles the CLI (ESM, split, Node 20) and runs it with
 * the same clean environment as nexo, so the two differ only in what nexo does beyond this.
 */
import { setFlagsFromString } from "node:v8";
// The lightest client the SDK offers, as nexo's provider loads it (engine/providers/anthropic-sdk.ts):
// the SDK's default export would also build every API it has. Static imports, so the bundler keeps
// only these; the program is idle nowhere, so loading them before stdin is read costs the same.
import { BaseAnthropic } from "@anthropic-ai/sdk";
import { Messages } from "@anthropic-ai/sdk/resources/messages";

// The CLI sets the same flag (cli/main.ts) so that an exiting process does not wait for V8 to
// optimise fetch's WebAssembly HTTP parser; without it this floor's exit would be the slower one.
setFlagsFromString("--wasm-tiering-budget=18000000");

let input = "";
for await (const chunk of process.stdin) input += chunk;
const message = JSON.parse(input.slice(0, input.indexOf("\n"))) as { msg_id: string; input: string };
const client = new BaseAnthropic({
  apiKey: process.env.ANTHROPIC_API_KEY,
  baseURL: process.env.ANTHROPIC_BASE_URL,
  maxRetries: 0,
});
const stream = await new Messages(client).create({
  model: "bench",
  max_tokens: 1024,
  stream: true,
  messages: [{ role: "user", content: message.input }],
});
for await (const event of stream) {
  if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
    process.stdout.write(
      `${JSON.stringify({ type: "text_delta", msg_id: message.msg_id, text: event.delta.text })}\n`,
    );
  }
}
process.stdout.write(`${JSON.stringify({ type: "stream_end", msg_id: message.msg_id })}\n`);
