// The floor: the least a JSON-lines echo server can do (readline + JSON.parse/stringify).
import { createInterface } from "node:readline";

const rl = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: msg.params })}\n`);
});
