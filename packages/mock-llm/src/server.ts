/**
 * A real HTTP server that plays an LLM vendor from a script, for tests and demos.
 *
 * `POST /v1/messages` speaks Anthropic's format, `POST /v1/chat/completions` OpenAI's chat format and
 * `POST /v1/responses` OpenAI's Responses API (what Codex speaks), each
 * streaming (SSE) or not, so the official SDKs talk to it unmodified. Every request is recorded
 * (headers and parsed body) so tests can assert what the agent sent. Control endpoints:
 * `GET /__requests` (the recording), `POST /__reset` (forget requests, rewind the script, or
 * replace it with the JSON body). `GET /v1/models` lists models in a shape both SDKs accept.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { anthropicErrorBody, anthropicMessage, anthropicStreamEvents } from "./anthropic-wire.js";
import { openAiCompletion, openAiErrorBody, openAiStreamEvents } from "./openai-wire.js";
import { conversationText, lastUserText, type Protocol, resolveReply } from "./reply.js";
import { responsesObject, responsesStreamEvents } from "./responses-wire.js";
import {
  type MockResponse,
  type MockScript,
  MockScriptError,
  type MockScriptInput,
  parseMockScript,
} from "./script.js";

/** Request bodies above this are refused; real prompts are far smaller, runaway tests are not. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface RecordedRequest {
  /** 1-based, in arrival order. */
  seq: number;
  method: string;
  path: string;
  protocol: Protocol | "other";
  /** Lower-cased header names, as Node reports them. */
  headers: Record<string, string>;
  /** The parsed JSON body, the raw text when it was not JSON, or null when empty. */
  body: unknown;
  receivedAt: string;
  /** Index of the script entry that answered, or null (no entry, control endpoint, bad request). */
  responseIndex: number | null;
  /** The client went away before the response was complete (e.g. it aborted). */
  clientClosed: boolean;
}

export interface MockLlmServerOptions {
  script?: MockScript | MockScriptInput;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
}

const PROTOCOL_OF_PATH: Record<string, Protocol> = {
  "/v1/messages": "anthropic",
  "/v1/chat/completions": "openai",
  "/v1/responses": "responses",
};

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body exceeds ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Bytes of SSE handed to the socket per write when nothing has to be paced or cut. */
const BATCH_BYTES = 16 * 1024;

/**
 * Writes a stream's events in writes of about BATCH_BYTES, as a fast vendor's stream arrives (many
 * events per TCP segment), waiting for `drain` when the client reads slowly. One awaited write per
 * event cost a system call and an event-loop turn each: for a 5,000-delta answer that was most of
 * the time the benchmarks measured (docs/performance.md).
 */
async function writeBatched(res: ServerResponse, events: readonly string[]): Promise<void> {
  let batch = "";
  for (const event of events) {
    batch += event;
    if (batch.length < BATCH_BYTES) continue;
    if (res.destroyed) return;
    const flushed = res.write(batch);
    batch = "";
    if (!flushed) await drained(res);
  }
  if (batch !== "" && !res.destroyed) res.write(batch);
}

