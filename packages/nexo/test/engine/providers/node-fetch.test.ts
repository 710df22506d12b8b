/**
 * The providers' fetch over node:http (node-fetch.ts), against Node's own fetch on a real HTTP
 * server: the same status, URL, redirect handling and body text for plain, redirected and
 * compressed responses, read both ways (Node's stream through responseReads, and the Response's
 * web stream); and fetch's errors for a refused connection, a body cut short, an abort before the
 * response and one while the body is read.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { nodeFetch, responseReads } from "../../../src/engine/providers/node-fetch.js";

const TEXT = `data: ${"héllo wörld ✓ ".repeat(2000)}\n\n`;
/** Two MB in 200 writes, every line numbered. */
const BIG = Array.from({ length: 40_000 }, (_, i) => `data: ${i} ${"x".repeat(40)}\n`).join("");

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

async function serve(handler: Handler): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (piece: string) => {
      body += piece;
    });
    req.on("end", () => handler(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Writes `bytes` in three pieces, so the client reads it in more than one read. */
function writeInPieces(res: ServerResponse, bytes: Buffer): void {
  const third = Math.ceil(bytes.length / 3);
  res.write(bytes.subarray(0, third));
  setImmediate(() => {
    res.write(bytes.subarray(third, 2 * third));
    setImmediate(() => res.end(bytes.subarray(2 * third)));
  });
}

async function readDirect(response: Response): Promise<string> {
  const reads = responseReads(response);
  assert.ok(reads);
  const chunks: Buffer[] = [];
  for await (const read of reads) for (const chunk of read) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

describe("nodeFetch", () => {
  let other: { url: string; server: Server };
  let main: { url: string; server: Server };
  before(async () => {
    // A second origin, for redirects that leave the first one.
    other = await serve((req, res, body) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ method: req.method, body, authorization: req.headers.authorization ?? null }));
    });
    main = await serve((req, res, body) => {
      const url = new URL(req.url ?? "/", "http://x");
      const [, route, arg] = url.pathname.split("/");
      switch (route) {
        case "echo":
          res.writeHead(200, { "content-type": "application/json", "x-echo": "1" });
          res.end(
            JSON.stringify({
              method: req.method,
              body,
              length: req.headers["content-length"] ?? null,
              type: req.headers["content-type"] ?? null,
              authorization: req.headers.authorization ?? null,
            }),
          );
          return;
        case "redirect": {
          const target = url.searchParams.get("to") === "other" ? `${other.url}/x` : "/echo";
          res.writeHead(Number(arg), { location: target });
          res.end("moved");
          return;
        }
        case "loop":
          res.writeHead(302, { location: "/loop" });
          res.end();
          return;
        case "text":
          res.writeHead(200, { "content-type": "text/event-stream" });
          writeInPieces(res, Buffer.from(TEXT));
          return;
        case "gzip":
        case "br":
        case "deflate": {
          const raw = Buffer.from(TEXT);
          const bytes =
            route === "gzip" ? gzipSync(raw) : route === "br" ? brotliCompressSync(raw) : deflateSync(raw);
          res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": route });
          writeInPieces(res, bytes);
          return;
        }
        case "nocontent":
          res.writeHead(204);
          res.end();
          return;
        case "teapot":
          res.writeHead(418, { "content-type": "application/json" });
          res.end('{"error":{"message":"short and stout"}}');
          return;
        case "cut":
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write("data: first\n\n");
          setImmediate(() => res.socket?.destroy());
          return;
        case "stall":
          // Headers and one event, then nothing until the client gives up.
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write("data: first\n\n");
          return;
        case "hang":
          return;
        case "big": {
          res.writeHead(200, { "content-type": "text/event-stream" });
          let at = 0;
          const step = Math.ceil(BIG.length / 200);
          const more = (): void => {
            while (at < BIG.length) {
              const ok = res.write(BIG.slice(at, at + step));
              at += step;
              if (!ok) {
                res.once("drain", more);
                return;
              }
            }
            res.end();
          };
          more();
          return;
        }
      }
      res.writeHead(404);
      res.end();
    });
  });
  after(async () => {
    main.server.closeAllConnections();
    other.server.closeAllConnections();
    await new Promise((resolve) => main.server.close(resolve));
    await new Promise((resolve) => other.server.close(resolve));
  });

  const post = {
    method: "POST",
    headers: { authorization: "Bearer k", "content-type": "application/json" },
    body: '{"a":"ü"}',
  };
  const cases: Array<[string, RequestInit]> = [
    ["/echo", post],
    ["/echo", { method: "get" }],
    ...[301, 302, 303, 307, 308].map((status): [string, RequestInit] => [`/redirect/${status}`, post]),
    ["/redirect/307?to=other", post],
    ["/redirect/302?to=other", post],
    ["/text", {}],
    ["/gzip", {}],
    ["/br", {}],
    ["/deflate", {}],
    ["/nocontent", {}],
    ["/teapot", post],
    ["/missing", {}],
  ];

  for (const [path, init] of cases) {
    it(`${init.method ?? "GET"} ${path}: what Node's fetch answers, read either way`, async () => {
      const expected = await fetch(`${main.url}${path}`, init);
      const expectedText = await expected.text();
      for (const way of ["direct", "web stream"] as const) {
        const response = await nodeFetch(`${main.url}${path}`, init);
        assert.equal(response.status, expected.status);
        assert.equal(response.statusText, expected.statusText);
        assert.equal(response.url, expected.url);
        assert.equal(response.redirected, expected.redirected);
        assert.equal(response.headers.get("content-type"), expected.headers.get("content-type"));
        const text =
          way === "direct" && response.body !== null ? await readDirect(response) : await response.text();
        assert.equal(text, expectedText, `${way}: the body`);
      }
    });
  }

  it("drops the credentials on a redirect to another origin, and keeps them on the same one", async () => {
    const same = (await (await nodeFetch(`${main.url}/redirect/307`, post)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(same.authorization, "Bearer k");
    assert.equal(same.body, post.body);
    assert.equal(same.length, String(Buffer.byteLength(post.body)));
    const away = (await (await nodeFetch(`${main.url}/redirect/307?to=other`, post)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(away.authorization, null);
    assert.equal(away.body, post.body);
  });

  it("turns a POST redirected by 302 into a GET without its body", async () => {
    const echoed = (await (await nodeFetch(`${main.url}/redirect/302`, post)).json()) as Record<
      string,
      unknown
    >;
    assert.deepEqual([echoed.method, echoed.body, echoed.length, echoed.type], ["GET", "", null, null]);
  });

  it("gives up after 20 redirects as fetch does", async () => {
    await assert.rejects(nodeFetch(`${main.url}/loop`), (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.equal(error.message, "fetch failed");
      return true;
    });
  });

  it("a refused connection is TypeError('fetch failed') with the socket error as its cause", async () => {
    const closed = await serve(() => {});
    await new Promise((resolve) => closed.server.close(resolve));
    await assert.rejects(nodeFetch(`${closed.url}/x`), (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.equal(error.message, "fetch failed");
      assert.equal((error.cause as { code?: string }).code, "ECONNREFUSED");
      return true;
    });
  });

  it("a body cut short is TypeError('terminated'), read either way", async () => {
    for (const way of ["direct", "web stream"]) {
      const response = await nodeFetch(`${main.url}/cut`);
      await assert.rejects(way === "direct" ? readDirect(response) : response.text(), (error: unknown) => {
        assert.ok(error instanceof TypeError);
        assert.equal(error.message, "terminated");
        return true;
      });
    }
  });

  it("an abort before the response rejects with the signal's reason and closes the connection", async () => {
    const controller = new AbortController();
    const closed = new Promise<void>((resolve) =>
      main.server.once("request", (req) => req.socket.once("close", resolve)),
    );
    const pending = nodeFetch(`${main.url}/hang`, { signal: controller.signal });
    setImmediate(() => controller.abort(new Error("stop")));
    await assert.rejects(pending, { message: "stop" });
    await closed;
    const already = AbortSignal.abort();
    await assert.rejects(nodeFetch(`${main.url}/echo`, { signal: already }), { name: "AbortError" });
  });

  it("an abort while the body is read ends the read with the signal's reason", async () => {
    for (const way of ["direct", "web stream"]) {
      const controller = new AbortController();
      const response = await nodeFetch(`${main.url}/stall`, { signal: controller.signal });
      const read = way === "direct" ? readDirect(response) : response.text();
      setImmediate(() => controller.abort(new Error(`stop ${way}`)));
      await assert.rejects(read, { message: `stop ${way}` });
    }
  });

  it("an abort between the response and the reading of its body ends the read with the reason", {
    timeout: 30_000,
  }, async () => {
    for (const way of ["direct", "web stream"]) {
      const controller = new AbortController();
      const response = await nodeFetch(`${main.url}/stall`, { signal: controller.signal });
      controller.abort(new Error(`early ${way}`));
      await new Promise((resolve) => setImmediate(resolve));
      await assert.rejects(way === "direct" ? readDirect(response) : response.text(), {
        message: `early ${way}`,
      });
    }
  });

  it("a body larger than the chunks a reader may fall behind by arrives whole and in order", async () => {
    const response = await nodeFetch(`${main.url}/big`);
    const reads = responseReads(response);
    assert.ok(reads);
    let text = "";
    for await (const read of reads) {
      for (const chunk of read) text += Buffer.from(chunk).toString("latin1");
      // A slow reader: the server keeps writing while this waits.
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(text, BIG);
  });

  it("reads a body once: after the direct read the web stream refuses, and the other way round", async () => {
    const first = await nodeFetch(`${main.url}/text`);
    assert.equal(await readDirect(first), TEXT);
    await assert.rejects(first.text(), TypeError);
    const second = await nodeFetch(`${main.url}/text`);
    assert.equal(await second.text(), TEXT);
    // Read already: the direct read goes to the web stream, which the first read holds.
    await assert.rejects(readDirect(second), /locked/);
  });

  it("leaves what it does not handle to the global fetch (a Request object)", async () => {
    const response = await nodeFetch(new Request(`${main.url}/echo`, post));
    assert.equal(((await response.json()) as { body: string }).body, post.body);
    // Not nodeFetch's: the direct read goes to the web stream, which json() holds.
    await assert.rejects(readDirect(response), /locked/);
  });
});
