/**
 * The `fetch` the provider SDKs are given (their `fetch` option): the same request sent with
 * Node's own HTTP client (`node:http`/`node:https`) instead of the global fetch, whose response
 * body reaches JavaScript through undici's parser and a web ReadableStream — a queue, a promise
 * and a transferred ArrayBuffer per network read. On the providers' streams that layer cost about
 * half again what Node's client costs per byte, and the OpenAI format's deltas carry 1.75× the
 * bytes of Anthropic's (docs/performance.md, "OpenAI-format streaming").
 *
 * The SDKs still build, authenticate and send the request and throw their typed errors for an
 * HTTP failure: they see a standard `Response` (status, headers, a web-stream body for reading an
 * error's text). The provider's reader takes the body's bytes from Node's stream directly
 * (`responseReads`). What fetch does that matters to an API client is done the same way here:
 * redirects followed (at most 20; 303, and 301/302 of a POST, become a GET without a body; a
 * redirect to another origin drops the credentials), gzip/deflate/brotli bodies decompressed,
 * abort rejects with the signal's reason and ends a body being read, a failure to connect is
 * `TypeError("fetch failed")` and a body cut short `TypeError("terminated")`, each with the socket
 * error as `cause` (errors.ts reads both). Anything this does not handle — a `Request` object, a
 * streamed or form body, a redirect mode other than "follow", another scheme — goes to the global
 * fetch unchanged.
 */
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";

/** The body of a response made here: one reader, either Node's stream or the web stream. */
interface Body {
  readonly stream: Readable;
  readonly signal: AbortSignal | undefined;
  taken: boolean;
}

const bodies = new WeakMap<Response, Body>();

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
/** Statuses whose response has no body (a `Response` with one would throw). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** What fetch drops from a request redirected to another origin. */
const CREDENTIALS = ["authorization", "proxy-authorization", "cookie"];

/**
 * The bytes of a response's body: Node's stream when the response came from `nodeFetch` and its
 * body was not read yet, else the web stream. Read errors are fetch's (`TypeError("terminated")`,
 * or the signal's reason after an abort).
 *
 * They are handed on as the chunks that arrived since the reader last asked: one await per
 * wake-up rather than per chunk. Node's HTTP parser hands a body on in one chunk per piece of the
 * server's chunked encoding that a socket read holds (a 64 KiB read of a stream written 16 KiB at a
 * time is five), so a per-chunk await costs a promise and a pass through every generator above per
 * ~13 KiB: a cost per byte, which the OpenAI format's 1.75× bytes per delta pay 1.75×
 * (docs/performance.md, "OpenAI-format streaming").
 */
export function responseReads(response: Response): AsyncIterable<readonly Uint8Array[]> | null {
  const reads = nodeReads(response);
  if (reads !== undefined) return reads;
  const body = response.body as unknown as AsyncIterable<Uint8Array> | null;
  return body === null ? null : singly(body);
}

function nodeReads(response: Response): AsyncGenerator<Buffer[], void, undefined> | undefined {
  const body = bodies.get(response);
  if (body === undefined || body.taken || response.bodyUsed || response.body?.locked) return undefined;
  body.taken = true;
  return read(body);
}

async function* singly<T>(items: AsyncIterable<T>): AsyncGenerator<T[], void, undefined> {
  for await (const item of items) yield [item];
}

async function* read(body: Body): AsyncGenerator<Buffer[], void, undefined> {
  try {
    yield* chunksOf(body.stream);
  } catch (error) {
    throw body.signal?.aborted ? body.signal.reason : new TypeError("terminated", { cause: error });
  } finally {
    body.stream.destroy();
  }
}

/** Chunks a reader may fall behind by before the stream is paused (and the socket with it). */
const QUEUED_CHUNKS = 16;

/**
 * A stream's chunks as they arrive. Readable's own async iterator reads with `read()`, which joins
 * everything buffered since the last read into a new Buffer: a copy and an ArrayBuffer per read,
 * for a provider's stream ~2 MB a long answer, which showed as CPU on V8's GC threads. Here the
 * chunks are taken from `data` events, queued while the reader works, and handed on together, all
 * that arrived since the reader last asked; the stream is paused while QUEUED_CHUNKS wait. Ending
 * without `end` is an error (a premature close).
 */
