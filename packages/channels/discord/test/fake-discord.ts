/**
 * A local stand-in for Discord, at the network edge, shaped as Discord documents it
 * (discord.com/developers/docs: Gateway, Resources/Message, Interactions):
 *
 * - the REST API under /api/v10: GET /users/@me and /gateway/bot, PUT the application's commands,
 *   POST channel messages (JSON, or multipart with payload_json and files[n]), typing, threads from
 *   a message, interaction callbacks and PATCH of an interaction's original reply; "Bot <token>"
 *   authorization, 401 for a token it does not know;
 * - the attachments' CDN under /attachments/ (no authorization, as Discord's signed URLs);
 * - the gateway, a WebSocket without compression speaking JSON: HELLO (op 10), IDENTIFY (op 2) →
 *   READY then GUILD_CREATE per guild, heartbeats (op 1 → op 11), dispatches with sequence numbers,
 *   and RESUME (op 6) after a dropped socket → the events missed, then RESUMED.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export interface Call {
  method: string;
  path: string;
  token: string | undefined;
  body: Record<string, unknown>;
  files: Array<{ name: string; bytes: Buffer }>;
  /** "failed" when the fake answered 500 on purpose. */
  outcome: "ok" | "failed";
}

export interface FakeBot {
  token: string;
  id: string;
  username: string;
  applicationId: string;
}

export interface GatewayFrame {
  op: number;
  d: unknown;
  session?: string;
}

interface Session {
  id: string;
  bot: FakeBot;
  intents: number;
  seq: number;
  sent: Array<{ s: number; t: string; d: unknown }>;
  socket: WebSocket | undefined;
}

interface Guild {
  id: string;
  name: string;
  channels: Array<{ id: string; name: string }>;
  threads: Array<{ id: string; parentId: string; name: string }>;
}

let snowflake = 1_900_000_000_000_000_000n;
export const nextId = (): string => String(++snowflake);

export class FakeDiscord {
  readonly calls: Call[] = [];
  readonly frames: GatewayFrame[] = [];
  /** Attachments served at /attachments/<name>. */
  readonly cdn = new Map<string, Buffer>();
  readonly guilds: Guild[] = [];
  /** POST …/messages answers HTTP 500 this many more times. */
  failPosts = 0;
  url = "";
  private readonly bots: FakeBot[] = [];
  private readonly sessions = new Map<string, Session>();
  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private waiters: Array<() => void> = [];

  get apiUrl(): string {
    return `${this.url}/api`;
  }

  get gatewayUrl(): string {
    return `${this.url.replace("http", "ws")}/gateway`;
  }

  addBot(bot: FakeBot): void {
    this.bots.push(bot);
  }

  addGuild(guild: Guild): void {
    this.guilds.push(guild);
  }

  /** The gateway sessions started by IDENTIFY, oldest first. */
  get sessionIds(): string[] {
    return [...this.sessions.keys()];
  }

  /** Sockets open on the gateway (identified or resumed). */
  get connected(): number {
    return [...this.sessions.values()].filter((s) => s.socket !== undefined).length;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on("upgrade", (req, socket, head) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname !== "/gateway" || url.searchParams.get("encoding") !== "json") {
        socket.end("HTTP/1.1 400 Bad Request\r\n\r\n");
        return;
      }
      this.wss!.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const session of this.sessions.values()) session.socket?.terminate();
    this.wss?.close();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /** Closes every gateway socket as a network drop would (close code 4000: the client may resume). */
  dropSockets(): void {
    for (const session of this.sessions.values()) {
      session.socket?.close(4000, "dropped by the test");
      session.socket = undefined;
    }
  }

  /** Sends a dispatch to every session of `bot` (kept for a resume when its socket is gone). */
  dispatch(t: string, d: unknown, bot?: FakeBot): void {
    for (const session of this.sessions.values()) {
      if (bot !== undefined && session.bot !== bot) continue;
      this.send(session, t, d);
    }
  }

