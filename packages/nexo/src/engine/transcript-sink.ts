/**
 * A session's transcript in the store: every message with the turn that wrote it, and the user
 * message that started a turn with where it came from (channel, sender, the channel's message id).
 * Every door's sessions write through this one sink. A turn hands over its messages in groups
 * (`appendMany`), each written in one transaction.
 */
import type { NewTranscriptEntry, Store } from "../store/index.js";
import type { MessageOrigin } from "./events.js";
import type { PendingMessage, TranscriptSink } from "./session-types.js";
import type { ChatMessage } from "./types.js";

export function storeTranscriptSink(
  transcripts: Pick<Store["transcripts"], "append" | "appendMany">,
): TranscriptSink {
  return {
    append: (sessionId, message, meta) => {
      transcripts.append(sessionId, entryOf(message, meta));
    },
    appendMany: (sessionId, messages: readonly PendingMessage[]) => {
      transcripts.appendMany(
        sessionId,
        messages.map(({ message, meta }) => entryOf(message, meta)),
      );
    },
  };
}

function entryOf(
  message: ChatMessage,
  { turnId, origin }: { turnId: string; origin?: MessageOrigin },
): NewTranscriptEntry {
  const entry: NewTranscriptEntry = { role: message.role, content: message.content, turnId };
  if (origin !== undefined) {
    entry.sourcePlugin = origin.channel ?? null;
    entry.senderId = origin.senderId ?? null;
    entry.messageId = origin.messageId ?? null;
  }
  return entry;
}
