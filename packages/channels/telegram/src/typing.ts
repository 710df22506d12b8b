/**
 * The "typing…" indicator while the agent works on a chat's message. Telegram shows a chat action
 * for about five seconds, so it is sent again every four until the reply goes out to that chat
 * (or two minutes pass: a turn that never answers must not type forever). Failures are ignored:
 * the indicator is a courtesy.
 */
import type { Api } from "grammy";

const REPEAT_MS = 4_000;
const GIVE_UP_MS = 120_000;

export class TypingIndicator {
  private readonly chats = new Map<string, { timer: NodeJS.Timeout; until: number }>();

  constructor(private readonly api: () => Api | undefined) {}

  start(chatId: string): void {
    this.stop(chatId);
    const send = () =>
      void this.api()
        ?.sendChatAction(chatId, "typing")
        .catch(() => undefined);
    send();
    const until = Date.now() + GIVE_UP_MS;
    const timer = setInterval(() => {
      if (Date.now() > until) this.stop(chatId);
      else send();
    }, REPEAT_MS);
    timer.unref();
    this.chats.set(chatId, { timer, until });
  }

  stop(chatId: string): void {
    const entry = this.chats.get(chatId);
    if (entry === undefined) return;
    clearInterval(entry.timer);
    this.chats.delete(chatId);
  }

  stopAll(): void {
    for (const chatId of [...this.chats.keys()]) this.stop(chatId);
  }
}
