/**
 * Webhook mode's listener: Telegram POSTs each update to TELEGRAM_WEBHOOK_URL, whose reverse proxy
 * forwards it here. A request is served only on the URL's path, as POST, with the secret token
 * Telegram echoes in X-Telegram-Bot-Api-Secret-Token (compared in constant time) and a body under
 * 1 MiB. The answer waits until the update was handed to nexo: 200 then, 500 when that failed, so
 * Telegram delivers it again later instead of it being lost.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const MAX_BODY_BYTES = 1024 * 1024;

const digest = (text: string): Buffer => createHash("sha256").update(text).digest();

export class WebhookListener {
  private server: Server | undefined;

  constructor(
    private readonly options: {
      host: string;
      port: number;
      path: string;
      secret: string;
      onUpdate: (update: unknown) => Promise<void>;
      log: (line: string) => void;
    },
  ) {}

  async listen(): Promise<{ host: string; port: number }> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.listen(this.options.port, this.options.host);
    await Promise.race([
      once(server, "listening"),
      once(server, "error").then(([error]) => {
        throw error;
      }),
    ]);
    this.server = server;
    const address = server.address() as AddressInfo;
    return { host: address.address, port: address.port };
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeIdleConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = (status: number, body: string) => {
      if (!res.headersSent) res.writeHead(status, { "content-type": "text/plain" });
      res.end(body);
    };
    const path = new URL(req.url ?? "/", "http://listener").pathname;
    if (path !== this.options.path) return answer(404, "not found");
    if (req.method !== "POST") return answer(405, "POST only");
    const header = req.headers["x-telegram-bot-api-secret-token"];
    const given = Array.isArray(header) ? header[0] : header;
    if (given === undefined || !timingSafeEqual(digest(given), digest(this.options.secret))) {
      this.options.log(
        `webhook: a request without the right secret token from ${req.socket.remoteAddress} refused`,
      );
      return answer(401, "unauthorized");
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) return answer(413, "too large");
      chunks.push(chunk as Buffer);
    }
    let update: unknown;
    try {
      update = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return answer(400, "not JSON");
    }
    if (
      update === null ||
      typeof update !== "object" ||
      typeof (update as { update_id?: unknown }).update_id !== "number"
    ) {
      return answer(400, "not a Telegram update");
    }
    try {
      await this.options.onUpdate(update);
      answer(200, "");
    } catch (error) {
      this.options.log(
        `webhook: update ${(update as { update_id: number }).update_id} not handled: ${(error as Error).message}`,
      );
      answer(500, "not handled; deliver it again");
    }
  }
}
