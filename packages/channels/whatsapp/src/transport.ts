/**
 * The one seam between the channel and WhatsApp: how a socket is made and how an inbound media
 * message's bytes are fetched. In every real deployment these are Baileys' own `makeWASocket` and
 * `downloadMediaMessage`, speaking WhatsApp Web's multi-device protocol.
 *
 * WHATSAPP_SOCKET_MODULE (tests only) names a module exporting `makeSocket` and `downloadMedia`
 * with the same types: the repository's tests load a stand-in for WhatsApp's servers that drives
 * the channel through exactly this surface — the socket's `ev` events and the methods listed in
 * WhatsAppSocket. Nothing else in the channel touches Baileys' network layer.
 */
import { pathToFileURL } from "node:url";
import type { AuthenticationState, SocketConfig, WAMessage, WASocket } from "baileys";
import { loadBaileys } from "./baileys.js";

/** Baileys' pino-shaped logger (the type is not exported by name). */
export type ILogger = SocketConfig["logger"];

/** The part of Baileys' socket the channel uses. */
export type WhatsAppSocket = Pick<
  WASocket,
  | "ev"
  | "sendMessage"
  | "readMessages"
  | "sendPresenceUpdate"
  | "end"
  | "logout"
  | "getBotListV2"
  | "updateMediaMessage"
  | "requestPairingCode"
> & { readonly user: WASocket["user"] };

export interface SocketOptions {
  auth: AuthenticationState;
  logger: ILogger;
}

export interface WhatsAppTransport {
  makeSocket(options: SocketOptions): WhatsAppSocket;
  downloadMedia(message: WAMessage, socket: WhatsAppSocket, logger: ILogger): Promise<Buffer>;
}

/** Baileys' transport, or the test module's when WHATSAPP_SOCKET_MODULE names one. */
export async function loadTransport(socketModule: string | undefined): Promise<WhatsAppTransport> {
  if (socketModule !== undefined) {
    const loaded = (await import(pathToFileURL(socketModule).href)) as Partial<WhatsAppTransport>;
    if (typeof loaded.makeSocket !== "function" || typeof loaded.downloadMedia !== "function")
      throw new Error(`${socketModule} does not export makeSocket and downloadMedia`);
    return { makeSocket: loaded.makeSocket, downloadMedia: loaded.downloadMedia };
  }
  const baileys = await loadBaileys();
  return {
    makeSocket: ({ auth, logger }) =>
      baileys.makeWASocket({
        auth: { creds: auth.creds, keys: baileys.makeCacheableSignalKeyStore(auth.keys, logger) },
        logger,
        browser: baileys.Browsers.ubuntu("nexo"),
        // The phone stays the place where the person reads: this device does not mark itself online
        // (which would silence the phone's notifications) nor pull the whole chat history.
        markOnlineOnConnect: false,
        syncFullHistory: false,
        getMessage: async () => undefined,
      }),
    downloadMedia: (message, socket, logger) =>
      baileys.downloadMediaMessage(
        message,
        "buffer",
        {},
        { reuploadRequest: (m) => socket.updateMediaMessage(m), logger },
      ),
  };
}

/** Baileys' logs (pino-shaped) to the plugin's redacted stderr, warnings and errors only. */
export function baileysLogger(log: (line: string) => void, bindings: Record<string, unknown> = {}): ILogger {
  const scope = Object.entries(bindings)
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(" ");
  const at =
    (level: string) =>
    (obj: unknown, msg?: string): void => {
      const detail =
        obj instanceof Error
          ? obj.message
          : typeof obj === "string"
            ? obj
            : ((obj as { err?: Error })?.err?.message ?? "");
      log(`baileys ${level}${scope ? ` (${scope})` : ""}: ${[msg, detail].filter(Boolean).join(": ")}`);
    };
  const quiet = (): void => {};
  return {
    level: "warn",
    child: (more: Record<string, unknown>) => baileysLogger(log, { ...bindings, ...more }),
    trace: quiet,
    debug: quiet,
    info: quiet,
    warn: at("warn"),
    error: at("error"),
  };
}