async function* chunksOf(stream: Readable): AsyncGenerator<Buffer[], void, undefined> {
  let queue: Buffer[] = [];
  let ended = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const onData = (chunk: Buffer) => {
    queue.push(chunk);
    if (queue.length >= QUEUED_CHUNKS) stream.pause();
    notify();
  };
  const onEnd = () => {
    ended = true;
    notify();
  };
  const onError = (error: unknown) => {
    failure ??= { error };
    notify();
  };
  const onClose = () => {
    if (!ended) failure ??= { error: new Error("the body closed before its end") };
    notify();
  };
  // Destroyed before the read began (an abort between the response and its reading): its error
  // and close events are gone.
  if (stream.destroyed) throw stream.errored ?? new Error("the body closed before it was read");
  stream.on("data", onData);
  stream.once("end", onEnd);
  stream.once("error", onError);
  stream.once("close", onClose);
  try {
    for (;;) {
      if (queue.length > 0) {
        const chunks = queue;
        queue = [];
        stream.resume();
        yield chunks;
      } else if (failure) throw failure.error;
      else if (ended) return;
      else
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
    }
  } finally {
    stream.off("data", onData);
    stream.off("end", onEnd);
    stream.off("error", onError);
    stream.off("close", onClose);
  }
}

type FetchInput = Parameters<typeof fetch>[0];
type FetchInit = NonNullable<Parameters<typeof fetch>[1]>;

export async function nodeFetch(input: FetchInput, init: FetchInit = {}): Promise<Response> {
  const url = typeof input === "string" ? parseUrl(input) : input instanceof URL ? input : null;
  const body = init.body;
  if (
    url === null ||
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    (init.redirect !== undefined && init.redirect !== "follow") ||
    !(body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array)
  )
    return fetch(input, init);
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw signal.reason;
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of new Headers(init.headers)) headers[name] = value;
  headers["accept-encoding"] ??= "gzip, deflate, br";
  let request: Request = { url: new URL(url), method: (init.method ?? "GET").toUpperCase(), headers, body };
  for (let redirects = 0; ; redirects++) {
    const res = await send(request, signal);
    const location = res.headers.location;
    if (!REDIRECTS.has(res.statusCode ?? 0) || location === undefined)
      return toResponse(res, request, redirects > 0, signal);
    res.resume();
    if (redirects === MAX_REDIRECTS)
      throw new TypeError("fetch failed", { cause: new Error("redirect count exceeded") });
    request = redirected(request, res.statusCode!, location);
  }
}

/** `URL.parse` (Node 22). */
function parseUrl(text: string, base?: URL): URL | null {
  try {
    return new URL(text, base);
  } catch {
    return null;
  }
}

interface Request {
  url: URL;
  method: string;
  headers: OutgoingHttpHeaders;
  body: string | Uint8Array | null | undefined;
}

/** The request fetch sends after a redirect (the fetch standard's "HTTP-redirect fetch"). */
function redirected(request: Request, status: number, location: string): Request {
  const url = parseUrl(location, request.url);
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:"))
    throw new TypeError("fetch failed", { cause: new Error(`invalid redirect location: ${location}`) });
  const headers = { ...request.headers };
  let { method, body } = request;
  if (status === 303 ? method !== "HEAD" : (status === 301 || status === 302) && method === "POST") {
    method = "GET";
    body = undefined;
    for (const name of Object.keys(headers)) if (name.startsWith("content-")) delete headers[name];
  }
  if (url.origin !== request.url.origin) for (const name of CREDENTIALS) delete headers[name];
  return { url, method, headers, body };
}

let http: Promise<typeof import("node:http")> | undefined;
let https: Promise<typeof import("node:https")> | undefined;

/** Node's client for the URL's scheme, loaded on first use (TLS only for an https URL). */
function client(url: URL): Promise<Pick<typeof import("node:http"), "request">> {
  if (url.protocol === "https:") {
    https ??= import("node:https");
    return https;
  }
  http ??= import("node:http");
  return http;
}

