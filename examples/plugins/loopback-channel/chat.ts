/**
 * A terminal chat for the loopback channel: type a line, it is POSTed to the channel (and from
 * there to the agent bound to it); replies arrive over the channel's event stream and are printed
 * as they come.
 *
 *   node dist/chat.js --url http://127.0.0.1:PORT [--from you] [--token T]
 *   node dist/chat.js --endpoint-file STATE_DIR/endpoint.json [--wait-secs 30] [--endpoint-not-before MS]
 *
 * (dist/chat.js is this file compiled by the repository's build, scripts/build-examples.mjs.)
 *
 * `--endpoint-file` reads the address the plugin wrote when its channel started (useful with
 * LOOPBACK_PORT=0), waiting for the file while the daemon boots and reading it again after a
 * lost connection, since a restarted plugin may listen on another port. `--endpoint-not-before`
 * (epoch ms) ignores a file written before then, i.e. by an earlier run. LOOPBACK_URL and
 * LOOPBACK_TOKEN are read when the flags are absent. `/quit` or Ctrl-D ends the chat.
 *
 * Plain Node (fetch, readline): no dependency, so it can be copied anywhere.
 */
import { readFileSync, statSync } from "node:fs";
import { createInterface, type Interface } from "node:readline";
import { parseArgs } from "node:util";

const USAGE =
  "usage: chat.ts (--url URL | --endpoint-file FILE [--endpoint-not-before EPOCH_MS]) [--from CONTACT_ID] [--token TOKEN] [--wait-secs N]";
const CONTACT_ID = /^[\w.@:+-]{1,128}$/;

interface Options {
  url: string | undefined;
  endpointFile: string | undefined;
  /** An endpoint file last written before this time (epoch ms) belongs to an earlier run. */
  endpointNotBefore: number;
  from: string;
  token: string | undefined;
  waitSecs: number;
}

/** Thrown for what retrying cannot fix (bad token, bad flags): the chat ends with a message. */
class FatalError extends Error {}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      url: { type: "string" },
      "endpoint-file": { type: "string" },
      "endpoint-not-before": { type: "string" },
      from: { type: "string" },
      token: { type: "string" },
      "wait-secs": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const url = values.url ?? process.env.LOOPBACK_URL;
  const endpointFile = values["endpoint-file"];
  if ((url === undefined) === (endpointFile === undefined)) {
    throw new FatalError(`give exactly one of --url (or LOOPBACK_URL) and --endpoint-file\n${USAGE}`);
  }
  const from =
    values.from ?? (process.env.USER && CONTACT_ID.test(process.env.USER) ? process.env.USER : "you");
  if (!CONTACT_ID.test(from)) throw new FatalError(`--from must match ${CONTACT_ID}`);
  const waitSecs = Number(values["wait-secs"] ?? "30");
  if (!Number.isFinite(waitSecs) || waitSecs < 0)
    throw new FatalError("--wait-secs must be a number of seconds");
  const endpointNotBefore = Number(values["endpoint-not-before"] ?? "0");
  if (!Number.isFinite(endpointNotBefore))
    throw new FatalError("--endpoint-not-before must be epoch milliseconds");
  return {
    url,
    endpointFile,
    endpointNotBefore,
    from,
    token: values.token ?? process.env.LOOPBACK_TOKEN,
    waitSecs,
  };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

class Chat {
  private readonly stop = new AbortController();
  private readonly rl: Interface;
  private readonly interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  private sending: Promise<void> = Promise.resolve();
  private baseUrl: string | undefined;

  constructor(private readonly options: Options) {
    this.rl = createInterface({ input: process.stdin, output: process.stdout, terminal: this.interactive });
    this.rl.setPrompt(`${options.from}> `);
  }

  async run(): Promise<void> {
    this.rl.on("line", (line) => {
      const text = line.trim();
      if (text === "/quit") return this.rl.close();
      if (text !== "") this.sending = this.sending.then(() => this.post(text));
      this.prompt();
    });
    const inputClosed = new Promise<void>((resolve) => this.rl.once("close", resolve));
    const streaming = this.streamReplies();
    await inputClosed;
    // Lines typed just before Ctrl-D are still sent.
    await this.sending;
    this.stop.abort();
    await streaming;
  }

