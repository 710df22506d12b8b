/**
 * The loopback channel's HTTP face, what a terminal chat (chat.ts), curl or a test talks to:
 *
 *   POST /messages            {from, text} → 202 {message_id, timestamp} once nexo has taken the
 *                                            message (in its durable inbox, when nexo offers the
 *                                            acknowledged publish); else 503 (retry later,
 *                                            Retry-After), 404 (no agent on this channel), 500
 *   GET  /messages?to=ID[&timeout=MS]      → 200 {messages: [...]}: what is queued for ID, or
 *                                            (long-poll) the next reply within MS
 *   GET  /stream?to=ID                     → Server-Sent Events, one `message` event per reply
 *   GET  /healthz                          → 200 {ok: true}
 *   POST /pairing/scan?code=C {device}     → 200 {ok: true}: a device scanned a pairing QR code
 *   POST /pairing/confirm {code}           → 200 {device_jid}: its user confirmed; linked
 *                                            (404 unknown or ended code, 409 out of order)
 *
 * With a token configured every route but /healthz needs `Authorization: Bearer <token>`.
 * Errors are JSON `{error}` with the usual statuses (400, 401, 404, 405, 413, 503).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CONTACT_ID_PATTERN, type DeliveredMessage, type InboundPost, parseInboundPost } from "./messages.js";
import { type LoopbackPairing, PairingRefusedError } from "./pairing.js";
import type { PostOffice } from "./post-office.js";

const MAX_BODY_BYTES = 64 * 1024;
/** Comment lines on idle streams, so proxies and clients can tell a quiet stream from a dead one. */
const HEARTBEAT_MS = 15_000;
/** How long `close` lets requests in progress (a POST being published) finish before cutting them. */
const CLOSE_GRACE_MS = 1_000;

export interface LoopbackServerOptions {
  host: string;
  port: number;
  token: string | undefined;
  maxWaitMs: number;
  postOffice: PostOffice;
  /** Where pairing scans and confirmations go. */
  pairing: LoopbackPairing;
  /**
   * Hands a posted message to the daemon; resolves with its id and receive time once the daemon
   * took it. A PostRefusedError says which status to answer; any other failure is a 503.
   */
  onPost: (post: InboundPost) => Promise<{ message_id: string; timestamp: string }>;
  log: (line: string) => void;
}

export interface ListeningAddress {
  host: string;
  port: number;
  url: string;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** `Retry-After` in seconds, for a 503 that may pass later. */
    readonly retryAfterSecs?: number,
  ) {
    super(message);
  }
}

/** `onPost`'s refusal: the daemon did not take the message, and this is the status to answer. */
export class PostRefusedError extends HttpError {
  override readonly name = "PostRefusedError";
}

export class LoopbackServer {
  private readonly server: Server;
  /** Open event streams: they never end by themselves, so `close` ends them. */
  private readonly streams = new Set<ServerResponse>();
  private readonly tokenDigest: Buffer | undefined;

  constructor(private readonly options: LoopbackServerOptions) {
    this.tokenDigest = options.token === undefined ? undefined : digest(options.token);
    this.server = createServer((req, res) => {
      this.route(req, res).catch((error: unknown) => this.fail(res, error));
    });
  }