  /** A person's message as MESSAGE_CREATE; returns it. */
  message(options: {
    channelId: string;
    guildId?: string;
    author: { id: string; username: string; bot?: boolean };
    content: string;
    mentions?: FakeBot[];
    attachments?: Array<{ filename: string; url: string; size: number; content_type?: string }>;
    bot?: FakeBot;
  }): Record<string, unknown> {
    // channel_type, as Discord sends it on MESSAGE_CREATE: 1 a DM, 11 a public thread, 0 a text channel.
    const channelType =
      options.guildId === undefined
        ? 1
        : this.guilds.some((g) => g.threads.some((t) => t.id === options.channelId))
          ? 11
          : 0;
    const message = {
      id: nextId(),
      channel_id: options.channelId,
      channel_type: channelType,
      ...(options.guildId === undefined ? {} : { guild_id: options.guildId }),
      author: user(options.author),
      ...(options.guildId === undefined
        ? {}
        : {
            member: { roles: [], joined_at: new Date(0).toISOString(), deaf: false, mute: false, flags: 0 },
          }),
      content: options.content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: (options.mentions ?? []).map((b) => user({ id: b.id, username: b.username, bot: true })),
      mention_roles: [],
      attachments: (options.attachments ?? []).map((a) => ({ id: nextId(), proxy_url: a.url, ...a })),
      embeds: [],
      pinned: false,
      type: 0,
      flags: 0,
    };
    this.dispatch("MESSAGE_CREATE", message, options.bot);
    return message;
  }

  /** A slash command as INTERACTION_CREATE (in a DM when no guild); returns the interaction. */
  command(options: {
    name: string;
    channelId: string;
    guildId?: string;
    user: { id: string; username: string };
    bot: FakeBot;
  }): Record<string, unknown> {
    const who =
      options.guildId === undefined
        ? { user: user(options.user) }
        : {
            guild_id: options.guildId,
            member: {
              user: user(options.user),
              roles: [],
              permissions: "0",
              joined_at: new Date(0).toISOString(),
              deaf: false,
              mute: false,
              flags: 0,
            },
          };
    const interaction = {
      id: nextId(),
      application_id: options.bot.applicationId,
      type: 2,
      data: { id: nextId(), name: options.name, type: 1 },
      channel_id: options.channelId,
      channel: { id: options.channelId, type: options.guildId === undefined ? 1 : 0 },
      ...who,
      token: `interaction-token-${nextId()}`,
      version: 1,
      app_permissions: "0",
      locale: "en-US",
      entitlements: [],
      authorizing_integration_owners: {},
      context: options.guildId === undefined ? 1 : 0,
    };
    this.dispatch("INTERACTION_CREATE", interaction, options.bot);
    return interaction;
  }

  /** The first call satisfying `match` (already made, or made within `timeoutMs`). */
  async next(match: (call: Call) => boolean, timeoutMs = 60_000): Promise<Call> {
    let found: Call | undefined;
    await this.until(
      () => {
        found = this.calls.find(match);
        return found !== undefined;
      },
      () =>
        `a matching call; calls: ${JSON.stringify(this.calls.map((c) => [c.method, c.path, c.body.content]))}`,
      timeoutMs,
    );
    return found!;
  }

