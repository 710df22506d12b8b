/**
 * The test stand-in for Baileys' network layer, loaded inside the plugin's child process through
 * WHATSAPP_SOCKET_MODULE (src/transport.ts). It exports the transport's two functions with their
 * real types: `makeSocket` returns an object with Baileys' own event emitter (`makeEventBuffer`,
 * the one a real socket carries) and the socket methods the channel calls, and `downloadMedia`.
 *
 * It has no protocol logic of WhatsApp's servers: every socket connects over a local TCP line
 * protocol (JSON per line) to the FakeWhatsApp in the test process (./fake-whatsapp.ts), which
 * plays the servers and the phone. What Baileys itself does on the client side during linking is
 * done here, in Baileys' order: on the phone's scan the credentials gain `me`, `creds.update`
 * and `connection.update {isNewLogin}` are emitted, then the connection closes with 515 (restart
 * required) — and the channel must reconnect to be open as the linked device.
 *
 * Linking by phone number likewise: `requestPairingCode` makes the code here and sets `me` to the
 * bare number (creds.update) as Baileys does, then tells the servers the number and the code; when
 * the phone enters that code the credentials become `registered` (Baileys' companion_finish) and
 * the same pair-success sequence as a scan follows.
 */
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { type AuthenticationState, bytesToCrockford, makeEventBuffer, type WAMessage } from "baileys";
import type { SocketOptions, WhatsAppSocket } from "../src/transport.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const [host, port] = (process.env.WHATSAPP_FAKE_ADDRESS ?? "").split(":");

/** Buffers travel as {$b64}; everything else as JSON. */
export function encode(value: unknown): Json {
  if (Buffer.isBuffer(value) || value instanceof Uint8Array)
    return { $b64: Buffer.from(value).toString("base64") };
  if (Array.isArray(value)) return value.map(encode);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encode(v)]));
  return value === undefined ? null : (value as Json);
}

export function decode(value: Json): unknown {
  if (Array.isArray(value)) return value.map(decode);
  if (value !== null && typeof value === "object") {
    if (typeof value.$b64 === "string" && Object.keys(value).length === 1)
      return Buffer.from(value.$b64, "base64");
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decode(v)]));
  }
  return value;
}

function closed(statusCode: number, message: string): Error & { output: { statusCode: number } } {
  return Object.assign(new Error(message), { output: { statusCode } });
}

export function makeSocket({ auth, logger }: SocketOptions): WhatsAppSocket {
  const ev = makeEventBuffer(logger);
  const line = connect(Number(port), host ?? "127.0.0.1");
  const calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let ended = false;
  let user: WhatsAppSocket["user"];
  const send = (message: Record<string, unknown>) => {
    if (!line.destroyed) line.write(`${JSON.stringify(encode(message))}\n`);
  };
  const call = (method: string, ...args: unknown[]) =>
    new Promise<unknown>((resolve, reject) => {
      if (ended) return reject(closed(428, "Connection Closed"));
      const id = ++nextId;
      calls.set(id, { resolve, reject });
      send({ op: "call", id, method, args });
    });
  const end = (error: Error | undefined) => {
    if (ended) return;
    ended = true;
    for (const pending of calls.values()) pending.reject(closed(428, "Connection Closed"));
    calls.clear();
    line.end();
    ev.emit("connection.update", {
      connection: "close",
      lastDisconnect: { error: error ?? closed(428, "Connection Closed"), date: new Date() },
    });
  };
  let buffered = "";
  line.on("data", (chunk) => {
    buffered += chunk.toString("utf8");
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const message = decode(JSON.parse(buffered.slice(0, nl)) as Json) as Record<string, unknown>;
      buffered = buffered.slice(nl + 1);
      handle(message);
    }
  });
  line.on("error", (error) => end(closed(428, error.message)));
  line.on("close", () => end(closed(428, "Connection Lost")));
  const handle = (message: Record<string, unknown>) => {
    switch (message.op) {
      case "qr":
        ev.emit("connection.update", { qr: String(message.code) });
        break;
      case "code_entered":
        // Baileys' companion_finish: the phone took the code; pair-success follows.
        auth.creds.registered = true;
        ev.emit("creds.update", { registered: true });
        break;
      case "scanned": {
        // Baileys' pair-success: the credentials now name the account and hold its signed device
        // identity; restart required.
        auth.creds.me = { id: String(message.account), name: "fake phone" };
        auth.creds.account = {
          details: Buffer.from(String(message.account)),
          accountSignatureKey: Buffer.alloc(32),
          accountSignature: Buffer.alloc(64),
          deviceSignature: Buffer.alloc(64),
        };
        ev.emit("creds.update", { me: auth.creds.me, account: auth.creds.account });
        ev.emit("connection.update", { isNewLogin: true, qr: undefined });
        end(closed(515, "Stream Errored (restart required)"));
        break;
      }
      case "open":
        user = { id: String(message.account) };
        ev.emit("connection.update", { connection: "open" });
        break;
      case "close":
        end(closed(Number(message.code), String(message.reason)));
        break;
      case "upsert":
        ev.emit("messages.upsert", { messages: message.messages as WAMessage[], type: "notify" });
        break;
      case "result":
        calls.get(Number(message.id))?.resolve(message.value);
        calls.delete(Number(message.id));
        break;
      case "error":
        calls.get(Number(message.id))?.reject(new Error(String(message.message)));
        calls.delete(Number(message.id));
        break;
    }
  };
  send({ op: "hello", me: (auth as AuthenticationState).creds.me?.id ?? null, pid: process.pid });
  ev.emit("connection.update", { connection: "connecting" });
  return {
    ev,
    get user() {
      return user;
    },
    sendMessage: async (jid, content) => (await call("sendMessage", jid, content)) as WAMessage,
    readMessages: async (keys) => {
      await call("readMessages", keys);
    },
    sendPresenceUpdate: async (type, jid) => {
      await call("sendPresenceUpdate", type, jid ?? null);
    },
    getBotListV2: async () => (await call("getBotListV2")) as Array<{ jid: string; personaId: string }>,
    updateMediaMessage: async (message) => message,
    requestPairingCode: async (phoneNumber, customPairingCode) => {
      const code = customPairingCode ?? bytesToCrockford(randomBytes(5));
      auth.creds.pairingCode = code;
      auth.creds.me = { id: `${phoneNumber}@s.whatsapp.net`, name: "~" };
      ev.emit("creds.update", auth.creds);
      await call("requestPairingCode", phoneNumber, code);
      return code;
    },
    logout: async () => {
      await call("logout");
      end(closed(401, "Intentional Logout"));
    },
    end: async (error) => end(error),
  };
}

export async function downloadMedia(message: WAMessage, socket: WhatsAppSocket): Promise<Buffer> {
  void socket;
  // The media's bytes, by the message id, from the fake's store (WhatsApp's media servers).
  const [h, p] = [host ?? "127.0.0.1", Number(port)];
  return new Promise<Buffer>((resolve, reject) => {
    const line = connect(p, h);
    let text = "";
    line.on("data", (chunk) => {
      text += chunk.toString("utf8");
      const nl = text.indexOf("\n");
      if (nl < 0) return;
      line.end();
      const answer = decode(JSON.parse(text.slice(0, nl)) as Json) as { bytes?: Buffer; error?: string };
      if (answer.bytes !== undefined) resolve(answer.bytes);
      else reject(new Error(answer.error ?? "no media"));
    });
    line.on("error", reject);
    line.write(`${JSON.stringify({ op: "media", id: message.key.id })}\n`);
  });
}
