/**
 * Drives the real `nexo app-server` process the way DotCraft's clients do: JSON-RPC lines on its
 * stdin/stdout, or text frames on its WebSocket. The client is deliberately raw (no nexo code
 * between the test and the wire): it records every message the server sends, answers server
 * requests through a handler, and lets tests send anything, garbage included.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import WebSocket from "ws";
import { CLI_PATH } from "./cli.js";

export type Message = Record<string, unknown> & {
  id?: number | string | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string; data?: { detail?: string } };
};

export type ServerRequestHandler = (method: string, params: Record<string, unknown>) => unknown;

const WAIT_MS = 15_000;

/** A JSON-RPC client over any line-carrying channel; subclasses say how a line is sent. */
export abstract class RawRpcClient {
  /** Every message received, in order. */
  readonly received: Message[] = [];
  private nextId = 1;
  private waiters: Array<() => void> = [];
  /** Answers server→client requests; default: `{decision: "accept"}` for approvals (the SDK's default). */
  onServerRequest: ServerRequestHandler = (method) =>
    method === "item/approval/request" ? { decision: "accept" } : undefined;

  protected abstract sendText(text: string): void;

  /** Sends raw text as one line or frame (garbage included). */
  sendRaw(text: string): void {
    this.sendText(text);
  }

  send(message: Record<string, unknown>): void {
    this.sendText(JSON.stringify({ jsonrpc: "2.0", ...message }));
  }

  /** Sends a request and resolves with the whole response message (result or error). */
  async call(method: string, params?: unknown): Promise<Message> {
    const id = this.nextId++;
    this.send({ id, method, ...(params === undefined ? {} : { params }) });
    return this.waitFor((m) => m.id === id && m.method === undefined, `the reply to ${method}`);
  }

  /** Sends a request and resolves with its result; rejects with the error's JSON. */
  async request<T = Record<string, unknown>>(method: string, params?: unknown): Promise<T> {
    const reply = await this.call(method, params);
    if (reply.error) throw new Error(`${method} failed: ${JSON.stringify(reply.error)}`);
    return reply.result as T;
  }

  notify(method: string, params: unknown = {}): void {
    this.send({ method, params });
  }

  /** `initialize` then `initialized`, as DotCraft's SDK does. */
  async initialize(capabilities: Record<string, unknown> = {}, name = "test-client"): Promise<Message> {
    const reply = await this.call("initialize", {
      clientInfo: { name, version: "0.0.1" },
      capabilities: { approvalSupport: true, streamingSupport: true, ...capabilities },
    });
    if (reply.error) throw new Error(`initialize failed: ${JSON.stringify(reply.error)}`);
    this.notify("initialized", {});
    return reply;
  }

  /** Notifications received so far with this method (and optionally this thread). */
  notifications(method?: string, threadId?: string): Message[] {
    return this.received.filter(
      (m) =>
        m.method !== undefined &&
        m.id === undefined &&
        (method === undefined || m.method === method) &&
        (threadId === undefined || threadOf(m) === threadId),
    );
  }

  /** Resolves with the first received message (from `from` on) matching `predicate`. */
  async waitFor(predicate: (m: Message) => boolean, what = "a message", from = 0): Promise<Message> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const found = this.received.slice(from).find(predicate);
      if (found) return found;
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${what}; received ${JSON.stringify(this.received.slice(-8))}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  protected onLine(line: string): void {
    if (!line.trim()) return;
    const message = JSON.parse(line) as Message;
    this.received.push(message);
    if (message.method !== undefined && message.id !== undefined && message.id !== null) {
      void this.answer(message);
    }
    for (const wake of this.waiters.splice(0)) wake();
  }

  private async answer(message: Message): Promise<void> {
    try {
      const result = await this.onServerRequest(message.method!, message.params ?? {});
      if (result === undefined) {
        this.send({ id: message.id, error: { code: -32601, message: `not handled: ${message.method}` } });
      } else {
        this.send({ id: message.id, result });
      }
    } catch (error) {
      this.send({ id: message.id, error: { code: -32603, message: String(error) } });
    }
  }
}

/** The thread a notification belongs to: `threadId`, or `turn.threadId` for turn/* events. */
export function threadOf(message: Message): string | undefined {
  const params = message.params ?? {};
  if (typeof params.threadId === "string") return params.threadId;
  const turn = params.turn as { threadId?: string } | undefined;
  if (typeof turn?.threadId === "string") return turn.threadId;
  const thread = params.thread as { id?: string } | undefined;
  return thread?.id;
}

export interface AppServerProcessOptions {
  /** Extra arguments after `app-server`. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** The working directory = the workspace (a fresh temporary directory by default). */
  cwd?: string;
  stateDir?: string;
  /** `ignore` starts it with stdin = /dev/null, as launchers of a pure WebSocket server do. */
  stdin?: "pipe" | "ignore";
}

