// The long-answer floor of bench/jsonstream.bench.ts: one long streamed answer read straight from
// the mock with fetch (HTTP + SSE split + one JSON.parse per text delta, nothing of nexo), in a
// process of its own, like nexo. Like nexo it reads one answer first to warm up (its first fetch
// loads undici, its code is not compiled yet), then prints the second answer's text deltas per
// second. Usage: node direct-read.mjs <mock base URL>
const url = process.argv[2];

async function read() {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "bench", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({
      model: "bench",
      max_tokens: 10,
      stream: true,
      messages: [{ role: "user", content: "talk" }],
    }),
  });
  let events = 0;
  let rest = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    rest += decoder.decode(chunk, { stream: true });
    let nl = rest.indexOf("\n");
    while (nl !== -1) {
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      nl = rest.indexOf("\n");
      if (line.startsWith("data:") && line.includes('"text_delta"')) {
        JSON.parse(line.slice(5));
        events++;
      }
    }
  }
  return events / ((performance.now() - t0) / 1000);
}

await read();
process.stdout.write(`${await read()}\n`);
