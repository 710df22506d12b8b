/**
 * A local HTTP server that speaks the Telegram Bot API as documented (core.telegram.org/bots/api),
 * for the Telegram channel's tests: the plugin's grammY client is pointed at it (TELEGRAM_API_ROOT),
 * so every request the plugin makes is a real HTTP request answered the way Telegram answers it.
 *
 *   POST|GET /bot<token>/<method>   JSON, form-urlencoded, multipart/form-data or query parameters;
 *                                   `{ok: true, result}` or `{ok: false, error_code, description,
 *                                   parameters?}` with the error code as the HTTP status
 *   GET /file/bot<token>/<path>     a file's bytes (what getFile's file_path points at)
 *
 * Methods: getMe, getUpdates (offset confirms and forgets, a negative offset counts from the end,
 * long polling up to `timeout` seconds, a second poller terminates the first with 409, 409 while a
 * webhook is set), setWebhook / deleteWebhook / getWebhookInfo (updates POSTed to the webhook with
 * X-Telegram-Bot-Api-Secret-Token, redelivered until answered 2xx), sendMessage, sendPhoto,
 * sendDocument, sendVoice (uploads as multipart, `attach://<name>` references, URLs, file_ids),
 * sendChatAction, getFile. An unknown token is 401 Unauthorized, an unknown method 404.
 *
 * One departure: setWebhook accepts an http:// URL (Telegram requires https on ports 443, 80, 88
 * or 8443), so the tests need no TLS certificate.
 *
 * The test side: `addBot`, `revoke`, `userSends` (a person writes: text, photo, document, voice,
 * in a private chat or a group), `sent` (what bots sent), `next` (waits for a call, no polling),
 * and `outage` (answer a method with an error until `restore`).
 */
