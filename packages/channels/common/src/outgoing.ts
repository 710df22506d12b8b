/**
 * What an outbound message asks a channel to send, read the same way by every channel: a text
 * (with its `MEDIA:` lines taken out as attachments) or one media reference. Other kinds (`custom`)
 * are refused with the contract's unsupported error, as is a media reference that is neither
 * http(s), file:// nor an absolute path.
 */
import { ChannelUnsupportedError } from "nexo-plugin-sdk";
import type { Attachment } from "./attachment.js";
import { attachmentFromReference, splitReplyMedia } from "./media-directive.js";
import type { OutboundMessage } from "./serve.js";

/** The outbound messages a channel of this repository sends. */
export type SendableMessage = Extract<OutboundMessage, { kind: "text" | "media" }>;

export interface OutgoingContent {
  text: string;
  attachments: Attachment[];
}

/** Refuses a message kind no channel sends; `channel` names the channel ("the Telegram channel"). */
export function assertSendable(msg: OutboundMessage, channel: string): asserts msg is SendableMessage {
  if (msg.kind !== "text" && msg.kind !== "media") {
    throw new ChannelUnsupportedError(`${channel} sends text and media messages`, {
      feature: `${msg.kind} messages`,
    });
  }
}

/**
 * The text and attachments of `msg`. A media message's caption travels on its attachment;
 * `captionAsText` also makes it the message's text (email, whose attachments have no caption).
 */
export function outgoingContent(
  msg: SendableMessage,
  options: { captionAsText?: boolean } = {},
): OutgoingContent {
  if (msg.kind === "text") return splitReplyMedia(msg.body);
  const attachment = attachmentFromReference(msg.url, msg.caption);
  if (attachment === undefined) {
    throw new ChannelUnsupportedError(
      `media url must be http(s), file:// or an absolute path, got "${msg.url}"`,
      { feature: "media reference" },
    );
  }
  return { text: options.captionAsText ? (msg.caption ?? "") : "", attachments: [attachment] };
}
