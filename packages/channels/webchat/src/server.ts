/**
 * The web chat's listener: one HTTP server that serves the widget script (`/widget.js`), a page to
 * try it (`/`), the files replies carry (`/files/<random>/<name>`), and the widget's WebSocket
 * (`/ws`).
 *
 * A WebSocket upgrade is accepted only from an allowed Origin (WEBCHAT_ALLOWED_ORIGINS, by default
 * the listener's own): any other page — or a client sending no Origin — gets 403 before a
 * WebSocket exists, so a page the operator did not list can neither chat nor read a visitor's
 * conversation. The first frame must be `hello` (with the visitor's token, if it has one) within
 * HELLO_TIMEOUT_MS; everything else the channel decides (./channel.ts). Frames are JSON, at most
 * the upload limit plus some room; a frame that is not understood closes the socket with 1008.
 *
 *   widget → plugin   {type: "hello", token?}
 *                     {type: "message", id, text, files?: [{name, mime_type?, data_base64}]}
 *   plugin → widget   {type: "welcome", token, visitor, title, history, limits}
 *                     {type: "status", id, status: received | refused | rate_limited, reason?, retry_after_ms?}
 *                     {type: "delta", stream, text}      a piece of the reply being written
 *                     {type: "reply", entry}             a whole reply, as kept in the history
 *                     {type: "error", reason}            then the socket closes
 */
import { once } from "node:events";
import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { type WebSocket, WebSocketServer } from "ws";

const HELLO_TIMEOUT_MS = 10_000;
const PING_INTERVAL_MS = 30_000;
const SERVED_FILE = /^\/files\/([0-9a-f]{32})\/([^/]{1,200})$/;

export interface HelloFrame {
  type: "hello";
  token?: unknown;
}
export interface MessageFrame {
  type: "message";
  id: string;
  text: string;
  files: { name: string; mime_type?: string; data_base64: string }[];
}

export interface ServerHandlers {
  /** A hello: the visitor it proves (or a new one), with the welcome frame to send; or a refusal. */
  hello(
    frame: HelloFrame,
    remote: string,
  ): { visitor: string; welcome: Record<string, unknown> } | { refuse: string };
  /** A visitor's message; resolves with the status frame to send back. */
  message(visitor: string, frame: MessageFrame): Promise<Record<string, unknown>>;
  log(line: string): void;
}

export interface ListenerOptions {
  host: string;
  port: number;
  allowedOrigins: "*" | string[] | undefined;
  /** Largest frame accepted, bytes. */
  maxFrameBytes: number;
  /** The compiled widget script. */
  widgetFile: string;
  /** Where the files replies carry are kept (`<dir>/<random>/<name>`). */
  filesDir: string;
  title: string;
}

export class WebchatListener {
  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private readonly sockets = new Map<string, Set<WebSocket>>();
  private readonly raw = new Set<Socket>();
  private ping: NodeJS.Timeout | undefined;
  private origins = new Set<string>();
  url = "";

  constructor(
    private readonly options: ListenerOptions,
    private readonly handlers: ServerHandlers,
  ) {}