/** The `nexo app-server` process; when it serves stdio, it is itself the stdio client. */
export class AppServerProcess extends RawRpcClient {
  readonly child: ChildProcessWithoutNullStreams;
  readonly workspace: string;
  readonly stateDir: string;
  stdout = "";
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  private buffered = "";

  constructor(options: AppServerProcessOptions = {}) {
    super();
    this.workspace = options.cwd ?? mkdtempSync(join(tmpdir(), "nexo-as-ws-"));
    this.stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), "nexo-as-state-"));
    this.child = spawn(process.execPath, [CLI_PATH, "app-server", ...(options.args ?? [])], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NEXO_STATE_DIR: this.stateDir,
        NEXO_LOG: "warn",
        ...options.env,
      },
      cwd: this.workspace,
      stdio: [options.stdin ?? "pipe", "pipe", "pipe"],
    }) as ChildProcessWithoutNullStreams;
    this.child.stdout.setEncoding("utf8").on("data", (d: string) => this.onData(d));
    this.child.stderr.setEncoding("utf8").on("data", (d: string) => {
      this.stderr += d;
    });
    this.exited = new Promise((resolve) =>
      this.child.on("close", (code, signal) => resolve({ code, signal, at: Date.now() })),
    );
  }

  protected sendText(text: string): void {
    this.child.stdin.write(`${text}\n`);
  }

  /** Closes the server's stdin (a launcher's graceful stop). */
  endInput(): void {
    this.child.stdin.end();
  }

  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    this.child.kill(signal);
  }

  /** Waits for the line on stderr announcing the WebSocket URL, and returns the URL. */
  async websocketUrl(): Promise<string> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const match = /listening on (ws:\/\/\S+\/ws)/.exec(this.stderr);
      if (match) return match[1]!;
      if (this.child.exitCode !== null) throw new Error(`app-server exited: ${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`no listening line on stderr: ${this.stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Ends the process if the test left it running. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }

  private onData(data: string): void {
    this.stdout += data;
    this.buffered += data;
    for (let nl = this.buffered.indexOf("\n"); nl !== -1; nl = this.buffered.indexOf("\n")) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      this.onLine(line);
    }
  }
}

/** A WebSocket client of the server, speaking as DotCraft Desktop does (a newline after each frame). */
export class WsClient extends RawRpcClient {
  readonly ws: WebSocket;
  readonly opened: Promise<void>;
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(url: string, options: { headers?: Record<string, string> } = {}) {
    super();
    this.ws = new WebSocket(url, { headers: options.headers ?? {} });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      this.ws.once("error", reject);
    });
    this.closed = new Promise((resolve) =>
      this.ws.on("close", (code, reason) => resolve({ code, reason: reason.toString("utf8") })),
    );
    this.ws.on("message", (data, isBinary) => {
      if (isBinary) return;
      for (const line of data.toString().split("\n")) this.onLine(line);
    });
  }

  protected sendText(text: string): void {
    this.ws.send(`${text}\n`);
  }

  /** Sends a frame exactly as given (no newline added). */
  sendFrame(frame: string | Buffer, binary = false): void {
    this.ws.send(frame, { binary });
  }

  close(): void {
    this.ws.close();
  }
}

/** The HTTP status a WebSocket upgrade to `url` is answered with (101 when it opens). */
export function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once("open", () => {
      ws.close();
      resolve(101);
    });
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once("error", (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

/**
 * The usual test bed of an AppServer test file: a mock model server for the file's tests, and the
 * servers and sockets a test opens, closed after it. Call once at the top level of the file.
 */
export function appServerTestbed(): {
  mock: () => MockLlmServer;
  /** `nexo app-server` answered by the mock (Anthropic's API), closed after the test. */
  start: (options?: AppServerProcessOptions) => AppServerProcess;
  /** A WebSocket client closed after the test. */
  connect: (url: string) => WsClient;
} {
  let mock: MockLlmServer | undefined;
  const processes: AppServerProcess[] = [];
  const sockets: WsClient[] = [];
  before(async () => {
    mock = new MockLlmServer();
    await mock.start();
  });
  after(async () => {
    await mock?.close();
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.close();
    for (const p of processes.splice(0)) await p.stop();
  });
  const current = (): MockLlmServer => {
    if (mock === undefined) throw new Error("the mock model server starts before the tests");
    return mock;
  };
  return {
    mock: current,
    start: (options = {}) => {
      const server = new AppServerProcess({
        ...options,
        env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: current().url, ...options.env },
      });
      processes.push(server);
      return server;
    },
    connect: (url) => {
      const socket = new WsClient(url);
      sockets.push(socket);
      return socket;
    },
  };
}