  /** Waits until `ready()` holds. */
  async until(ready: () => boolean, what: string | (() => string), timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private send(session: Session, t: string, d: unknown): void {
    session.seq += 1;
    session.sent.push({ s: session.seq, t, d });
    session.socket?.send(JSON.stringify({ op: 0, t, s: session.seq, d }));
  }

  private onSocket(ws: WebSocket): void {
    let session: Session | undefined;
    ws.on("close", () => {
      if (session !== undefined && session.socket === ws) session.socket = undefined;
      this.wake();
    });
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { op: number; d: Record<string, unknown> | number | null };
      this.frames.push({ op: frame.op, d: frame.d, ...(session ? { session: session.id } : {}) });
      this.wake();
      const d = (frame.d ?? {}) as Record<string, unknown>;
      switch (frame.op) {
        case 1:
          ws.send(JSON.stringify({ op: 11, d: null }));
          return;
        case 2: {
          const bot = this.bots.find((b) => b.token === d.token);
          if (bot === undefined) {
            ws.close(4004, "Authentication failed.");
            return;
          }
          session = {
            id: `session-${nextId()}`,
            bot,
            intents: Number(d.intents),
            seq: 0,
            sent: [],
            socket: ws,
          };
          this.sessions.set(session.id, session);
          this.send(session, "READY", {
            v: 10,
            user: user({ id: bot.id, username: bot.username, bot: true }),
            guilds: this.guilds.map((g) => ({ id: g.id, unavailable: true })),
            session_id: session.id,
            resume_gateway_url: this.gatewayUrl,
            shard: [0, 1],
            application: { id: bot.applicationId, flags: 0 },
            private_channels: [],
            relationships: [],
            presences: [],
            guild_join_requests: [],
            user_settings: {},
          });
          for (const guild of this.guilds) this.send(session, "GUILD_CREATE", guildPayload(guild, bot));
          this.wake();
          return;
        }
        case 6: {
          const resumed = this.sessions.get(String(d.session_id));
          if (resumed === undefined || resumed.bot.token !== d.token) {
            ws.send(JSON.stringify({ op: 9, d: false }));
            return;
          }
          session = resumed;
          session.socket = ws;
          for (const event of session.sent.filter((e) => e.s > Number(d.seq))) {
            ws.send(JSON.stringify({ op: 0, t: event.t, s: event.s, d: event.d }));
          }
          this.send(session, "RESUMED", null);
          this.wake();
          return;
        }
        default:
          return;
      }
    });
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 } }));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? "/", "http://x");
    const json = (status: number, value?: unknown) => {
      if (value === undefined) {
        res.writeHead(status).end();
        return;
      }
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
    };
    if (url.pathname.startsWith("/attachments/")) {
      const file = this.cdn.get(decodeURIComponent(url.pathname.slice("/attachments/".length)));
      if (file === undefined) return json(404, { message: "Not Found", code: 0 });
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(file);
      return;
    }
    // Path segments arrive percent-encoded (discord.js sends @original as %40original).
    const path = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, "");
    if (path === url.pathname) return json(404, { message: "404: Not Found", code: 0 });
    const token = /^Bot (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const { body, files } = await parseBody(req.headers["content-type"] ?? "", raw);
    const call: Call = { method: req.method ?? "GET", path, token, body, files, outcome: "ok" };
    const record = () => {
      this.calls.push(call);
      this.wake();
    };
    // Interaction callbacks and webhooks are authorised by the interaction's token in the path.
    const interaction = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(path);
    const webhook = /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/.exec(path);
    if (interaction !== null) {
      record();
      return json(204);
    }
    if (webhook !== null) {
      record();
      const bot = this.bots.find((b) => b.applicationId === webhook[1]);
      return json(200, this.messageFrom(bot, "0", String(body.content ?? "")));
    }
    const bot = this.bots.find((b) => b.token === token);
    if (bot === undefined) {
      record();
      return json(401, { message: "401: Unauthorized", code: 0 });
    }
    record();
    if (call.method === "GET" && path === "/users/@me") {
      return json(200, user({ id: bot.id, username: bot.username, bot: true }));
    }
    if (call.method === "GET" && path === "/gateway/bot") {
      return json(200, {
        url: this.gatewayUrl,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
      });
    }
    if (call.method === "PUT" && path === `/applications/${bot.applicationId}/commands`) {
      const commands = Array.isArray(call.body) ? (call.body as unknown[]) : [];
      return json(
        200,
        commands.map((c) => ({
          id: nextId(),
          application_id: bot.applicationId,
          version: nextId(),
          default_member_permissions: null,
          type: 1,
          ...(c as object),
        })),
      );
    }
    const messages = /^\/channels\/(\d+)\/messages$/.exec(path);
    if (call.method === "POST" && messages !== null) {
      if (this.failPosts > 0) {
        this.failPosts -= 1;
        call.outcome = "failed";
        return json(500, { message: "500: Internal Server Error", code: 0 });
      }
      const message = this.messageFrom(bot, messages[1]!, String(body.content ?? ""));
      // Discord also sends the bot its own message over the gateway.
      this.dispatch("MESSAGE_CREATE", message, bot);
      return json(200, message);
    }
    if (call.method === "POST" && /^\/channels\/\d+\/typing$/.test(path)) return json(204);
    const threads = /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/.exec(path);
    if (call.method === "POST" && threads !== null) {
      const guild = this.guilds.find((g) => g.channels.some((c) => c.id === threads[1]));
      if (guild === undefined) return json(404, { message: "Unknown Channel", code: 10003 });
      const thread = { id: threads[2]!, parentId: threads[1]!, name: String(body.name ?? "") };
      guild.threads.push(thread);
      const payload = threadPayload(guild.id, thread, bot);
      this.dispatch("THREAD_CREATE", { ...payload, newly_created: true }, bot);
      return json(201, payload);
    }
    return json(404, { message: "404: Not Found", code: 0 });
  }

  private messageFrom(bot: FakeBot | undefined, channelId: string, content: string): Record<string, unknown> {
    return {
      id: nextId(),
      channel_id: channelId,
      author: user({ id: bot?.id ?? "0", username: bot?.username ?? "bot", bot: true }),
      content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      pinned: false,
      type: 0,
      flags: 0,
    };
  }
}

