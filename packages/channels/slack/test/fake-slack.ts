/**
 * A local stand-in for Slack, at the network edge: the Web API methods the channel calls
 * (auth.test, apps.connections.open, chat.postMessage, files.getUploadURLExternal, the upload URL,
 * files.completeUploadExternal), private file downloads, and a Socket Mode WebSocket that says
 * `hello`, pushes `events_api` and `slash_commands` envelopes and records the app's acks — shaped
 * as Slack documents them (api.slack.com/apis/socket-mode, the methods' reference pages).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export interface Post {
  method: string;
  token: string | undefined;
  params: Record<string, unknown>;
}

interface Bot {
  botToken: string;
  appToken: string;
  userId: string;
  botId: string;
  name: string;
}

export class FakeSlack {
  readonly calls: Post[] = [];
  readonly uploads = new Map<string, Buffer>();
  readonly acks: string[] = [];
  /** Files served at /files/<name> to a request carrying a known bot token. */
  readonly files = new Map<string, Buffer>();
  /** chat.postMessage answers HTTP 500 this many more times. */
  failPosts = 0;
  private readonly bots: Bot[] = [];
  private readonly sockets = new Set<WebSocket>();
  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private seq = 0;
  private waiters: Array<() => void> = [];

  url = "";

  get apiUrl(): string {
    return `${this.url}/api/`;
  }

  addBot(bot: Bot): void {
    this.bots.push(bot);
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on("upgrade", (req, socket, head) => {
      const url = new URL(req.url ?? "/", "http://x");
      const bot = this.bots.find((b) => url.searchParams.get("ticket") === b.appToken.slice(-12));
      if (url.pathname !== "/socket" || bot === undefined) {
        socket.end("HTTP/1.1 401 Unauthorized\r\n\r\n");
        return;
      }
      this.wss!.handleUpgrade(req, socket, head, (ws) => {
        this.sockets.add(ws);
        ws.on("close", () => this.sockets.delete(ws));
        ws.on("message", (data) => {
          const frame = JSON.parse(String(data)) as { envelope_id?: string };
          if (frame.envelope_id) this.acks.push(frame.envelope_id);
          this.wake();
        });
        ws.send(
          JSON.stringify({
            type: "hello",
            num_connections: 1,
            debug_info: { host: "fake-slack", approximate_connection_time: 3600 },
            connection_info: { app_id: "A0FAKE" },
          }),
        );
        this.wake();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.wss?.close();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  get connected(): number {
    return this.sockets.size;
  }

  /** Pushes an Events API event to every connected app; returns the envelope id. */
  pushEvent(event: Record<string, unknown>): string {
    const envelope = randomUUID();
    this.broadcast({
      envelope_id: envelope,
      type: "events_api",
      accepts_response_payload: false,
      retry_attempt: 0,
      retry_reason: "",
      payload: {
        token: "verification-token-unused",
        team_id: "T0FAKE",
        api_app_id: "A0FAKE",
        event: { event_ts: event.ts, ...event },
        type: "event_callback",
        event_id: `Ev${++this.seq}`,
        event_time: Math.floor(Date.now() / 1000),
      },
    });
    return envelope;
  }

  /** Pushes a slash command; returns the envelope id. */
  pushCommand(command: string, text: string, user: string, channel: string): string {
    const envelope = randomUUID();
    this.broadcast({
      envelope_id: envelope,
      type: "slash_commands",
      accepts_response_payload: true,
      payload: {
        token: "verification-token-unused",
        team_id: "T0FAKE",
        team_domain: "fake",
        channel_id: channel,
        channel_name: "directmessage",
        user_id: user,
        user_name: user.toLowerCase(),
        command,
        text,
        api_app_id: "A0FAKE",
        response_url: `${this.url}/response`,
        trigger_id: `trig.${++this.seq}`,
      },
    });
    return envelope;
  }

  /** The next call satisfying `match` (already made, or made within `timeoutMs`). */
  async next(match: (post: Post) => boolean, timeoutMs = 60_000): Promise<Post> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.calls.find(match);
      if (found !== undefined) return found;
      if (Date.now() > deadline)
        throw new Error(
          `no matching Slack call; calls: ${JSON.stringify(this.calls.map((c) => [c.method, c.params.text]))}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits until `ready()` holds. */
  async until(ready: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    await this.next(() => ready(), timeoutMs).catch(() => {
      throw new Error(`timed out waiting for ${what}`);
    });
  }

  private broadcast(frame: unknown): void {
    const text = JSON.stringify(frame);
    for (const ws of this.sockets) ws.send(text);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? "/", "http://x");
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    if (url.pathname.startsWith("/upload/")) {
      // The client posts the file as multipart form data (or raw bytes); keep the file's bytes.
      const type = req.headers["content-type"] ?? "";
      let bytes = body;
      if (type.startsWith("multipart/form-data")) {
        const form = await new Request("http://x", {
          method: "POST",
          headers: { "content-type": type },
          body,
        }).formData();
        const file = [...form.values()].find((value) => typeof value !== "string");
        if (file !== undefined) bytes = Buffer.from(await (file as Blob).arrayBuffer());
      }
      this.uploads.set(url.pathname.slice("/upload/".length), bytes);
      this.wake();
      res.writeHead(200).end("OK");
      return;
    }
    if (url.pathname.startsWith("/files/")) {
      const file = this.files.get(url.pathname.slice("/files/".length));
      if (!this.bots.some((b) => b.botToken === token) || file === undefined) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(file);
      return;
    }
    if (!url.pathname.startsWith("/api/")) {
      res.writeHead(404).end();
      return;
    }
    const method = url.pathname.slice("/api/".length);
    const params = parseParams(req.headers["content-type"] ?? "", body);
    const post: Post = { method, token, params };
    const ok = (value: Record<string, unknown>) => {
      this.calls.push(post);
      this.wake();
      json(200, { ok: true, ...value });
    };
    const refuse = (error: string) => {
      this.calls.push(post);
      this.wake();
      json(200, { ok: false, error });
    };
    if (method === "apps.connections.open") {
      const bot = this.bots.find((b) => b.appToken === token);
      if (bot === undefined) return refuse("invalid_auth");
      return ok({ url: `${this.url.replace("http", "ws")}/socket?ticket=${bot.appToken.slice(-12)}` });
    }
    const bot = this.bots.find((b) => b.botToken === token);
    if (bot === undefined) return refuse("invalid_auth");
    switch (method) {
      case "auth.test":
        return ok({
          url: "https://fake.slack.com/",
          team: "Fake Team",
          user: bot.name,
          team_id: "T0FAKE",
          user_id: bot.userId,
          bot_id: bot.botId,
        });
      case "chat.postMessage":
        if (this.failPosts > 0) {
          this.failPosts -= 1;
          this.calls.push({ ...post, method: "chat.postMessage (failed)" });
          this.wake();
          return json(500, { ok: false, error: "internal_error" });
        }
        return ok({
          channel: params.channel,
          ts: `${Math.floor(Date.now() / 1000)}.${String(++this.seq).padStart(6, "0")}`,
        });
      case "files.getUploadURLExternal": {
        const id = `F${++this.seq}`;
        return ok({ upload_url: `${this.url}/upload/${id}`, file_id: id });
      }
      case "files.completeUploadExternal": {
        const files = JSON.parse(String(params.files ?? "[]")) as Array<{ id: string; title?: string }>;
        return ok({ files: files.map((f) => ({ id: f.id, title: f.title })) });
      }
      default:
        return refuse("unknown_method");
    }
  }
}

function parseParams(type: string, body: Buffer): Record<string, unknown> {
  const text = body.toString("utf8");
  if (type.includes("application/json"))
    return text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
  return Object.fromEntries(new URLSearchParams(text));
}
