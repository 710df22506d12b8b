/**
 * Sending one queued reply to Discord through discord.js's REST client: its text in pieces of at
 * most 2,000 characters (Discord's limit), then each attachment as a message of its own with the
 * file. The first piece answers a pending slash command (its deferred "thinking…" reply is edited)
 * when there is one for the conversation. What was already sent is recorded in the item (`done`),
 * so a retry after a failure sends only the rest. Mentions in the agent's text never ping anyone
 * (`allowed_mentions: {parse: []}`): a model must not be able to call @everyone.
 *
 * Discord's refusals are sorted into retry-later (5xx, 401 while a token is rotated, the network)
 * and never (unknown channel, no access, a file too large, a file outside the media directories).
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
  splitText,
} from "@nexo/channels-common";
import { DiscordAPIError, HTTPError, RateLimitError, type REST, Routes } from "discord.js";

export const TEXT_LIMIT = 2000;

export interface OutboundItem {
  text: string;
  attachments: Attachment[];
  /** Parts (text pieces, then attachments) already sent. */
  done: number;
  ids: string[];
}

/** A slash command waiting for its answer: the interaction's webhook, valid for 15 minutes. */
export interface PendingInteraction {
  applicationId: string;
  token: string;
  expiresAt: number;
}

const SNOWFLAKE = /^\d{15,21}$/;

export function isConversationId(to: string): boolean {
  return SNOWFLAKE.test(to);
}

export function classify(error: unknown): Error {
  if (error instanceof PermanentDeliveryError || error instanceof RetryableDeliveryError) return error;
  if (error instanceof MediaPathRefusedError) return new PermanentDeliveryError(error.message);
  if (error instanceof RateLimitError) {
    return new RetryableDeliveryError("Discord rate limited the bot", error.retryAfter);
  }
  if (error instanceof DiscordAPIError) {
    const what = `Discord refused (HTTP ${error.status}, code ${error.code}): ${error.message}`;
    if (error.status === 401 || error.status === 429 || error.status >= 500) {
      return new RetryableDeliveryError(what);
    }
    return new PermanentDeliveryError(what);
  }
  if (error instanceof HTTPError) return new RetryableDeliveryError(`Discord answered HTTP ${error.status}`);
  return new RetryableDeliveryError((error as Error)?.message ?? String(error));
}

const NO_PINGS = { parse: [] as string[] };

export class DiscordSender {
  constructor(
    private readonly rest: () => REST | undefined,
    private readonly roots: MediaRoots,
    /** Takes the conversation's pending slash command, if any (it answers once). */
    private readonly takeInteraction: (to: string) => PendingInteraction | undefined,
  ) {}

  /** Throws MediaPathRefusedError for a local file outside the media directories. */
  checkPath(path: string): void {
    this.roots.check(path);
  }

  async deliver(record: OutboxRecord<OutboundItem>): Promise<string[]> {
    const rest = this.rest();
    if (rest === undefined) throw new RetryableDeliveryError("the Discord channel is not running");
    if (!isConversationId(record.to)) {
      throw new PermanentDeliveryError(`"${record.to}" is not a Discord channel id`);
    }
    const item = record.item;
    const pieces = splitText(item.text, TEXT_LIMIT);
    try {
      while (item.done < pieces.length) {
        const content = pieces[item.done]!;
        const pending = item.done === 0 ? this.takeInteraction(record.to) : undefined;
        let id: string | undefined;
        if (pending !== undefined && pending.expiresAt > Date.now()) {
          id = await this.editInteraction(rest, pending, content);
        }
        if (id === undefined) {
          const posted = (await rest.post(Routes.channelMessages(record.to), {
            body: { content, allowed_mentions: NO_PINGS },
          })) as { id?: string };
          id = String(posted.id ?? "");
        }
        item.ids.push(id);
        item.done += 1;
      }
      while (item.done - pieces.length < item.attachments.length) {
        const attachment = item.attachments[item.done - pieces.length]!;
        const file = this.fileOf(attachment);
        const posted = (await rest.post(Routes.channelMessages(record.to), {
          body: {
            content: (attachment.caption ?? "").slice(0, TEXT_LIMIT),
            allowed_mentions: NO_PINGS,
            attachments: [{ id: 0, filename: file.name }],
          },
          files: [{ name: file.name, data: file.bytes }],
        })) as { id?: string };
        item.ids.push(String(posted.id ?? ""));
        item.done += 1;
      }
    } catch (error) {
      throw classify(error);
    }
    return item.ids;
  }

  /** Edits a slash command's deferred reply; undefined when that fails (the text is posted instead). */
  private async editInteraction(
    rest: REST,
    pending: PendingInteraction,
    content: string,
  ): Promise<string | undefined> {
    try {
      const edited = (await rest.patch(
        Routes.webhookMessage(pending.applicationId, pending.token, "@original"),
        { body: { content, allowed_mentions: NO_PINGS }, auth: false },
      )) as { id?: string };
      return String(edited.id ?? "");
    } catch {
      return undefined;
    }
  }

  private fileOf(attachment: Attachment): { bytes: Buffer; name: string } {
    // Links never get here (the channel posts them as text): fetching a URL a model named would
    // let it make this process request anything, the daemon's own ports included.
    if (attachment.path === undefined) throw new PermanentDeliveryError("only local files are uploaded");
    const real = this.roots.check(attachment.path);
    return { bytes: readFileSync(real), name: attachment.file_name ?? basename(real) };
  }
}