function user(u: { id: string; username: string; bot?: boolean }): Record<string, unknown> {
  return {
    id: u.id,
    username: u.username,
    discriminator: "0",
    global_name: u.username,
    avatar: null,
    bot: u.bot ?? false,
  };
}

function threadPayload(
  guildId: string,
  thread: Guild["threads"][number],
  bot: FakeBot,
): Record<string, unknown> {
  return {
    id: thread.id,
    type: 11,
    guild_id: guildId,
    parent_id: thread.parentId,
    name: thread.name,
    owner_id: bot.id,
    message_count: 0,
    member_count: 1,
    rate_limit_per_user: 0,
    flags: 0,
    thread_metadata: {
      archived: false,
      auto_archive_duration: 1440,
      archive_timestamp: new Date().toISOString(),
      locked: false,
    },
  };
}

function guildPayload(guild: Guild, bot: FakeBot): Record<string, unknown> {
  return {
    id: guild.id,
    name: guild.name,
    icon: null,
    owner_id: "1",
    unavailable: false,
    member_count: 2,
    large: false,
    joined_at: new Date(0).toISOString(),
    features: [],
    roles: [],
    emojis: [],
    stickers: [],
    members: [],
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
    channels: guild.channels.map((c, position) => ({
      id: c.id,
      type: 0,
      guild_id: guild.id,
      name: c.name,
      position,
      permission_overwrites: [],
      nsfw: false,
      parent_id: null,
    })),
    threads: guild.threads.map((t) => threadPayload(guild.id, t, bot)),
  };
}

async function parseBody(
  type: string,
  raw: Buffer,
): Promise<{ body: Record<string, unknown>; files: Array<{ name: string; bytes: Buffer }> }> {
  if (type.startsWith("multipart/form-data")) {
    const form = await new Request("http://x", {
      method: "POST",
      headers: { "content-type": type },
      body: raw,
    }).formData();
    const files: Array<{ name: string; bytes: Buffer }> = [];
    let body: Record<string, unknown> = {};
    for (const [key, value] of form.entries()) {
      if (key === "payload_json") body = JSON.parse(String(value)) as Record<string, unknown>;
      else if (typeof value !== "string")
        files.push({ name: value.name, bytes: Buffer.from(await value.arrayBuffer()) });
    }
    return { body, files };
  }
  const text = raw.toString("utf8");
  return { body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>), files: [] };
}