import { randomBytes } from "node:crypto";
import { EventEmitter, once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export interface FakeUser {
  id: number;
  first_name: string;
  username?: string;
}

export interface FakeChat {
  id: number;
  type: "private" | "group" | "supergroup";
  title?: string;
}

interface BotState {
  token: string;
  user: { id: number; is_bot: true; first_name: string; username: string };
  revoked: boolean;
  updates: Array<{ update_id: number; [key: string]: unknown }>;
  nextUpdateId: number;
  poller: { resolve: (updates: unknown[] | "terminated") => void } | undefined;
  webhook: { url: string; secret?: string } | undefined;
  delivering: boolean;
}

interface StoredFile {
  file_id: string;
  file_unique_id: string;
  file_path: string;
  bytes: Buffer;
}

/** A file the plugin sent: uploaded bytes, a URL for Telegram to fetch, or an existing file_id. */
export type SentFile =
  | { kind: "upload"; name: string; mime: string; bytes: Buffer }
  | { kind: "url"; url: string }
  | { kind: "file_id"; file_id: string };

export interface ApiCall {
  botId: number;
  method: string;
  params: Record<string, unknown>;
  files: Record<string, SentFile>;
  /** What was answered. */
  ok: boolean;
  result?: unknown;
}

export interface Outage {
  error_code: number;
  description: string;
  retry_after?: number;
}

const MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;
const CHAT_ACTIONS = new Set([
  "typing",
  "upload_photo",
  "record_video",
  "upload_video",
  "record_voice",
  "upload_voice",
  "upload_document",
  "choose_sticker",
  "find_location",
  "record_video_note",
  "upload_video_note",
]);

class ApiError extends Error {
  constructor(
    readonly error_code: number,
    readonly description: string,
    readonly parameters?: Record<string, unknown>,
  ) {
    super(description);
  }
}

export class FakeBotApi {
  readonly calls: ApiCall[] = [];
  private readonly bots = new Map<string, BotState>();
  private readonly files = new Map<string, StoredFile>();
  private readonly chats = new Map<number, FakeChat & { nextMessageId: number }>();
  private readonly outages = new Map<string, Outage>();
  private readonly events = new EventEmitter();
  private server: Server | undefined;
  /** Aborted by stop(): webhook redelivery gives up at once instead of retrying for minutes. */
  private readonly stopping = new AbortController();
  private base = "";
  private fileSeq = 0;

  /** The apiRoot to give grammY (no trailing slash). */
  get url(): string {
    return this.base;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.base;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    for (const bot of this.bots.values()) bot.poller?.resolve([]);
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  addBot(token: string, username: string): { id: number; username: string } {
    const id = Number(token.split(":")[0]);
    this.bots.set(token, {
      token,
      user: { id, is_bot: true, first_name: username.replace(/_?bot$/i, ""), username },
      revoked: false,
      updates: [],
      nextUpdateId: 100_000 + Math.floor(Math.random() * 1000),
      poller: undefined,
      webhook: undefined,
      delivering: false,
    });
    return { id, username };
  }

  /** BotFather's /revoke: the token stops working at once (401). */
  revoke(token: string): void {
    const bot = this.bots.get(token);
    if (bot === undefined) throw new Error(`no bot with that token`);
    bot.revoked = true;
    bot.poller?.resolve("terminated");
  }

  /** Answer `method` (or every method, "*") with this error until restore(). */
  outage(method: string, outage: Outage): void {
    this.outages.set(method, outage);
  }

  restore(method?: string): void {
    if (method === undefined) this.outages.clear();
    else this.outages.delete(method);
  }

  /** Pending updates of a bot (not yet confirmed by getUpdates nor acknowledged by its webhook). */
  pendingUpdates(username: string): number {
    return this.botByName(username).updates.length;
  }

  webhookOf(username: string): { url: string; secret?: string } | undefined {
    return this.botByName(username).webhook;
  }

  /** A person writes to the bot; returns the Message as Telegram would deliver it. */
  userSends(
    username: string,
    message: {
      chat: FakeChat;
      from: FakeUser;
      text?: string;
      entities?: Array<{ type: string; offset: number; length: number }>;
      caption?: string;
      photo?: Buffer;
      document?: { bytes: Buffer; file_name: string; mime_type: string };
      voice?: { bytes: Buffer; duration: number };
      reply_to_message?: Record<string, unknown>;
    },
  ): Record<string, unknown> {
    const bot = this.botByName(username);
    const chat = this.chat(message.chat);
    const msg: Record<string, unknown> = {
      message_id: chat.nextMessageId++,
      from: { is_bot: false, ...message.from },
      chat: message.chat,
      date: Math.floor(Date.now() / 1000),
    };
    if (message.text !== undefined) msg.text = message.text;
    if (message.entities !== undefined) msg.entities = message.entities;
    if (message.caption !== undefined) msg.caption = message.caption;
    if (message.reply_to_message !== undefined) msg.reply_to_message = message.reply_to_message;
    if (message.photo !== undefined) {
      // Telegram sends several sizes; the last is the largest.
      const small = this.storeFile(
        message.photo.subarray(0, Math.min(64, message.photo.length)),
        "photos",
        "jpg",
      );
      const large = this.storeFile(message.photo, "photos", "jpg");
      msg.photo = [
        {
          file_id: small.file_id,
          file_unique_id: small.file_unique_id,
          width: 90,
          height: 90,
          file_size: small.bytes.length,
        },
        {
          file_id: large.file_id,
          file_unique_id: large.file_unique_id,
          width: 800,
          height: 600,
          file_size: large.bytes.length,
        },
      ];
    }
    if (message.document !== undefined) {
      const file = this.storeFile(
        message.document.bytes,
        "documents",
        message.document.file_name.split(".").pop() ?? "bin",
      );
      msg.document = {
        file_id: file.file_id,
        file_unique_id: file.file_unique_id,
        file_name: message.document.file_name,
        mime_type: message.document.mime_type,
        file_size: file.bytes.length,
      };
    }
    if (message.voice !== undefined) {
      const file = this.storeFile(message.voice.bytes, "voice", "oga");
      msg.voice = {
        file_id: file.file_id,
        file_unique_id: file.file_unique_id,
        duration: message.voice.duration,
        mime_type: "audio/ogg",
        file_size: file.bytes.length,
      };
    }
    this.pushUpdate(bot, { message: msg });
    return msg;
  }

  /** The messages bots sent (sendMessage, sendPhoto, …) to a chat, in order. */
  sent(chatId?: number): ApiCall[] {
    return this.calls.filter(
      (call) =>
        call.ok &&
        /^send(Message|Photo|Document|Voice)$/.test(call.method) &&
        (chatId === undefined || Number(call.params.chat_id) === chatId),
    );
  }

  /** Resolves with the first call (already made, or the next one) that matches. */
  next(match: (call: ApiCall) => boolean, timeoutMs = 60_000): Promise<ApiCall> {
    const found = this.calls.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.events.off("call", listener);
        reject(
          new Error(
            `no matching Bot API call within ${timeoutMs} ms; calls: ${this.calls.map((c) => c.method).join(", ")}`,
          ),
        );
      }, timeoutMs);
      const listener = (call: ApiCall) => {
        if (!match(call)) return;
        clearTimeout(timer);
        this.events.off("call", listener);
        resolve(call);
      };
      this.events.on("call", listener);
    });
  }

  /** The bytes of a file the fake stores (what a download of its file_path returns). */
  fileBytes(fileId: string): Buffer | undefined {
    return this.files.get(fileId)?.bytes;
  }

  // --- the API -------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.base);
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (download !== null && req.method === "GET") return this.download(download[1]!, download[2]!, res);
    const call = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (call === null) return reply(res, new ApiError(404, "Not Found"));
    const bot = this.bots.get(decodeURIComponent(call[1]!));
    if (bot === undefined || bot.revoked) return reply(res, new ApiError(401, "Unauthorized"));
    const method = call[2]!;
    let params: Record<string, unknown>;
    let files: Record<string, SentFile>;
    try {
      ({ params, files } = await readParams(req, url));
    } catch (error) {
      return reply(res, new ApiError(400, `Bad Request: ${(error as Error).message}`));
    }
    const record: ApiCall = { botId: bot.user.id, method, params, files, ok: false };
    let outcome: unknown;
    const outage = this.outages.get(method) ?? this.outages.get("*");
    try {
      if (outage !== undefined) {
        throw new ApiError(
          outage.error_code,
          outage.description,
          outage.retry_after === undefined ? undefined : { retry_after: outage.retry_after },
        );
      }
      outcome = await this.dispatch(bot, method, params, files, req);
      record.ok = true;
      record.result = outcome;
    } catch (error) {
      outcome =
        error instanceof ApiError
          ? error
          : new ApiError(500, `Internal Server Error: ${(error as Error).message}`);
    }
    // A long poll cut by the client (grammY's stop aborts it) has nobody to answer.
    if (res.destroyed) return;
    this.calls.push(record);
    this.events.emit("call", record);
    reply(res, outcome);
  }

  private dispatch(
    bot: BotState,
    method: string,
    params: Record<string, unknown>,
    files: Record<string, SentFile>,
    req: IncomingMessage,
  ): unknown {
    switch (method.toLowerCase()) {
      case "getme":
        return {
          ...bot.user,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        };
      case "getupdates":
        return this.getUpdates(bot, params, req);
      case "setwebhook":
        return this.setWebhook(bot, params);
      case "deletewebhook":
        bot.webhook = undefined;
        if (truthy(params.drop_pending_updates)) bot.updates = [];
        return true;
      case "getwebhookinfo":
        return {
          url: bot.webhook?.url ?? "",
          has_custom_certificate: false,
          pending_update_count: bot.updates.length,
        };
      case "sendmessage":
        return this.sendMessage(bot, params);
      case "sendphoto":
        return this.sendFile(bot, params, files, "photo");
      case "senddocument":
        return this.sendFile(bot, params, files, "document");
      case "sendvoice":
        return this.sendFile(bot, params, files, "voice");
      case "sendchataction": {
        this.knownChat(params.chat_id);
        if (!CHAT_ACTIONS.has(String(params.action)))
          throw new ApiError(400, "Bad Request: wrong parameter action in request");
        return true;
      }
      case "getfile": {
        const file = this.files.get(String(params.file_id ?? ""));
        if (file === undefined) throw new ApiError(400, "Bad Request: invalid file_id");
        if (file.bytes.length > MAX_DOWNLOAD_BYTES) throw new ApiError(400, "Bad Request: file is too big");
        return {
          file_id: file.file_id,
          file_unique_id: file.file_unique_id,
          file_size: file.bytes.length,
          file_path: file.file_path,
        };
      }
      default:
        throw new ApiError(404, "Not Found");
    }
  }

  private async getUpdates(
    bot: BotState,
    params: Record<string, unknown>,
    req: IncomingMessage,
  ): Promise<unknown[]> {
    if (bot.webhook !== undefined) {
      throw new ApiError(
        409,
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      );
    }
    const offset = Number(params.offset ?? 0);
    if (offset > 0) bot.updates = bot.updates.filter((u) => u.update_id >= offset);
    else if (offset < 0) bot.updates = bot.updates.slice(offset);
    const limit = Math.min(100, Math.max(1, Number(params.limit ?? 100)));
    const timeoutSecs = Math.max(0, Number(params.timeout ?? 0));
    if (bot.updates.length > 0 || timeoutSecs === 0) return bot.updates.slice(0, limit);
    // Long polling: held until an update arrives or the timeout. Only one poller per bot.
    bot.poller?.resolve("terminated");
    const outcome = await new Promise<unknown[] | "terminated">((resolve) => {
      const timer = setTimeout(() => resolve([]), timeoutSecs * 1000);
      const poller = {
        resolve: (value: unknown[] | "terminated") => {
          clearTimeout(timer);
          if (bot.poller === poller) bot.poller = undefined;
          resolve(value);
        },
      };
      bot.poller = poller;
      req.once("close", () => poller.resolve([]));
    });
    if (outcome === "terminated") {
      if (bot.revoked) throw new ApiError(401, "Unauthorized");
      throw new ApiError(
        409,
        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      );
    }
    return bot.updates.slice(0, limit);
  }

  private setWebhook(bot: BotState, params: Record<string, unknown>): true {
    const url = String(params.url ?? "");
    if (truthy(params.drop_pending_updates)) bot.updates = [];
    if (url === "") {
      bot.webhook = undefined;
      return true;
    }
    if (!/^https?:\/\//.test(url))
      throw new ApiError(400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook");
    const secret = params.secret_token === undefined ? undefined : String(params.secret_token);
    if (secret !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(secret)) {
      throw new ApiError(400, "Bad Request: secret token contains unallowed characters");
    }
    bot.poller?.resolve("terminated");
    bot.webhook = { url, ...(secret === undefined ? {} : { secret }) };
    void this.deliverWebhook(bot);
    return true;
  }

  private sendMessage(bot: BotState, params: Record<string, unknown>): Record<string, unknown> {
    const chat = this.knownChat(params.chat_id);
    const text = String(params.text ?? "");
    if (text.trim() === "") throw new ApiError(400, "Bad Request: message text is empty");
    if (text.length > 4096) throw new ApiError(400, "Bad Request: message is too long");
    return { ...this.newMessage(bot, chat, params), text };
  }

  private sendFile(
    bot: BotState,
    params: Record<string, unknown>,
    files: Record<string, SentFile>,
    field: "photo" | "document" | "voice",
  ): Record<string, unknown> {
    const chat = this.knownChat(params.chat_id);
    const caption = params.caption === undefined ? undefined : String(params.caption);
    if (caption !== undefined && caption.length > 1024)
      throw new ApiError(400, "Bad Request: message caption is too long");
    let sent = files[field];
    const value = params[field];
    if (sent === undefined && typeof value === "string") {
      const attached = /^attach:\/\/(.+)$/.exec(value);
      if (attached !== null) sent = files[attached[1]!];
      else if (/^https?:\/\//.test(value)) sent = { kind: "url", url: value };
      else if (this.files.has(value)) sent = { kind: "file_id", file_id: value };
      else throw new ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified");
    }
    if (sent === undefined) throw new ApiError(400, `Bad Request: there is no ${field} in the request`);
    files[field] = sent;
    const bytes =
      sent.kind === "upload" ? sent.bytes : Buffer.from(sent.kind === "url" ? sent.url : sent.file_id);
    const stored = this.storeFile(
      bytes,
      field === "photo" ? "photos" : field === "voice" ? "voice" : "documents",
      "bin",
    );
    const media =
      field === "photo"
        ? [
            {
              file_id: stored.file_id,
              file_unique_id: stored.file_unique_id,
              width: 800,
              height: 600,
              file_size: bytes.length,
            },
          ]
        : { file_id: stored.file_id, file_unique_id: stored.file_unique_id, file_size: bytes.length };
    return {
      ...this.newMessage(bot, chat, params),
      [field]: media,
      ...(caption === undefined ? {} : { caption }),
    };
  }

  private newMessage(
    bot: BotState,
    chat: FakeChat & { nextMessageId: number },
    params: Record<string, unknown>,
  ): Record<string, unknown> {
    const { nextMessageId: _next, ...chatObject } = chat;
    const replyTo =
      (params.reply_parameters as { message_id?: number } | undefined)?.message_id ??
      params.reply_to_message_id;
    return {
      message_id: chat.nextMessageId++,
      from: { id: bot.user.id, is_bot: true, first_name: bot.user.first_name, username: bot.user.username },
      chat: chatObject,
      date: Math.floor(Date.now() / 1000),
      ...(replyTo === undefined
        ? {}
        : { reply_to_message: { message_id: Number(replyTo), chat: chatObject, date: 0 } }),
    };
  }

  private download(token: string, path: string, res: ServerResponse): void {
    const bot = this.bots.get(decodeURIComponent(token));
    const file = [...this.files.values()].find((f) => f.file_path === path);
    if (bot === undefined || bot.revoked || file === undefined) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ ok: false, error_code: 404, description: "Not Found" }));
      return;
    }
    res
      .writeHead(200, { "content-type": "application/octet-stream", "content-length": file.bytes.length })
      .end(file.bytes);
  }

  // --- state -----------------------------------------------------------------------------------

  private pushUpdate(bot: BotState, update: Record<string, unknown>): void {
    bot.updates.push({ update_id: bot.nextUpdateId++, ...update });
    if (bot.webhook !== undefined) void this.deliverWebhook(bot);
    else bot.poller?.resolve(bot.updates.slice(0, 100));
  }

  /** Posts pending updates to the webhook one at a time, in order, until each is answered 2xx. */
  private async deliverWebhook(bot: BotState): Promise<void> {
    if (bot.delivering) return;
    bot.delivering = true;
    try {
      let failures = 0;
      const stopped = this.stopping.signal;
      while (!stopped.aborted && bot.webhook !== undefined && bot.updates.length > 0 && failures < 50) {
        const update = bot.updates[0]!;
        const { url, secret } = bot.webhook;
        let ok = false;
        try {
          const res = await fetch(url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(secret === undefined ? {} : { "x-telegram-bot-api-secret-token": secret }),
            },
            body: JSON.stringify(update),
            signal: AbortSignal.any([AbortSignal.timeout(60_000), stopped]),
          });
          await res.arrayBuffer();
          ok = res.ok;
        } catch {
          ok = false;
        }
        if (ok) {
          failures = 0;
          if (bot.updates[0] === update) bot.updates.shift();
        } else {
          failures++;
          await sleep(100 * failures, undefined, { signal: stopped }).catch(() => undefined);
        }
      }
    } finally {
      bot.delivering = false;
    }
  }

  private storeFile(bytes: Buffer, folder: string, extension: string): StoredFile {
    const n = ++this.fileSeq;
    const file: StoredFile = {
      file_id: `AgAC${randomBytes(12).toString("base64url")}${n}`,
      file_unique_id: `AQAD${n}`,
      file_path: `${folder}/file_${n}.${extension}`,
      bytes,
    };
    this.files.set(file.file_id, file);
    return file;
  }

  private chat(chat: FakeChat): FakeChat & { nextMessageId: number } {
    let known = this.chats.get(chat.id);
    if (known === undefined) {
      known = { ...chat, nextMessageId: 1 };
      this.chats.set(chat.id, known);
    }
    return known;
  }

  private knownChat(chatId: unknown): FakeChat & { nextMessageId: number } {
    const chat = this.chats.get(Number(chatId));
    if (chat === undefined) throw new ApiError(400, "Bad Request: chat not found");
    return chat;
  }

  private botByName(username: string): BotState {
    const bot = [...this.bots.values()].find((b) => b.user.username === username);
    if (bot === undefined) throw new Error(`no fake bot @${username}`);
    return bot;
  }
}

