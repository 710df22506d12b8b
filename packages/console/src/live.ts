/**
 * Live updates for the browser: every agent event the daemon pushes to the console (and every
 * "you lagged" notice) goes out to each open page as a Server-Sent Event. A page that reconnects
 * or lags reads what it missed back with agent_events/read from the seq it last saw.
 */
import type { ServerResponse } from "node:http";
import { redactForBrowser } from "./redact.js";

const KEEPALIVE_MS = 20_000;

export class LiveStreams {
  private readonly clients = new Set<ServerResponse>();
  private readonly keepalive: NodeJS.Timeout;

  constructor() {
    // A comment line now and then keeps proxies and idle timers from closing a quiet stream.
    this.keepalive = setInterval(() => this.write(": keepalive\n\n"), KEEPALIVE_MS);
    this.keepalive.unref();
  }

  open(res: ServerResponse): void {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
    });
    res.write(": connected\n\n");
    this.clients.add(res);
    res.on("close", () => this.clients.delete(res));
  }

  send(event: string, data: unknown): void {
    this.write(`event: ${event}\ndata: ${JSON.stringify(redactForBrowser(data))}\n\n`);
  }

  get size(): number {
    return this.clients.size;
  }

  close(): void {
    clearInterval(this.keepalive);
    for (const res of this.clients) res.end();
    this.clients.clear();
  }

  private write(chunk: string): void {
    for (const res of this.clients) res.write(chunk);
  }
}
