/**
 * The AppServer's HTTP listener: `GET /healthz` and `GET /readyz` for launchers (no token), and the
 * WebSocket at `/ws`, one JSON-RPC message per text frame.
 *
 * Who may connect is decided once, here, before the upgrade:
 * - with a token, the upgrade URL must carry `?token=<token>` (compared in constant time); a
 *   missing or wrong token is answered `401` and the socket closed — no WebSocket is ever opened;
 * - without a token (loopback only, listen.ts refuses anything else), an upgrade that carries an
 *   `Origin` header is refused with `403`: browsers always send one and cannot leave it out, while
 *   the real clients (Node and Rust programs) send none — so a web page the user happens to visit
 *   cannot drive the agent through a token-less loopback port;
 * - any other path is `404`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { WebSocketTransport } from "@nexo/wire";
import { type WebSocket, WebSocketServer } from "ws";
import { constantTimeEqual } from "../../daemon/http-auth.js";
import type { Logger } from "../../log.js";
import type { AppServerHost } from "./host.js";
import { MAX_MESSAGE_BYTES } from "./host.js";
import { DEFAULT_WEBSOCKET_STALL_MS } from "./outbox.js";

export interface WebSocketListenerOptions {
  host: string;
  port: number;
  token?: string;
  server: AppServerHost;
  logger: Logger;
}

export interface WebSocketListener {
  /** `ws://host:port/ws` as bound (the port resolved when 0 was asked for). */
  readonly url: string;
  readonly port: number;
  /** Stops accepting; open connections are closed by the host. */
  close(): Promise<void>;
}

/** The largest frame buffered at all. */
export const MAX_FRAME_BYTES = 4 * MAX_MESSAGE_BYTES;

/** The close code for a connection ended because its client stopped reading (outbox.ts). */
const CLOSE_POLICY = 1008;

export async function listenWebSocket(options: WebSocketListenerOptions): Promise<WebSocketListener> {
  const { token, server: host, logger } = options;
  // A frame over the message cap is answered -32600 and the connection lives on, up to four times
  // the cap (a frame may hold several messages); beyond that ws refuses to buffer it and closes with 1009.
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const http = createServer((req, res) => answer(req, res, host));
  http.headersTimeout = 10_000;
  http.requestTimeout = 10_000;
  http.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    const refusal = upgradeRefusal(req, token, host);
    if (refusal !== undefined) {
      refuse(socket, refusal);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      host.accept(new WebSocketTransport(ws, { maxMessageBytes: MAX_MESSAGE_BYTES }), {
        kind: "websocket",
        abort: (reason) => ws.close(CLOSE_POLICY, truncate(reason)),
        // ws keeps its TCP socket in `_socket` (not typed): corked per tick, a tick's frames leave in
        // one write. Without it every frame is its own write, which is only slower.
        stream: (ws as unknown as { _socket?: Socket })._socket,
        stallMs: DEFAULT_WEBSOCKET_STALL_MS,
      });
    });
  });
  await listen(http, options.host, options.port);
  http.on("error", (error) => logger.error({ err: error.message }, "AppServer listener error"));
  const address = http.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;
  const shownHost = options.host.includes(":") ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `ws://${shownHost}:${port}/ws`,
    port,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        wss.close();
        http.close(() => resolve());
        http.closeAllConnections();
      });
      return closing;
    },
  };
}

function answer(req: IncomingMessage, res: ServerResponse, host: AppServerHost): void {
  req.resume();
  const path = (req.url ?? "/").split("?", 1)[0];
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    send(res, 405, "");
  } else if (path === "/healthz") {
    send(res, 200, "ok\n");
  } else if (path === "/readyz") {
    if (host.isClosing) send(res, 503, "shutting down\n");
    else send(res, 200, "ready\n");
  } else {
    send(res, 404, "");
  }
}

function send(res: ServerResponse, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Content-Type", "text/plain; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

/** Why an upgrade request is refused (the status line to answer), or undefined to accept it. */
function upgradeRefusal(
  req: IncomingMessage,
  token: string | undefined,
  host: AppServerHost,
): string | undefined {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname !== "/ws") return "404 Not Found";
  if (token !== undefined) {
    const presented = url.searchParams.get("token");
    if (presented === null || !constantTimeEqual(presented, token)) return "401 Unauthorized";
  } else if (req.headers.origin !== undefined) {
    return "403 Forbidden";
  }
  if (host.isClosing) return "503 Service Unavailable";
  return undefined;
}

function refuse(socket: Socket, status: string): void {
  if (socket.writable) {
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  }
  socket.destroySoon();
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) =>
      reject(new Error(`cannot listen on ${host}:${port}: ${error.code ?? error.message}`));
    server.once("error", onError);
    server.listen({ host, port }, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

/** A close frame's reason holds at most 123 bytes. */
function truncate(reason: string): string {
  return Buffer.byteLength(reason) <= 123 ? reason : `${reason.slice(0, 100)}...`;
}
