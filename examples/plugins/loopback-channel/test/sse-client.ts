/**
 * A minimal Server-Sent Events client for the tests: opens `GET url`, parses the stream into
 * events, and lets a test wait for the next one or for the stream to end.
 */
import { get, type IncomingMessage } from "node:http";

export interface SseEvent {
  event: string;
  id: string | undefined;
  data: string;
}

export class SseClient {
  readonly events: SseEvent[] = [];
  readonly ended: Promise<void>;
  private readonly waiters = new Set<() => void>();
  private buffer = "";
  private current: { event: string; id: string | undefined; data: string[] } = {
    event: "message",
    id: undefined,
    data: [],
  };
  private isEnded = false;

  private constructor(
    private readonly response: IncomingMessage,
    private readonly destroy: () => void,
  ) {
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => this.feed(chunk));
    this.ended = new Promise((resolve) => {
      const end = () => {
        this.isEnded = true;
        resolve();
        this.wake();
      };
      response.once("end", end);
      response.once("close", end);
    });
  }

  /** Resolves once the response headers arrived; rejects for a status other than 200. */
  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const request = get(url, { headers: { accept: "text/event-stream", ...headers } }, (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`HTTP ${response.statusCode}`));
          return;
        }
        resolve(new SseClient(response, () => request.destroy()));
      });
      request.on("error", reject);
    });
  }

  get contentType(): string | undefined {
    return this.response.headers["content-type"];
  }

  /** The `index`-th `message` event (0-based), waiting for it up to `timeoutMs`. */
  message(index: number, timeoutMs = 5_000): Promise<SseEvent> {
    const find = () => this.events.filter((e) => e.event === "message")[index];
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found !== undefined) {
          cleanup();
          resolve(found);
        } else if (this.isEnded) {
          cleanup();
          reject(new Error(`the stream ended before message #${index}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no message #${index} within ${timeoutMs} ms (got ${JSON.stringify(this.events)})`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  close(): void {
    this.destroy();
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    let newline = this.buffer.indexOf("\n");
    while (newline !== -1) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, "");
      this.buffer = this.buffer.slice(newline + 1);
      if (line === "") {
        if (this.current.data.length > 0) {
          this.events.push({
            event: this.current.event,
            id: this.current.id,
            data: this.current.data.join("\n"),
          });
        }
        this.current = { event: "message", id: undefined, data: [] };
      } else if (line.startsWith("data:")) this.current.data.push(line.slice(5).replace(/^ /, ""));
      else if (line.startsWith("event:")) this.current.event = line.slice(6).trim();
      else if (line.startsWith("id:")) this.current.id = line.slice(3).trim();
      newline = this.buffer.indexOf("\n");
    }
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
