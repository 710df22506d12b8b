/**
 * Sending one queued reply to Slack: its text with chat.postMessage (in the conversation's thread
 * when it has one), then each attachment with files.uploadV2 into the same place. What was already
 * sent is recorded in the item (`done`), so a retry after a failure sends only the rest. Slack's
 * refusals are sorted into retry-later (rate limits, server errors, the network) and never
 * (an unknown or archived channel, the app not in the channel, a file the operator did not allow).
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import {
  type Attachment,
  MediaPathRefusedError,
  type MediaRoots,
  type OutboxRecord,
  PermanentDeliveryError,
  RetryableDeliveryError,
} from "@nexo/channels-common";
import { ErrorCode, type WebClient } from "@slack/web-api";
import { parseAddress } from "./address.js";

export interface OutboundItem {
  text: string;
  attachments: Attachment[];
  /** Parts already sent: 0 = nothing, 1 = the text, 1 + n = the text and n attachments. */
  done: number;
  ids: string[];
}

/** Slack's answers that will not change on a retry. */
const PERMANENT = new Set([
  "channel_not_found",
  "not_in_channel",
  "is_archived",
  "msg_too_long",
  "no_text",
  "restricted_action",
  "cannot_dm_bot",
  "user_not_found",
  "invalid_blocks",
]);

export function classify(error: unknown): Error {
  if (error instanceof PermanentDeliveryError || error instanceof RetryableDeliveryError) return error;
  if (error instanceof MediaPathRefusedError) return new PermanentDeliveryError(error.message);
  const e = error as { code?: string; retryAfter?: number; data?: { error?: string } };
  if (e.code === ErrorCode.RateLimitedError) {
    return new RetryableDeliveryError("Slack rate limited the app", (e.retryAfter ?? 1) * 1000);
  }
  if (e.code === ErrorCode.PlatformError) {
    const reason = e.data?.error ?? "refused";
    return PERMANENT.has(reason)
      ? new PermanentDeliveryError(`Slack refused: ${reason}`)
      : new RetryableDeliveryError(`Slack refused: ${reason}`);
  }
  return new RetryableDeliveryError((error as Error)?.message ?? String(error));
}

export class SlackSender {
  constructor(
    private readonly client: () => WebClient | undefined,
    private readonly roots: MediaRoots,
  ) {}

  /** Throws MediaPathRefusedError for a local file outside the media directories. */
  checkPath(path: string): void {
    this.roots.check(path);
  }

  async deliver(record: OutboxRecord<OutboundItem>): Promise<string[]> {
    const client = this.client();
    if (client === undefined) throw new RetryableDeliveryError("the Slack channel is not running");
    const address = parseAddress(record.to);
    if (address === undefined) throw new PermanentDeliveryError(`"${record.to}" is not a Slack conversation`);
    const item = record.item;
    const thread = address.threadTs === undefined ? {} : { thread_ts: address.threadTs };
    try {
      if (item.done === 0) {
        if (item.text !== "") {
          const posted = await client.chat.postMessage({
            channel: address.channel,
            text: item.text,
            ...thread,
          });
          item.ids.push(String(posted.ts ?? ""));
        }
        item.done = 1;
      }
      while (item.done - 1 < item.attachments.length) {
        const attachment = item.attachments[item.done - 1]!;
        const file = await this.fileOf(attachment);
        const uploaded = await client.files.uploadV2({
          channel_id: address.channel,
          ...thread,
          file: file.bytes,
          filename: file.name,
          ...(attachment.caption ? { initial_comment: attachment.caption } : {}),
        });
        const ids = (uploaded as { files?: Array<{ files?: Array<{ id?: string }> }> }).files
          ?.flatMap((f) => f.files ?? [])
          .map((f) => String(f.id ?? ""));
        item.ids.push(...(ids ?? []));
        item.done += 1;
      }
    } catch (error) {
      throw classify(error);
    }
    return item.ids;
  }

  private async fileOf(attachment: Attachment): Promise<{ bytes: Buffer; name: string }> {
    // Links never get here (the channel posts them as links): fetching a URL a model named would
    // let it make this process request anything, the daemon's own ports included.
    if (attachment.path === undefined) throw new PermanentDeliveryError("only local files are uploaded");
    const real = this.roots.check(attachment.path);
    return { bytes: readFileSync(real), name: attachment.file_name ?? basename(real) };
  }
}
