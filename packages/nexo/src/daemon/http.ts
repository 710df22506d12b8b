/**
 * The health listener: `/healthz` (the process answers), `/readyz` (the broker, every plugin and
 * every MCP server are ready), `/metrics` (Prometheus text). GET only.
 *
 * It listens on 127.0.0.1 unless told otherwise. Anything reachable from another machine must be
 * protected, so a non-loopback bind without a bearer token is refused at startup. With a token,
 * every path (unknown ones included, so nothing about the server leaks) needs
 * `Authorization: Bearer <token>`, compared in constant time; a failure is a bare 401.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createLogger } from "../log.js";
import { DEFAULT_HTTP_BIND, isLoopbackHost } from "./config/daemon.js";
import { bearerToken, constantTimeEqual, tokenProblem } from "./http-auth.js";
import type { Metrics } from "./metrics.js";
import type { ReadinessSource } from "./readiness.js";

export type HealthServerErrorCode =
  /** The host is empty or the port out of range. */
  | "invalid_bind"
  /** A non-loopback bind was asked for without a token. */
  | "token_required"
  /** The token is too short or has characters a header cannot carry. */
  | "weak_token"
  /** The socket could not be bound (port in use, address not on this host, permission). */
  | "listen_failed";

export class HealthServerError extends Error {
  override readonly name = "HealthServerError";
  readonly code: HealthServerErrorCode;

  constructor(code: HealthServerErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
  }
}

export interface HealthServerOptions {
  /**
   * An IP address or a host name. Default 127.0.0.1. Only 127.0.0.0/8, ::1 and `localhost` count
   * as loopback: any other name may resolve to a public interface.
   */
  host?: string;
  /** Default 7780 (as daemon.yaml's `http.bind`); 0 picks a free port. */
  port?: number;
  /** Required when `host` is not loopback. */
  token?: string;
  metrics: Metrics;
  readiness: ReadinessSource;
  logger?: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

export interface HealthServer {
  /** The address actually bound. */
  readonly host: string;
  readonly port: number;
  /** `http://host:port`, brackets around IPv6. */
  readonly url: string;
  /** The bearer token requests must present now; undefined when none is required. */
  token(): string | undefined;
  /**
   * Requires `token` from the next request on (the admin RPC's auth/rotate_token). Throws
   * HealthServerError `weak_token` for a token that cannot be used.
   */
  setToken(token: string): void;
  close(): Promise<void>;
}

const [DEFAULT_HOST, DEFAULT_PORT] = splitDefaultBind(DEFAULT_HTTP_BIND);

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const host = listenHost(options.host ?? DEFAULT_HOST);
  const port = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new HealthServerError("invalid_bind", `health port must be an integer 0…65535, got ${port}`);
  }
  const { token } = options;
  if (token === undefined || token === "") {
    if (!isLoopbackHost(host)) {
      throw new HealthServerError(
        "token_required",
        `the health listener would be reachable from other machines on ${host}; set a bearer token, ` +
          `or bind to 127.0.0.1`,
      );
    }
  } else {
    const problem = tokenProblem(token);
    if (problem !== undefined) throw new HealthServerError("weak_token", `health token rejected: ${problem}`);
  }
  const logger = options.logger ?? createLogger({ base: { component: "health" } });
  const auth = { token: token || undefined };
  const handle = requestHandler({ ...options, auth, logger });
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error({ err: describe(error), path: req.url }, "health request failed");
      if (!res.headersSent) send(res, 500, "");
      else res.destroy();
    });
  });
  // Probes are tiny; a client that dribbles its headers is dropped instead of held open.
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 64;
  await listen(server, host, port);
  // After listening, socket errors (EMFILE on accept, …) are logged; they must not crash the daemon.
  server.on("error", (error) => logger.error({ err: describe(error) }, "health listener error"));
  const address = server.address();
  const bound = typeof address === "object" && address !== null ? address : { address: host, port };
  let closing: Promise<void> | undefined;
  return {
    host: bound.address,
    port: bound.port,
    url: `http://${bound.address.includes(":") ? `[${bound.address}]` : bound.address}:${bound.port}`,
    token: () => auth.token,
    setToken: (next) => {
      const problem = tokenProblem(next);
      if (problem !== undefined)
        throw new HealthServerError("weak_token", `health token rejected: ${problem}`);
      auth.token = next;
    },
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

function requestHandler(
  options: HealthServerOptions & {
    /** Read on every request, so a rotated token applies from the next one. */
    auth: { token: string | undefined };
    logger: NonNullable<HealthServerOptions["logger"]>;
  },
): RequestHandler {
  const { auth, metrics, readiness, logger } = options;
  return async (req, res) => {
    // A request body (there should be none) is discarded, not buffered.
    req.resume();
    const token = auth.token;
    if (token !== undefined) {
      const presented = bearerToken(req.headers.authorization);
      if (presented === undefined || !constantTimeEqual(presented, token)) {
        res.setHeader("WWW-Authenticate", "Bearer");
        send(res, 401, "");
        return;
      }
    }
    if (req.method !== "GET") {
      res.setHeader("Allow", "GET");
      send(res, 405, "");
      return;
    }
    const path = (req.url ?? "/").split("?", 1)[0];
    switch (path) {
      case "/healthz":
        send(res, 200, "ok\n", "text/plain; charset=utf-8");
        return;
      case "/readyz": {
        let report: ReturnType<ReadinessSource>;
        try {
          report = readiness();
        } catch (error) {
          logger.warn({ err: describe(error) }, "readiness check failed");
          report = { ready: false, checks: [{ name: "readiness", ready: false, detail: "a check failed" }] };
        }
        const notReady = report.checks.filter((check) => !check.ready);
        const body = report.ready
          ? { status: "ready", checks: report.checks }
          : { status: "not_ready", not_ready: notReady, checks: report.checks };
        send(res, report.ready ? 200 : 503, `${JSON.stringify(body)}\n`, "application/json");
        return;
      }
      case "/metrics": {
        const { contentType, body } = await metrics.render();
        send(res, 200, body, contentType);
        return;
      }
      default:
        send(res, 404, "");
    }
  };
}

function send(res: ServerResponse, status: number, body: string, contentType?: string): void {
  res.statusCode = status;
  res.setHeader("Cache-Control", "no-store");
  if (contentType !== undefined) res.setHeader("Content-Type", contentType);
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

/**
 * The address to listen on. `localhost` becomes 127.0.0.1: what the name resolves to is up to the
 * resolver, and a loopback bind must stay loopback.
 */
function listenHost(host: string): string {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (bare.trim() === "") throw new HealthServerError("invalid_bind", "the health listener needs a host");
  return bare.toLowerCase() === "localhost" ? "127.0.0.1" : bare;
}

function splitDefaultBind(bind: string): [string, number] {
  const colon = bind.lastIndexOf(":");
  return [bind.slice(0, colon), Number(bind.slice(colon + 1))];
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new HealthServerError(
          "listen_failed",
          `cannot listen on ${host}:${port}: ${error.code ?? error.message}`,
          error,
        ),
      );
    };
    server.once("error", onError);
    server.listen({ host, port }, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