  async listen(): Promise<string> {
    const server = createServer((req, res) => this.serve(req, res));
    server.on("connection", (socket) => {
      this.raw.add(socket);
      socket.once("close", () => this.raw.delete(socket));
    });
    const wss = new WebSocketServer({ noServer: true, maxPayload: this.options.maxFrameBytes });
    server.on("upgrade", (req, socket, head) => {
      const refusal = this.upgradeRefusal(req);
      if (refusal !== undefined) {
        this.handlers.log(`WebSocket refused from ${req.socket.remoteAddress}: ${refusal}`);
        socket.end(
          `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${refusal}\n`,
        );
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, req.socket.remoteAddress ?? "?"));
    });
    server.listen(this.options.port, this.options.host);
    await Promise.race([
      once(server, "listening"),
      once(server, "error").then(([error]) => {
        throw error;
      }),
    ]);
    this.server = server;
    this.wss = wss;
    const address = server.address() as AddressInfo;
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    this.url = `http://${host}:${address.port}`;
    const own = [this.url, `http://localhost:${address.port}`];
    this.origins = new Set(Array.isArray(this.options.allowedOrigins) ? this.options.allowedOrigins : own);
    this.ping = setInterval(() => {
      for (const ws of wss.clients) ws.ping();
    }, PING_INTERVAL_MS);
    this.ping.unref();
    return this.url;
  }

  /** Sends a frame to every open widget of the visitor; returns how many got it. */
  push(visitor: string, frame: Record<string, unknown>): number {
    const open = [...(this.sockets.get(visitor) ?? [])].filter((ws) => ws.readyState === ws.OPEN);
    const data = JSON.stringify(frame);
    for (const ws of open) ws.send(data);
    return open.length;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (this.ping !== undefined) clearInterval(this.ping);
    for (const ws of this.wss?.clients ?? []) ws.close(1001, "the chat is restarting");
    this.wss?.close();
    this.sockets.clear();
    if (server === undefined) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    // A widget that does not answer the close handshake must not hold the plugin's stop.
    setTimeout(() => {
      for (const socket of this.raw) socket.destroy();
    }, 1000).unref();
    await closed;
  }

  private upgradeRefusal(req: IncomingMessage): string | undefined {
    if (new URL(req.url ?? "/", "http://x").pathname !== "/ws") return "no WebSocket at this path";
    const origin = req.headers.origin;
    if (origin === undefined) return "no Origin header";
    if (this.options.allowedOrigins === "*") return undefined;
    return this.origins.has(origin) ? undefined : `origin ${origin} is not in WEBCHAT_ALLOWED_ORIGINS`;
  }

  private accept(ws: WebSocket, remote: string): void {
    let visitor: string | undefined;
    const helloTimer = setTimeout(() => ws.close(1008, "no hello"), HELLO_TIMEOUT_MS);
    const fail = (reason: string) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: "error", reason }));
      ws.close(1008, reason.slice(0, 120));
    };
    ws.on("error", () => undefined);
    ws.on("close", () => {
      clearTimeout(helloTimer);
      if (visitor !== undefined) this.sockets.get(visitor)?.delete(ws);
    });
    ws.on("message", (data, isBinary) => {
      let frame: Record<string, unknown>;
      try {
        if (isBinary) throw new Error("binary");
        frame = JSON.parse(data.toString()) as Record<string, unknown>;
        if (typeof frame !== "object" || frame === null) throw new Error("not an object");
      } catch {
        return fail("frames are JSON objects");
      }
      if (visitor === undefined) {
        if (frame.type !== "hello") return fail("the first frame must be hello");
        clearTimeout(helloTimer);
        const answer = this.handlers.hello(frame as unknown as HelloFrame, remote);
        if ("refuse" in answer) return fail(answer.refuse);
        visitor = answer.visitor;
        let set = this.sockets.get(visitor);
        if (set === undefined) {
          set = new Set();
          this.sockets.set(visitor, set);
        }
        set.add(ws);
        ws.send(JSON.stringify(answer.welcome));
        return;
      }
      const message = parseMessage(frame);
      if (typeof message === "string") return fail(message);
      const from = visitor;
      this.handlers.message(from, message).then(
        (status) => {
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(status));
        },
        (error: unknown) => {
          this.handlers.log(`message ${message.id} from visitor ${from}: ${(error as Error).message}`);
          if (ws.readyState === ws.OPEN)
            ws.send(
              JSON.stringify({ type: "status", id: message.id, status: "refused", reason: "internal error" }),
            );
        },
      );
    });
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const headers = { "x-content-type-options": "nosniff", "cache-control": "no-cache" };
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { ...headers, "content-type": "text/plain" }).end("GET only\n");
      return;
    }
    if (path === "/widget.js") {
      if (!existsSync(this.options.widgetFile)) {
        res.writeHead(500, { ...headers, "content-type": "text/plain" }).end("the widget is not built\n");
        return;
      }
      res.writeHead(200, { ...headers, "content-type": "text/javascript; charset=utf-8" });
      res.end(readFileSync(this.options.widgetFile));
      return;
    }
    if (path === "/") {
      res.writeHead(200, {
        ...headers,
        "content-type": "text/html; charset=utf-8",
        "content-security-policy":
          "default-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self' https: data:",
      });
      res.end(demoPage(this.options.title, this.url));
      return;
    }
    if (path === "/health") {
      res.writeHead(200, { ...headers, "content-type": "text/plain" }).end("ok\n");
      return;
    }
    const served = SERVED_FILE.exec(path);
    if (served !== null) {
      const name = decodeURIComponent(served[2]!);
      const file = join(this.options.filesDir, served[1]!, name);
      if (!name.includes("/") && !name.startsWith(".") && existsSync(file) && statSync(file).isFile()) {
        const meta = readMeta(`${file}.meta.json`);
        res.writeHead(200, {
          ...headers,
          "content-type": meta.mime_type ?? "application/octet-stream",
          "content-disposition": meta.mime_type?.startsWith("image/") ? "inline" : "attachment",
          "content-security-policy": "sandbox",
          "access-control-allow-origin": "*",
        });
        createReadStream(file).pipe(res);
        return;
      }
    }
    res.writeHead(404, { ...headers, "content-type": "text/plain" }).end("not found\n");
  }
}

function readMeta(file: string): { mime_type?: string } {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as { mime_type?: string };
  } catch {
    return {};
  }
}

/** A `message` frame's fields checked; a string names what is wrong. */
function parseMessage(frame: Record<string, unknown>): MessageFrame | string {
  if (frame.type !== "message") return `unknown frame type ${JSON.stringify(frame.type)}`;
  const { id, text, files } = frame;
  if (typeof id !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) return "a message needs an id";
  if (typeof text !== "string") return "a message needs a text (may be empty with files)";
  const list: MessageFrame["files"] = [];
  if (files !== undefined) {
    if (!Array.isArray(files) || files.length > 10) return "files must be a list of at most 10";
    for (const file of files as Record<string, unknown>[]) {
      if (typeof file?.name !== "string" || typeof file.data_base64 !== "string")
        return "each file needs a name and data_base64";
      list.push({
        name: file.name,
        data_base64: file.data_base64,
        ...(typeof file.mime_type === "string" ? { mime_type: file.mime_type } : {}),
      });
    }
  }
  return { type: "message", id, text, files: list };
}

function demoPage(title: string, url: string): string {
  const html = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const escaped = html(title);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escaped}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; margin: 2rem">
<h1>${escaped}</h1>
<p>This page embeds the nexo web chat widget the way any site does, with one script tag:</p>
<pre>&lt;script src="${html(url)}/widget.js" async&gt;&lt;/script&gt;</pre>
<script src="/widget.js" async></script>
</body></html>
`;
}
