/**
 * The hub's event stream, `GET /v1/events`: Server-Sent Events, each `event: <kind>` and
 * `data: {kind, at, workspacePath, data}` (DotCraft Desktop reads the `data:` line). Kinds sent:
 * `hub.stopping`, `port.allocated`, `appserver.starting`, `appserver.running`, `appserver.exited`,
 * `appserver.unhealthy`. Nothing is replayed: a client sees what happens after it subscribed. A
 * comment line every 15 s keeps idle connections (and proxies) from timing out.
 */
import type { ServerResponse } from "node:http";
import { isoTime } from "../../../iso-time.js";

export type HubEventKind =
  | "hub.stopping"
  | "port.allocated"
  | "appserver.starting"
  | "appserver.running"
  | "appserver.exited"
  | "appserver.unhealthy";

const KEEPALIVE_MS = 15_000;

export class HubEvents {
  private readonly subscribers = new Set<ServerResponse>();
  private keepalive: NodeJS.Timeout | undefined;

  /** Streams every later event to `response` until its client goes away. */
  attach(response: ServerResponse): void {
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    response.flushHeaders();
    this.subscribers.add(response);
    response.once("close", () => this.subscribers.delete(response));
    this.keepalive ??= setInterval(() => {
      for (const subscriber of this.subscribers) subscriber.write(": keepalive\n\n");
    }, KEEPALIVE_MS).unref();
  }

  emit(kind: HubEventKind, workspacePath: string | null, data: Record<string, unknown> = {}): void {
    const event = { kind, at: isoTime(), workspacePath, data };
    const frame = `event: ${kind}\ndata: ${JSON.stringify(event)}\n\n`;
    for (const subscriber of this.subscribers) subscriber.write(frame);
  }

  /** Ends every stream (the hub is leaving). */
  close(): void {
    if (this.keepalive !== undefined) clearInterval(this.keepalive);
    for (const subscriber of this.subscribers) subscriber.end();
    this.subscribers.clear();
  }
}