  private async endpoint(refresh: boolean): Promise<string> {
    if (this.options.url !== undefined) return this.options.url.replace(/\/+$/, "");
    if (this.baseUrl !== undefined && !refresh) return this.baseUrl;
    const file = this.options.endpointFile!;
    const deadline = Date.now() + this.options.waitSecs * 1000;
    for (;;) {
      try {
        const fresh = statSync(file).mtimeMs >= this.options.endpointNotBefore;
        const { url } = JSON.parse(readFileSync(file, "utf8")) as { url?: unknown };
        if (fresh && typeof url === "string") {
          this.baseUrl = url;
          return url;
        }
      } catch {
        // Not written yet (the daemon is starting) or being replaced: look again shortly.
      }
      if (Date.now() >= deadline || this.stop.signal.aborted) {
        throw new FatalError(
          `no usable endpoint in ${file} after ${this.options.waitSecs} s: is the daemon running?`,
        );
      }
      await sleep(200, this.stop.signal);
    }
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return this.options.token === undefined
      ? extra
      : { ...extra, authorization: `Bearer ${this.options.token}` };
  }

  private async post(text: string): Promise<void> {
    try {
      const url = await this.endpoint(false);
      const response = await fetch(`${url}/messages`, {
        method: "POST",
        headers: this.headers({ "content-type": "application/json" }),
        body: JSON.stringify({ from: this.options.from, text }),
      });
      if (!response.ok) this.status(`could not send (HTTP ${response.status}): ${await response.text()}`);
    } catch (error) {
      this.status(`could not send: ${(error as Error).message}`);
    }
  }

  /** Keeps one event stream open until the chat ends, reconnecting with a growing pause. */
  private async streamReplies(): Promise<void> {
    let pauseMs = 500;
    let refresh = false;
    while (!this.stop.signal.aborted) {
      try {
        const url = await this.endpoint(refresh);
        const response = await fetch(`${url}/stream?to=${encodeURIComponent(this.options.from)}`, {
          headers: this.headers({ accept: "text/event-stream" }),
          signal: this.stop.signal,
        });
        if (response.status === 401) throw new FatalError("the channel refused the token (HTTP 401)");
        if (!response.ok || response.body === null) throw new Error(`HTTP ${response.status}`);
        this.status(`connected to ${url} as ${this.options.from}; type a message (Ctrl-D to quit)`);
        pauseMs = 500;
        await this.readEvents(response.body);
        if (!this.stop.signal.aborted) this.status("the channel closed the stream; reconnecting");
      } catch (error) {
        if (this.stop.signal.aborted) return;
        if (error instanceof FatalError) {
          this.status(error.message);
          process.exitCode = 1;
          this.rl.close();
          return;
        }
        this.status(`no connection (${(error as Error).message}); retrying in ${pauseMs} ms`);
      }
      await sleep(pauseMs, this.stop.signal);
      pauseMs = Math.min(pauseMs * 2, 5_000);
      refresh = true;
    }
  }

  /** Server-Sent Events: `data:` lines up to a blank line make one event. */
  private async readEvents(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    let event = "message";
    let data: string[] = [];
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true });
      let newline = buffer.search(/\r?\n/);
      while (newline !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(buffer[newline] === "\r" ? newline + 2 : newline + 1);
        if (line === "") {
          if (event === "message" && data.length > 0) this.show(data.join("\n"));
          event = "message";
          data = [];
        } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        else if (line.startsWith("event:")) event = line.slice(6).trim();
        newline = buffer.search(/\r?\n/);
      }
    }
  }

  private show(json: string): void {
    let message: { text?: unknown; url?: unknown; caption?: unknown };
    try {
      message = JSON.parse(json) as typeof message;
    } catch {
      this.status(`unreadable event ignored: ${json.slice(0, 200)}`);
      return;
    }
    const text =
      typeof message.text === "string"
        ? message.text
        : `[media] ${String(message.url)}${typeof message.caption === "string" ? ` ${message.caption}` : ""}`;
    this.print(process.stdout, `nexo> ${text}`);
  }

  private status(line: string): void {
    this.print(process.stderr, `(${line})`);
  }

  /** Prints above the prompt without losing what the user was typing. */
  private print(stream: NodeJS.WriteStream, line: string): void {
    if (!this.interactive) {
      stream.write(`${line}\n`);
      return;
    }
    process.stdout.write("\r\x1b[K");
    stream.write(`${line}\n`);
    this.rl.prompt(true);
  }

  private prompt(): void {
    if (this.interactive) this.rl.prompt(true);
  }
}

try {
  const chat = new Chat(readOptions());
  await chat.run();
} catch (error) {
  if (!(error instanceof FatalError)) throw error;
  process.stderr.write(`chat: ${error.message}\n`);
  process.exitCode = 2;
}
