/**
 * Sending one queued reply to WhatsApp: its text first, then each attachment as the message kind
 * WhatsApp shows best (a picture, a voice note or audio, a video, or a document with its name).
 * What was already sent is recorded in the item (`done`), so a retry after a failure sends only
 * the rest. Not connected is "later" (the queue keeps the message); a chat that is not a JID, or a
 * file the operator did not allow, is "never".
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import {
  type Attachment,
  type MediaRoots,
  mimeFromName,
  type OutboxRecord,
  PermanentDeliveryError,
  RetryableDeliveryError,
} from "@nexo/channels-common";
import type { AnyMessageContent } from "baileys";
import { toJid } from "./address.js";
import type { WhatsAppSocket } from "./transport.js";

export interface OutboundItem {
  text: string;
  attachments: Attachment[];
  /** Parts already sent: 0 = nothing, 1 = the text, 1 + n = the text and n attachments. */
  done: number;
  ids: string[];
}

export class WhatsAppSender {
  constructor(
    private readonly socket: () => WhatsAppSocket | undefined,
    private readonly roots: MediaRoots,
  ) {}

  /** Throws MediaPathRefusedError when `path` is not under the media directories. */
  checkPath(path: string): void {
    this.roots.check(path);
  }

  async deliver(record: OutboxRecord<OutboundItem>): Promise<string[]> {
    const socket = this.socket();
    if (socket === undefined) throw new RetryableDeliveryError("WhatsApp is not connected");
    const jid = toJid(record.to);
    if (jid === undefined) throw new PermanentDeliveryError(`"${record.to}" is not a WhatsApp chat`);
    const item = record.item;
    try {
      if (item.done === 0) {
        if (item.text !== "") item.ids.push(idOf(await socket.sendMessage(jid, { text: item.text })));
        item.done = 1;
      }
      while (item.done - 1 < item.attachments.length) {
        const attachment = item.attachments[item.done - 1]!;
        item.ids.push(idOf(await socket.sendMessage(jid, this.contentOf(attachment))));
        item.done += 1;
      }
    } catch (error) {
      if (error instanceof PermanentDeliveryError || error instanceof RetryableDeliveryError) throw error;
      throw new RetryableDeliveryError(`WhatsApp did not take the message: ${(error as Error).message}`);
    }
    return item.ids;
  }

  private contentOf(attachment: Attachment): AnyMessageContent {
    // Only local files get here (links are sent as text): fetching a URL a model named would let
    // it make this process request anything, the daemon's own ports included.
    if (attachment.path === undefined) throw new PermanentDeliveryError("only local files are sent as media");
    let real: string;
    try {
      real = this.roots.check(attachment.path);
    } catch (error) {
      throw new PermanentDeliveryError((error as Error).message);
    }
    const bytes = readFileSync(real);
    const fileName = attachment.file_name ?? basename(real);
    const mimetype = attachment.mime_type ?? mimeFromName(fileName) ?? "application/octet-stream";
    const caption = attachment.caption;
    switch (attachment.kind) {
      case "image":
        return { image: bytes, mimetype, ...(caption ? { caption } : {}) };
      case "video":
        return { video: bytes, mimetype, ...(caption ? { caption } : {}) };
      case "voice":
      case "audio":
        return { audio: bytes, mimetype, ptt: attachment.kind === "voice" };
      default:
        return { document: bytes, mimetype, fileName, ...(caption ? { caption } : {}) };
    }
  }
}

function idOf(sent: { key?: { id?: string | null } } | undefined): string {
  return sent?.key?.id ?? "";
}
