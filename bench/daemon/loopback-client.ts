/**
 * The benchmark's client of the loopback channel's HTTP API (examples/plugins/loopback-channel):
 * POST /messages to speak as a contact, GET /messages?to=&timeout= to long-poll for its replies.
 *
 * It uses node:http with its own keep-alive agent rather than fetch: the pool is ours to size (a
 * thousand long-polls wait at once in the sessions test), and on a small machine the client's
 * CPU is taken from the daemon it measures, so the lighter client is the fairer one.
 */
import { Agent, request } from "node:http";

/** A reply as the loopback channel delivers it. */
export interface LoopbackReply {
  message_id: string;
  to: string;
  kind: string;
  text?: string;
  sent_at_unix: number;
}

/** An HTTP exchange that did not end with the expected status, or a connection that failed. */
export class LoopbackHttpError extends Error {
  constructor(
    readonly what: string,
    readonly status: number | undefined,
    detail: string,
  ) {
    super(`${what}: ${status === undefined ? "" : `HTTP ${status} `}${detail}`);
    this.name = "LoopbackHttpError";
  }
}

export class LoopbackClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  private readonly host: string;
  private readonly port: number;

  constructor(baseUrl: string) {
    const url = new URL(baseUrl);
    this.host = url.hostname;
    this.port = Number(url.port);
  }

  /** Posts `text` as `from`; resolves once the channel has handed it to the daemon (202). */
  async post(from: string, text: string): Promise<void> {
    await this.exchange("POST", "/messages", 202, JSON.stringify({ from, text }));
  }

  /** What is queued for `to`, or the next reply within `timeoutMs` ([] if none came). */
  async poll(to: string, timeoutMs: number): Promise<LoopbackReply[]> {
    const body = await this.exchange(
      "GET",
      `/messages?to=${encodeURIComponent(to)}&timeout=${timeoutMs}`,
      200,
    );
    return (JSON.parse(body) as { messages: LoopbackReply[] }).messages;
  }

  close(): void {
    this.agent.destroy();
  }

  private exchange(
    method: string,
    path: string,
    expected: number,
    body?: string,
    retried = false,
  ): Promise<string> {
    const what = `${method} ${path}`;
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.host,
          port: this.port,
          method,
          path,
          agent: this.agent,
          headers:
            body === undefined
              ? {}
              : { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => {
            if (res.statusCode === expected) resolve(text);
            else reject(new LoopbackHttpError(what, res.statusCode, text));
          });
          res.on("error", (error) => reject(new LoopbackHttpError(what, undefined, error.message)));
        },
      );
      req.on("error", (error: NodeJS.ErrnoException) => {
        // A kept-alive connection the server closed while it sat idle (its keep-alive timeout)
        // fails the first request that reuses it: the race Node documents for keep-alive agents.
        // Sent again once, on a new connection; the message never reached the channel.
        if (req.reusedSocket && error.code === "ECONNRESET" && !retried) {
          this.exchange(method, path, expected, body, true).then(resolve, reject);
          return;
        }
        reject(new LoopbackHttpError(what, undefined, error.message));
      });
      req.end(body);
    });
  }
}
