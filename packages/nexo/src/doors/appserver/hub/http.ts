/**
 * The hub's HTTP API on loopback: `GET /v1/status` (open, so a client can tell a live hub from a
 * stale lock), and behind `Authorization: Bearer <token>` (compared in constant time):
 *
 *   POST /v1/appservers/ensure        {workspacePath, startIfMissing?} → the workspace's server
 *   GET  /v1/appservers               every server this hub started
 *   GET  /v1/appservers/by-workspace  ?path= → one, nothing started
 *   POST /v1/appservers/stop          {workspacePath}
 *   POST /v1/appservers/restart       {workspacePath} → a fresh server
 *   GET  /v1/events                   Server-Sent Events of the servers' lives (events.ts)
 *   POST /v1/shutdown                 stops every server, then the hub
 *
 * Errors are `{error: {code, message, details?}}` with the HTTP status of their kind. Bodies over
 * 64 KiB are refused (413) before they are read whole.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  HubEnsureRequestSchema,
  type HubErrorCode,
  type HubStatus,
  HubWorkspaceRequestSchema,
} from "@nexo/wire/schemas/appserver";
import type { z } from "zod";
import { bearerToken, constantTimeEqual } from "../../../daemon/http-auth.js";
import { isoTime } from "../../../iso-time.js";
import type { Logger } from "../../../log.js";
import type { HubEvents } from "./events.js";
import { HubError, type ManagedAppServers } from "./registry.js";

const MAX_BODY_BYTES = 64 * 1024;

export interface HubApiOptions {
  registry: ManagedAppServers;
  events: HubEvents;
  token: string;
  version: string;
  statePath: string;
  logger: Logger;
  /** Asked for by `POST /v1/shutdown`, after the reply is sent. */
  onShutdown: () => void;
}

export interface HubApi {
  server: Server;
  /** http://127.0.0.1:<port> */
  baseUrl: string;
}

export async function listenHubApi(options: HubApiOptions, port = 0): Promise<HubApi> {
  const startedAt = isoTime();
  let baseUrl = "";
  const status = (): HubStatus => ({
    hubVersion: options.version,
    pid: process.pid,
    startedAt,
    statePath: options.statePath,
    apiBaseUrl: baseUrl,
    capabilities: {
      appServerManagement: true,
      portManagement: true,
      events: true,
      notifications: false,
      tray: false,
    },
  });

  const route = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const key = `${request.method} ${url.pathname}`;
    if (key === "GET /v1/status") return send(response, 200, status());
    const presented = bearerToken(request.headers.authorization);
    if (presented === undefined || !constantTimeEqual(presented, options.token)) {
      throw new HubError("unauthorized", 401, "missing or wrong bearer token (the token is in hub.lock)");
    }
    const { registry } = options;
    switch (key) {
      case "POST /v1/appservers/ensure": {
        const body = await readJson(request, HubEnsureRequestSchema);
        return send(response, 200, await registry.ensure(body.workspacePath, body.startIfMissing ?? true));
      }
      case "GET /v1/appservers":
        return send(response, 200, registry.list());
      case "GET /v1/appservers/by-workspace": {
        const path = url.searchParams.get("path");
        if (!path) throw new HubError("invalidRequest", 400, "the path query parameter is required");
        return send(response, 200, await registry.inspect(path));
      }
      case "POST /v1/appservers/stop": {
        const body = await readJson(request, HubWorkspaceRequestSchema);
        return send(response, 200, await registry.stop(body.workspacePath));
      }
      case "POST /v1/appservers/restart": {
        const body = await readJson(request, HubWorkspaceRequestSchema);
        return send(response, 200, await registry.restart(body.workspacePath));
      }
      case "GET /v1/events":
        return options.events.attach(response);
      case "POST /v1/shutdown":
        send(response, 200, { ok: true });
        options.onShutdown();
        return;
      default:
        throw new HubError("notFound", 404, `no such endpoint: ${key}`);
    }
  };

  const server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      if (error instanceof HubError) {
        return sendError(response, error.status, error.code, error.message, error.details);
      }
      options.logger.error({ err: error }, "hub: request failed");
      sendError(response, 500, "appServerStartFailed", (error as Error).message);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, baseUrl };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return;
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

function sendError(
  response: ServerResponse,
  status: number,
  code: HubErrorCode,
  message: string,
  details?: unknown,
): void {
  send(response, status, { error: { code, message, ...(details === undefined ? {} : { details }) } });
}

async function readJson<S extends z.ZodType>(request: IncomingMessage, schema: S): Promise<z.output<S>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new HubError("invalidRequest", 413, `the body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new HubError("invalidRequest", 400, "the body is not JSON");
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join(".") || "body"}: ${issue.message}`,
    );
    throw new HubError("invalidRequest", 400, `invalid request: ${problems.join("; ")}`);
  }
  return parsed.data;
}