  /** Starts listening; rejects with the system error (EADDRINUSE, EACCES, …). */
  listen(): Promise<ListeningAddress> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off("error", reject);
        const address = this.server.address() as AddressInfo;
        const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
        resolve({ host: address.address, port: address.port, url: `http://${host}:${address.port}` });
      });
    });
  }

  /**
   * Stops listening: waiting long-polls are answered `{messages: []}` (the post office closes),
   * streams are ended, and connections are closed once their responses are out.
   */
  async close(): Promise<void> {
    this.options.postOffice.close();
    for (const res of this.streams) res.end();
    this.streams.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // The long-polls answer in the next microtasks; after that their sockets are idle.
    await new Promise((resolve) => setImmediate(resolve));
    this.server.closeIdleConnections();
    const cut = setTimeout(() => this.server.closeAllConnections(), CLOSE_GRACE_MS);
    await closed;
    clearTimeout(cut);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://loopback.invalid");
    const allowed = ROUTES[url.pathname];
    if (allowed === undefined) throw new HttpError(404, `no route ${url.pathname}`);
    if (!allowed.includes(req.method ?? "")) {
      res.setHeader("allow", allowed.join(", "));
      throw new HttpError(405, `${url.pathname} only accepts ${allowed.join(", ")}`);
    }
    if (url.pathname === "/healthz") return sendJson(res, 200, { ok: true });
    this.authorize(req);
    if (url.pathname === "/stream") return this.stream(res, recipientOf(url));
    if (url.pathname.startsWith("/pairing/")) return this.pair(req, res, url);
    if (req.method === "GET") return this.longPoll(res, recipientOf(url), this.waitOf(url));
    return this.post(req, res);
  }

  private authorize(req: IncomingMessage): void {
    if (this.tokenDigest === undefined) return;
    const header = req.headers.authorization ?? "";
    const presented = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
    // Digests have equal lengths, so the comparison takes the same time whatever was presented.
    if (!timingSafeEqual(digest(presented), this.tokenDigest)) {
      throw new HttpError(401, "missing or wrong bearer token");
    }
  }

  private async post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJson(req);
    const post = parseInboundPost(body);
    if ("problems" in post) throw new HttpError(400, post.problems.join("; "));
    this.options.postOffice.touch(post.from);
    let receipt: { message_id: string; timestamp: string };
    try {
      receipt = await this.options.onPost(post);
    } catch (error) {
      if (error instanceof PostRefusedError) throw error;
      throw new HttpError(503, `could not hand the message to nexo: ${(error as Error).message}`, 1);
    }
    sendJson(res, 202, receipt);
  }

  private async pair(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const body = (await readJson(req)) as { code?: unknown; device?: unknown } | null;
    const code = url.searchParams.get("code") ?? body?.code;
    if (typeof code !== "string" || code === "") throw new HttpError(400, "the pairing code is missing");
    try {
      if (url.pathname === "/pairing/confirm")
        return sendJson(res, 200, { device_jid: this.options.pairing.confirm(code) });
      const device = body?.device;
      if (typeof device !== "string" || !CONTACT_ID_PATTERN.test(device))
        throw new HttpError(400, `device must be an id matching ${CONTACT_ID_PATTERN}`);
      this.options.pairing.scan(code, device);
      sendJson(res, 200, { ok: true });
    } catch (error) {
      if (error instanceof PairingRefusedError) throw new HttpError(error.status, error.message);
      throw error;
    }
  }

  private async longPoll(res: ServerResponse, to: string, waitMs: number): Promise<void> {
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    const isConnected = () => !res.destroyed && !res.writableEnded;
    const messages = await this.options.postOffice.fetch(to, waitMs, isConnected, gone.signal);
    if (isConnected()) sendJson(res, 200, { messages });
  }

  private stream(res: ServerResponse, to: string): void {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    res.write(`retry: 1000\n: connected as ${to}\n\n`);
    this.streams.add(res);
    const send = (message: DeliveredMessage): boolean => {
      if (res.destroyed || res.writableEnded) return false;
      res.write(`id: ${message.message_id}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`);
      return true;
    };
    const unsubscribe = this.options.postOffice.subscribe(to, send);
    const heartbeat = setInterval(() => res.write(": ping\n\n"), HEARTBEAT_MS);
    // The response's "close": the client went away, or `close` ended the stream.
    res.on("close", () => {
      clearInterval(heartbeat);
      unsubscribe();
      this.streams.delete(res);
    });
  }

  private waitOf(url: URL): number {
    const raw = url.searchParams.get("timeout");
    if (raw === null) return this.options.maxWaitMs;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value > this.options.maxWaitMs) {
      throw new HttpError(400, `timeout must be milliseconds from 0 to ${this.options.maxWaitMs}`);
    }
    return value;
  }

  private fail(res: ServerResponse, error: unknown): void {
    if (error instanceof HttpError) {
      if (error.retryAfterSecs !== undefined && !res.headersSent)
        res.setHeader("retry-after", String(error.retryAfterSecs));
      if (!res.headersSent) sendJson(res, error.status, { error: error.message }, error.status === 413);
      return;
    }
    this.options.log(
      `request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
    else res.destroy();
  }
}

const ROUTES: Readonly<Record<string, readonly string[]>> = {
  "/messages": ["GET", "POST"],
  "/stream": ["GET"],
  "/healthz": ["GET"],
  "/pairing/scan": ["POST"],
  "/pairing/confirm": ["POST"],
};

function recipientOf(url: URL): string {
  const to = url.searchParams.get("to");
  if (to === null || !CONTACT_ID_PATTERN.test(to)) {
    throw new HttpError(400, `?to= must be a contact id matching ${CONTACT_ID_PATTERN}`);
  }
  return to;
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function sendJson(res: ServerResponse, status: number, value: unknown, closeConnection = false): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    ...(closeConnection ? { connection: "close" } : {}),
  });
  res.end(body);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  try {
    return JSON.parse(await readBody(req));
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(400, "the body is not JSON");
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        // Stop keeping the body, but let it drain so the 413 reaches the client.
        req.removeAllListeners("data");
        req.resume();
        reject(new HttpError(413, `the body is larger than ${MAX_BODY_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
