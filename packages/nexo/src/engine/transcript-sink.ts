/**
 * A session's transcript in the store: every message with the turn that wrote it, and the user
 * message that started a turn with where it came from (channel, sender, the channel's message id).
 * Every door's sessions write through this one sink.
 */
import type { Store } from "../store/index.js";
import type { TranscriptSink } from "./session-types.js";

export function storeTranscriptSink(transcripts: Pick<Store["transcripts"], "append">): TranscriptSink {
  return {
    append: (sessionId, message, { turnId, origin }) => {
      transcripts.append(sessionId, {
        role: message.role,
        content: message.content,
        turnId,
        ...(origin === undefined
          ? {}
          : {
              sourcePlugin: origin.channel ?? null,
              senderId: origin.senderId ?? null,
              messageId: origin.messageId ?? null,
            }),
      });
    },
  };
}