/** Resolves on `drain`, or when the response is gone (the client went away). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

export class MockLlmServer {
  private script: MockScript;
  private used: boolean[];
  private readonly recorded: RecordedRequest[] = [];
  private server: Server | undefined;
  private address: string | undefined;

  constructor(private readonly options: MockLlmServerOptions = {}) {
    this.script = parseMockScript(options.script ?? []);
    this.used = this.script.responses.map(() => false);
  }

  /** Starts listening; resolves to the base URL (`http://127.0.0.1:PORT`, no `/v1`). */
  async start(): Promise<string> {
    if (this.address) return this.address;
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent)
          sendJson(res, 500, { error: { message: `mock-llm: ${(error as Error).message}` } });
        else res.destroy();
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port ?? 0, this.options.host ?? "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    const { address, port } = server.address() as AddressInfo;
    const host = address.includes(":") ? `[${address}]` : address;
    this.address = `http://${host}:${port}`;
    return this.address;
  }

  get url(): string {
    if (!this.address) throw new Error("MockLlmServer: call start() first");
    return this.address;
  }

  /** A copy of every request recorded so far. */
  requests(): RecordedRequest[] {
    return structuredClone(this.recorded);
  }

  /** How many script entries have not been served yet. */
  remaining(): number {
    return this.used.filter((u) => !u).length;
  }

  /** Forgets recorded requests and rewinds the script, or replaces it. */
  reset(script?: MockScript | MockScriptInput): void {
    if (script !== undefined) this.script = parseMockScript(script);
    this.used = this.script.responses.map(() => false);
    this.recorded.length = 0;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.address = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://mock").pathname;
    const method = req.method ?? "GET";
    if (path === "/__requests" && method === "GET") return sendJson(res, 200, this.requests());
    if (path === "/__reset" && method === "POST") return this.handleReset(req, res);

    const raw = await readBody(req);
    let body: unknown = null;
    let parsed = true;
    if (raw !== "") {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
        parsed = false;
      }
    }
    const protocol: RecordedRequest["protocol"] = PROTOCOL_OF_PATH[path] ?? "other";
    const record: RecordedRequest = {
      seq: this.recorded.length + 1,
      method,
      path,
      protocol,
      headers: flatHeaders(req),
      body,
      receivedAt: new Date().toISOString(),
      responseIndex: null,
      clientClosed: false,
    };
    this.recorded.push(record);

    if (path === "/v1/models" && method === "GET") return sendJson(res, 200, this.modelList());
    if (protocol === "other" || method !== "POST") {
      return sendJson(res, 404, { error: { message: `mock-llm: no route for ${method} ${path}` } });
    }
    const model =
      typeof (body as { model?: unknown })?.model === "string" ? (body as { model: string }).model : "";
    if (!parsed) {
      return this.sendError(res, protocol, 400, `mock-llm: the request body is not JSON`, model);
    }

    const userText = lastUserText(protocol, body);
    // Computed only when some entry asks: joining a long conversation per request costs.
    let whole: string | undefined;
    const anywhere = (needle: string) => {
      whole ??= conversationText(protocol, body);
      return whole.includes(needle);
    };
    const index = this.script.responses.findIndex(
      (entry, i) =>
        !this.used[i] &&
        (entry.match === undefined || userText.includes(entry.match)) &&
        (entry.match_any === undefined || anywhere(entry.match_any)),
    );
    if (index < 0) {
      const left = this.remaining();
      const message =
        left === 0
          ? `mock-llm: the script is exhausted (${this.script.responses.length} response(s) served); add responses or POST /__reset`
          : `mock-llm: none of the ${left} remaining scripted response(s) matches this request (last user message: ${JSON.stringify(userText.slice(0, 200))})`;
      return this.sendError(res, protocol, 500, message, model);
    }
    this.used[index] = true;
    record.responseIndex = index;
    const entry = this.script.responses[index]!;
    res.on("close", () => {
      if (!res.writableFinished) record.clientClosed = true;
    });
    await this.answer(req, res, protocol, entry, body, record.seq, model);
  }

  private async handleReset(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    try {
      this.reset(raw.trim() === "" ? undefined : (JSON.parse(raw) as MockScriptInput));
    } catch (error) {
      const message =
        error instanceof MockScriptError ? error.message : `invalid JSON: ${(error as Error).message}`;
      return sendJson(res, 400, { error: { message: `mock-llm: ${message}` } });
    }
    sendJson(res, 200, { ok: true, responses: this.script.responses.length });
  }

  private modelList(): unknown {
    const ids = this.script.models ?? ["mock-model"];
    return {
      object: "list",
      data: ids.map((id) => ({
        id,
        object: "model",
        type: "model",
        display_name: id,
        created: 0,
        created_at: "1970-01-01T00:00:00Z",
        owned_by: "mock-llm",
      })),
      has_more: false,
      first_id: ids[0] ?? null,
      last_id: ids[ids.length - 1] ?? null,
    };
  }

  private sendError(
    res: ServerResponse,
    protocol: Protocol,
    status: number,
    message: string | undefined,
    model: string,
    extra: { body?: unknown; headers?: Record<string, string> } = {},
  ): void {
    const body =
      extra.body !== undefined
        ? extra.body
        : protocol === "anthropic"
          ? anthropicErrorBody(status, message, model)
          : openAiErrorBody(status, message, model);
    sendJson(res, status, body, extra.headers);
  }

  private async answer(
    req: IncomingMessage,
    res: ServerResponse,
    protocol: Protocol,
    entry: MockResponse,
    body: unknown,
    seq: number,
    model: string,
  ): Promise<void> {
    const pause = entry.delay_ms ?? 0;
    // A pause ends when the response closes (the client went away, or close() dropped the
    // connection): nobody is left to answer, and the timer (a script may ask for minutes) would
    // otherwise keep the process that hosts the mock alive after its last test.
    const gone = new AbortController();
    if (res.destroyed || req.socket.destroyed) gone.abort();
    else res.once("close", () => gone.abort());
    const paused = (): Promise<boolean> =>
      delay(pause, undefined, { signal: gone.signal }).then(
        () => true,
        () => false,
      );
    if (entry.status !== undefined) {
      if (pause && !(await paused())) return;
      const headers: Record<string, string> = { ...entry.headers };
      if (entry.retry_after !== undefined) headers["retry-after"] = String(entry.retry_after);
      return this.sendError(res, protocol, entry.status, entry.message, model, { body: entry.body, headers });
    }
    if (entry.disconnect_after === 0) {
      req.socket.destroy();
      return;
    }
    const reply = resolveReply(entry, body, protocol, seq);
    const created = Math.floor(Date.now() / 1000);
    const streaming = (body as { stream?: unknown }).stream === true;
    if (!streaming) {
      if (pause && !(await paused())) return;
      if (entry.disconnect_after !== undefined) {
        req.socket.destroy();
        return;
      }
      return sendJson(
        res,
        200,
        protocol === "anthropic"
          ? anthropicMessage(reply)
          : protocol === "responses"
            ? responsesObject(reply, created)
            : openAiCompletion(reply, created),
      );
    }
    const includeUsage =
      (body as { stream_options?: { include_usage?: unknown } }).stream_options?.include_usage === true;
    const events =
      protocol === "anthropic"
        ? anthropicStreamEvents(reply)
        : protocol === "responses"
          ? responsesStreamEvents(reply, created)
          : openAiStreamEvents(reply, includeUsage, created);
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    res.flushHeaders();
    if (!pause && entry.disconnect_after === undefined) {
      await writeBatched(res, events);
      res.end();
      return;
    }
    for (let i = 0; i < events.length; i++) {
      if (entry.disconnect_after !== undefined && i >= entry.disconnect_after) {
        // Destroying the socket mid-body is what a dropped connection looks like to the client.
        req.socket.destroy();
        return;
      }
      if (pause && i > 0 && !(await paused())) return;
      if (res.destroyed) return;
      // Waiting for each write to reach the socket keeps a later destroy() from discarding
      // events the script says were sent.
      await new Promise<void>((resolve) => res.write(events[i], () => resolve()));
    }
    res.end();
  }
}
