/**
 * Sending one queued message to Telegram: its text (cut at 4096 characters, Telegram's limit, on
 * line breaks where possible) and then each attachment — images with sendPhoto, voice notes with
 * sendVoice, everything else with sendDocument; a URL is handed to Telegram to fetch, a local file
 * (only from the media directories) is uploaded. Progress is kept in the item, so a retry after a
 * partial send does not repeat what already went out.
 *
 * Telegram's answers become the queue's verdicts: 429 and 5xx and network failures are retried
 * (after the `retry_after` Telegram asks for), a 401 too (a new token may be registered), other
 * 4xx (chat not found, bot blocked, bad request) fail the message at once.
 */
import { statSync } from "node:fs";
import { basename } from "node:path";
import {
  type Attachment,
  MediaPathRefusedError,
  type MediaRoots,
  type OutboxRecord,
  PermanentDeliveryError,
  RetryableDeliveryError,
  splitText,
} from "@nexo/channels-common";
import { type Api, GrammyError, HttpError, InputFile } from "grammy";

export interface OutboundItem {
  text: string;
  attachments: Attachment[];
  /** The message this one answers (in groups), quoted by Telegram. */
  reply_to?: number;
  /** Parts (text chunks, then attachments) already sent. */
  done: number;
  ids: string[];
}

export const TEXT_LIMIT = 4096;
const CAPTION_LIMIT = 1024;
const PHOTO_UPLOAD_LIMIT = 10 * 1024 * 1024;
const FILE_UPLOAD_LIMIT = 50 * 1024 * 1024;

type Part = { text: string } | { attachment: Attachment };

function partsOf(item: OutboundItem): Part[] {
  return [
    ...splitText(item.text, TEXT_LIMIT).map((text) => ({ text })),
    ...item.attachments.map((attachment) => ({ attachment })),
  ];
}

/** The verdict for an error from the Bot API. */
export function classify(error: unknown): Error {
  if (error instanceof PermanentDeliveryError || error instanceof RetryableDeliveryError) return error;
  if (error instanceof MediaPathRefusedError) return new PermanentDeliveryError(error.message);
  if (error instanceof GrammyError) {
    const reason = `${error.method}: ${error.error_code} ${error.description}`;
    if (error.error_code === 429) {
      const after = Number(error.parameters.retry_after ?? 1);
      return new RetryableDeliveryError(reason, after * 1000);
    }
    if (error.error_code >= 500 || error.error_code === 401) return new RetryableDeliveryError(reason);
    return new PermanentDeliveryError(reason);
  }
  if (error instanceof HttpError) return new RetryableDeliveryError(error.message);
  return new RetryableDeliveryError((error as Error)?.message ?? String(error));
}

export class TelegramSender {
  constructor(
    private readonly api: () => Api | undefined,
    private readonly mediaRoots: MediaRoots,
  ) {}

  /** Throws MediaPathRefusedError when a local file may not be sent. */
  checkPath(path: string): void {
    this.mediaRoots.check(path);
  }

  /** The Outbox's `deliver`: sends what is left of the item; returns every message id. */
  async deliver(record: OutboxRecord<OutboundItem>): Promise<string[]> {
    const api = this.api();
    if (api === undefined) throw new RetryableDeliveryError("the Telegram channel is not running");
    const item = record.item;
    const parts = partsOf(item);
    try {
      for (let index = item.done; index < parts.length; index++) {
        const reply =
          index === 0 && item.reply_to !== undefined
            ? { reply_parameters: { message_id: item.reply_to, allow_sending_without_reply: true } }
            : {};
        const part = parts[index]!;
        const sent =
          "text" in part
            ? await api.sendMessage(record.to, part.text, reply)
            : await this.sendAttachment(api, record.to, part.attachment, reply);
        item.ids.push(`${record.to}:${sent.message_id}`);
        item.done = index + 1;
      }
    } catch (error) {
      throw classify(error);
    }
    return item.ids;
  }

  private async sendAttachment(
    api: Api,
    chatId: string,
    attachment: Attachment,
    reply: object,
  ): Promise<{ message_id: number }> {
    const caption =
      attachment.caption === undefined ? {} : { caption: attachment.caption.slice(0, CAPTION_LIMIT) };
    const options = { ...reply, ...caption };
    let file: InputFile | string;
    let size = 0;
    if (attachment.url !== undefined) file = attachment.url;
    else {
      const real = this.mediaRoots.check(attachment.path!);
      size = statSync(real).size;
      if (size > FILE_UPLOAD_LIMIT) {
        throw new PermanentDeliveryError(
          `${attachment.path}: ${size} bytes is over the Bot API's 50 MB upload limit`,
        );
      }
      file = new InputFile(real, attachment.file_name ?? basename(real));
    }
    if (attachment.kind === "image" && size <= PHOTO_UPLOAD_LIMIT)
      return api.sendPhoto(chatId, file, options);
    if (attachment.kind === "voice") return api.sendVoice(chatId, file, options);
    return api.sendDocument(chatId, file, options);
  }
}