function truthy(value: unknown): boolean {
  return value === true || value === "true";
}

function reply(res: ServerResponse, outcome: unknown): void {
  const body =
    outcome instanceof ApiError
      ? {
          ok: false,
          error_code: outcome.error_code,
          description: outcome.description,
          ...(outcome.parameters ? { parameters: outcome.parameters } : {}),
        }
      : { ok: true, result: outcome };
  res.writeHead(outcome instanceof ApiError ? outcome.error_code : 200, {
    "content-type": "application/json",
  });
  res.end(JSON.stringify(body));
}

/** A parameter value from a form: JSON-serialised objects and arrays are parsed, like Telegram does. */
function formValue(value: string): unknown {
  if (/^[[{]/.test(value)) {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

async function readParams(
  req: IncomingMessage,
  url: URL,
): Promise<{ params: Record<string, unknown>; files: Record<string, SentFile> }> {
  const params: Record<string, unknown> = {};
  const files: Record<string, SentFile> = {};
  for (const [key, value] of url.searchParams) params[key] = formValue(value);
  if (req.method !== "POST") return { params, files };
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  if (body.length === 0) return { params, files };
  const type = req.headers["content-type"] ?? "";
  if (type.startsWith("application/json")) {
    const parsed = JSON.parse(body.toString("utf8")) as unknown;
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
      throw new Error("the body is not a JSON object");
    return { params: { ...params, ...(parsed as Record<string, unknown>) }, files };
  }
  if (type.startsWith("application/x-www-form-urlencoded")) {
    for (const [key, value] of new URLSearchParams(body.toString("utf8"))) params[key] = formValue(value);
    return { params, files };
  }
  if (type.startsWith("multipart/form-data")) {
    const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/.exec(type);
    if (boundary === null) throw new Error("multipart/form-data without a boundary");
    for (const part of multipartParts(body, boundary[1] ?? boundary[2]!)) {
      if (part.filename === undefined) params[part.name] = formValue(part.body.toString("utf8"));
      else
        files[part.name] = {
          kind: "upload",
          name: part.filename,
          mime: part.type ?? "application/octet-stream",
          bytes: part.body,
        };
    }
    return { params, files };
  }
  throw new Error(`unsupported content type ${type}`);
}

/**
 * multipart/form-data as RFC 7578 has it, read as leniently as Telegram reads it: header names in
 * any case, with or without a space after the colon, parameter values quoted or bare (grammY
 * writes `content-disposition:form-data;name="x";filename=y`, which undici's strict parser refuses).
 */
function multipartParts(
  body: Buffer,
  boundary: string,
): Array<{ name: string; filename?: string; type?: string; body: Buffer }> {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Array<{ name: string; filename?: string; type?: string; body: Buffer }> = [];
  let start = body.indexOf(delimiter);
  if (start < 0) throw new Error("Failed to parse body as FormData: no boundary in the body");
  while (true) {
    start += delimiter.length;
    if (body.subarray(start, start + 2).toString() === "--") return parts;
    start += 2; // CRLF after the delimiter
    const end = body.indexOf(delimiter, start);
    if (end < 0) throw new Error("Failed to parse body as FormData: the closing boundary is missing");
    const chunk = body.subarray(start, end - 2); // the CRLF before the next delimiter
    const split = chunk.indexOf("\r\n\r\n");
    if (split < 0) throw new Error("Failed to parse body as FormData: a part has no header end");
    const headers = new Map<string, string>();
    for (const line of chunk.subarray(0, split).toString("utf8").split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const disposition = headers.get("content-disposition") ?? "";
    const param = (key: string) => new RegExp(`;\\s*${key}=(?:"([^"]*)"|([^;]*))`, "i").exec(disposition);
    const name = param("name");
    if (name === null) throw new Error("Failed to parse body as FormData: a part has no name");
    const filename = param("filename");
    const type = headers.get("content-type");
    parts.push({
      name: name[1] ?? name[2]!.trim(),
      ...(filename === null ? {} : { filename: filename[1] ?? filename[2]!.trim() }),
      ...(type === undefined ? {} : { type }),
      body: chunk.subarray(split + 4),
    });
    start = end;
  }
}
