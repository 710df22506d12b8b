/**
 * The console's web server on loopback: the built UI as static files, and a small JSON API —
 * login, the session, admin calls (./rpc.ts) and the live stream (./live.ts). Every request passes
 * one gate (`guard`) first: the Host header must name this loopback listener (a page on another
 * site that rebinds its DNS name to 127.0.0.1 is refused), every /api route but login needs a
 * live session, and every POST needs the session's CSRF header and, when the browser sends one,
 * this console's own Origin.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { AdminClient } from "nexo-plugin-sdk/microapp";
import sirv from "sirv";
import type { LiveStreams } from "./live.js";
import { CLEARED_SESSION_COOKIE, CSRF_HEADER, type LoginGate, type Session, sessionCookie } from "./login.js";
import { callForBrowser } from "./rpc.js";
import { CONSOLE_HOST } from "./settings.js";

const MAX_BODY_BYTES = 1024 * 1024;
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
};

export interface ConsoleServerOptions {
  port: number;
  uiDir: string;
  gate: LoginGate;
  live: LiveStreams;
  admin: AdminClient;
  /**
   * Who the console runs as: its version for the UI's header, its extension id so the Extensions
   * page knows which microapp row is the console itself.
   */
  about: { version: string; id: string };
}

export interface ConsoleServer {
  url: string;
  server: Server;
}

export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const statics = sirv(options.uiDir, { single: true, dev: false, etag: true });
  let origins = new Set<string>();
  const server = createServer((req, res) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    handle(req, res).catch((error: unknown) => {
      const status = error instanceof BodyError ? 400 : 500;
      if (!res.headersSent) json(res, status, { error: { code: -32603, message: (error as Error).message } });
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!origins.has(`http://${req.headers.host ?? ""}`)) {
      json(res, 421, {
        error: { code: -32600, message: "this console answers only on its loopback address" },
      });
      return;
    }
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    if (!url.pathname.startsWith("/api/")) {
      if (req.method !== "GET" && req.method !== "HEAD") return void json(res, 405, error("GET only"));
      statics(req, res, () => json(res, 404, error("not found")));
      return;
    }
    if (req.method === "POST" && req.headers.origin !== undefined && !origins.has(req.headers.origin)) {
      return void json(res, 403, error("cross-origin request refused"));
    }
    if (url.pathname === "/api/login" && req.method === "POST") {
      const body = await readJson(req);
      const outcome = options.gate.login((body as { token?: unknown } | undefined)?.token);
      if (outcome === "throttled") return void json(res, 429, error("too many failed logins; wait a minute"));
      if (outcome === "refused") return void json(res, 401, error("wrong token"));
      res.setHeader("set-cookie", sessionCookie(outcome));
      return void json(res, 200, sessionInfo(outcome));
    }
    const session = options.gate.session(req.headers.cookie);
    if (session === undefined) return void json(res, 401, error("log in first"));
    if (req.method === "POST" && !options.gate.csrfMatches(session, req.headers[CSRF_HEADER])) {
      return void json(res, 403, error(`missing or wrong ${CSRF_HEADER} header`));
    }
    if (url.pathname === "/api/session" && req.method === "GET")
      return void json(res, 200, sessionInfo(session));
    if (url.pathname === "/api/logout" && req.method === "POST") {
      options.gate.logout(session);
      res.setHeader("set-cookie", CLEARED_SESSION_COOKIE);
      return void json(res, 200, { ok: true });
    }
    if (url.pathname === "/api/live" && req.method === "GET") return void options.live.open(res);
    if (url.pathname.startsWith("/api/rpc/") && req.method === "POST") {
      const outcome = await callForBrowser(
        options.admin,
        url.pathname.slice("/api/rpc/".length),
        await readJson(req),
      );
      return void json(
        res,
        outcome.ok ? 200 : outcome.status,
        outcome.ok ? { result: outcome.result } : outcome,
      );
    }
    json(res, 404, error("no such route"));
  }

  function sessionInfo(session: Session) {
    return {
      csrf: session.csrf,
      operator: options.gate.operatorHash,
      version: options.about.version,
      id: options.about.id,
    };
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, CONSOLE_HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  origins = new Set([`http://${CONSOLE_HOST}:${port}`, `http://localhost:${port}`]);
  return { url: `http://${CONSOLE_HOST}:${port}/`, server };
}

function error(message: string) {
  return { error: { message } };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(text);
}

class BodyError extends Error {}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BodyError("request body over 1 MiB");
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new BodyError("the request body is not JSON");
  }
}
