/**
 * WhatsApp's servers and the person's phone, for tests: the other end of ./fake-socket.ts (which
 * the plugin's child loads in place of Baileys' network layer). A test drives it: show a QR code,
 * scan it as a phone, type a pairing code on the phone, log the device out, deliver a message (with
 * media bytes), and reads what the channel did: messages sent (with their media), read receipts,
 * logouts, pairing codes asked for.
 *
 * A socket whose credentials name a linked account that was not logged out is opened at once (a
 * restored session needs no QR); one without waits for the test to show QR codes.
 */

import type { AddressInfo } from "node:net";
import { createServer, type Server, type Socket } from "node:net";
import { decode, encode } from "./fake-socket.js";

type Json = Parameters<typeof decode>[0];

export interface Call {
  method: string;
  args: unknown[];
}

export class FakeWhatsApp {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private current: Socket | undefined;
  private readonly watchers = new Set<() => void>();
  /** Accounts whose device is linked (logged-out ones are removed). */
  readonly linked = new Set<string>();
  readonly calls: Call[] = [];
  readonly media = new Map<string, Buffer>();
  readonly bots = [{ jid: "867051314767696@bot", personaId: "meta-ai" }];
  /** The number of socket hellos, linked or not. */
  hellos = 0;
  failSends = 0;
  /** How many of the next pairing-code requests WhatsApp refuses. */
  refuseCodes = 0;
  private sentId = 0;

  get address(): string {
    const { port } = this.server!.address() as AddressInfo;
    return `127.0.0.1:${port}`;
  }

  /** True while a plugin socket is connected. */
  get connected(): boolean {
    return this.current !== undefined && !this.current.destroyed;
  }

  async start(): Promise<void> {
    this.server = createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** Shows the waiting (unlinked) socket a QR code. */
  showQr(code: string): void {
    this.push({ op: "qr", code });
  }

  /** The phone scans the code: the device becomes `account`'s; the socket must reconnect. */
  scan(account: string): void {
    this.linked.add(account);
    this.push({ op: "scanned", account });
  }

  /** The pairing-code requests so far: the number and the code the device registered. */
  codeRequests(): Array<{ phoneNumber: string; code: string }> {
    return this.calls
      .filter((c) => c.method === "requestPairingCode")
      .map((c) => ({ phoneNumber: String(c.args[0]), code: String(c.args[1]) }));
  }

  /**
   * The phone types `code` (Link with phone number): a code the device did not register for that
   * number is refused on the phone (false, nothing reaches the device); the right one links
   * `account` like a scan.
   */
  enterCode(code: string, account: string): boolean {
    const phoneNumber = account.split(/[:@]/)[0];
    const asked = this.codeRequests().at(-1);
    if (asked === undefined || asked.code !== code || asked.phoneNumber !== phoneNumber) return false;
    this.push({ op: "code_entered" });
    this.scan(account);
    return true;
  }

  /** WhatsApp gives up on the QR codes (none scanned). */
  qrTimeout(): void {
    this.push({ op: "close", code: 408, reason: "QR refs attempts ended" });
  }

  /** The phone removes the linked device. */
  logOut(account: string): void {
    this.linked.delete(account);
    this.push({ op: "close", code: 401, reason: "Stream Errored (conflict)" });
  }

  /** The connection drops (a network problem): the channel should reconnect by itself. */
  drop(): void {
    this.current?.destroy();
  }

  /** A person's message reaching the device. */
  deliver(message: Record<string, unknown>): void {
    this.push({ op: "upsert", messages: [message] });
  }

  sent(jid?: string): Call[] {
    return this.calls.filter((c) => c.method === "sendMessage" && (jid === undefined || c.args[0] === jid));
  }

  until<T>(what: string, check: () => T | undefined, timeoutMs = 30_000): Promise<T> {
    const first = check();
    if (first !== undefined) return Promise.resolve(first);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.watchers.delete(watcher);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const watcher = () => {
        const value = check();
        if (value === undefined) return;
        clearTimeout(timer);
        this.watchers.delete(watcher);
        resolve(value);
      };
      this.watchers.add(watcher);
    });
  }

  /** The next sendMessage whose text (or caption) contains `text`, to `jid`. */
  nextSent(jid: string, predicate: (content: Record<string, unknown>) => boolean): Promise<Call> {
    return this.until(`a message to ${jid}`, () =>
      this.sent(jid).find((c) => predicate(c.args[1] as Record<string, unknown>)),
    );
  }

  private wake(): void {
    for (const watcher of [...this.watchers]) watcher();
  }

  private push(message: Record<string, unknown>): void {
    if (this.current === undefined) throw new Error("no plugin socket is connected");
    this.current.write(`${JSON.stringify(encode(message))}\n`);
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => {
      this.sockets.delete(socket);
      if (this.current === socket) this.current = undefined;
      this.wake();
    });
    socket.on("error", () => undefined);
    let buffered = "";
    socket.on("data", (chunk) => {
      buffered += chunk.toString("utf8");
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const message = decode(JSON.parse(buffered.slice(0, nl)) as Json) as Record<string, unknown>;
        buffered = buffered.slice(nl + 1);
        this.handle(socket, message);
      }
    });
  }

  private handle(socket: Socket, message: Record<string, unknown>): void {
    const reply = (value: Record<string, unknown>) => socket.write(`${JSON.stringify(encode(value))}\n`);
    if (message.op === "media") {
      const bytes = this.media.get(String(message.id));
      reply(bytes === undefined ? { error: "media not found (410)" } : { bytes });
      socket.end();
      return;
    }
    if (message.op === "hello") {
      this.hellos += 1;
      this.current = socket;
      const me = typeof message.me === "string" ? message.me : undefined;
      if (me !== undefined && this.linked.has(me)) reply({ op: "open", account: me });
      else if (me !== undefined) reply({ op: "close", code: 401, reason: "Stream Errored (device removed)" });
      this.wake();
      return;
    }
    if (message.op !== "call") return;
    const method = String(message.method);
    const args = message.args as unknown[];
    const id = message.id;
    if (method === "requestPairingCode" && this.refuseCodes > 0) {
      this.refuseCodes -= 1;
      this.calls.push({ method: "requestPairingCode (refused)", args });
      this.wake();
      reply({ op: "error", id, message: "Connection Closed" });
      return;
    }
    if (method === "sendMessage" && this.failSends > 0) {
      this.failSends -= 1;
      this.calls.push({ method: "sendMessage (failed)", args });
      this.wake();
      reply({ op: "error", id, message: "Timed Out" });
      return;
    }
    this.calls.push({ method, args });
    this.wake();
    if (method === "sendMessage") {
      reply({
        op: "result",
        id,
        value: { key: { remoteJid: args[0], fromMe: true, id: `SENT${++this.sentId}` } },
      });
    } else if (method === "getBotListV2") reply({ op: "result", id, value: this.bots });
    else reply({ op: "result", id, value: null });
  }
}