/** Sends one request; resolves with its response, whose body is unread. */
async function send(request: Request, signal: AbortSignal | undefined): Promise<IncomingMessage> {
  const { request: open } = await client(request.url);
  const { url, method, body } = request;
  const headers = { ...request.headers };
  if (body !== undefined && body !== null) headers["content-length"] = Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    let req: ClientRequest;
    const onAbort = () => {
      req.destroy();
      reject(signal!.reason);
    };
    try {
      req = open(url, { method, headers });
    } catch (error) {
      reject(new TypeError("fetch failed", { cause: error }));
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    req.once("response", (res) => {
      signal?.removeEventListener("abort", onAbort);
      resolve(res);
    });
    req.once("error", (error) => {
      signal?.removeEventListener("abort", onAbort);
      reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error }));
    });
    req.end(body ?? undefined);
  });
}

async function toResponse(
  res: IncomingMessage,
  request: Request,
  redirected: boolean,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const headers = new Headers();
  const raw = res.rawHeaders;
  try {
    for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  } catch (error) {
    res.destroy();
    throw new TypeError("fetch failed", { cause: error });
  }
  const status = res.statusCode ?? 0;
  const init = { status, statusText: res.statusMessage ?? "", headers };
  let response: Response;
  if (NULL_BODY.has(status) || request.method === "HEAD") {
    res.resume();
    response = new Response(null, init);
  } else {
    const body: Body = { stream: await decoded(res), signal, taken: false };
    if (signal?.aborted) body.stream.destroy(signal.reason);
    else if (signal !== undefined) {
      const onAbort = () => body.stream.destroy(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      body.stream.once("close", () => signal.removeEventListener("abort", onAbort));
    }
    response = new Response(webStream(body), init);
    bodies.set(response, body);
  }
  Object.defineProperty(response, "url", { value: request.url.href });
  Object.defineProperty(response, "redirected", { value: redirected });
  return response;
}

/**
 * The body as fetch hands it on: decompressed when the server says it is compressed (codings
 * undone last first; an unknown one leaves the body as it came, as fetch does).
 */
async function decoded(res: IncomingMessage): Promise<Readable> {
  const codings = (res.headers["content-encoding"] ?? "")
    .toLowerCase()
    .split(",")
    .map((coding) => coding.trim())
    .filter((coding) => coding !== "" && coding !== "identity")
    .reverse();
  if (codings.length === 0 || !codings.every((coding) => coding in DECOMPRESSORS)) return res;
  const zlib = await import("node:zlib");
  const { pipeline } = await import("node:stream");
  const steps = codings.map((coding) => DECOMPRESSORS[coding as keyof typeof DECOMPRESSORS](zlib));
  return pipeline([res, ...steps], () => {}) as unknown as Readable;
}

type Zlib = typeof import("node:zlib");

/** Lenient about a body that ends without its final block, as fetch is. */
const DECOMPRESSORS = {
  gzip: (z: Zlib) =>
    z.createGunzip({ flush: z.constants.Z_SYNC_FLUSH, finishFlush: z.constants.Z_SYNC_FLUSH }),
  "x-gzip": (z: Zlib) =>
    z.createGunzip({ flush: z.constants.Z_SYNC_FLUSH, finishFlush: z.constants.Z_SYNC_FLUSH }),
  deflate: (z: Zlib) =>
    z.createInflate({ flush: z.constants.Z_SYNC_FLUSH, finishFlush: z.constants.Z_SYNC_FLUSH }),
  br: (z: Zlib) =>
    z.createBrotliDecompress({
      flush: z.constants.BROTLI_OPERATION_FLUSH,
      finishFlush: z.constants.BROTLI_OPERATION_FLUSH,
    }),
};

/**
 * The body as a web stream, for whoever reads it through `Response` (the SDKs, for an error's
 * text). Pulled only when read (high-water mark 0), so a body read with `responseReads` is never
 * touched through it.
 */
function webStream(body: Body): ReadableStream<Uint8Array> {
  let chunks: AsyncIterator<Uint8Array[]> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (chunks === undefined) {
          if (body.taken) throw new TypeError("the body was already read");
          body.taken = true;
          chunks = read(body);
        }
        const next = await chunks.next();
        if (next.done) controller.close();
        else for (const chunk of next.value) controller.enqueue(chunk);
      },
      async cancel() {
        body.stream.destroy();
        await chunks?.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}
