/**
 * `scripted`: the offline default model. Deterministic, no network, and honest about being a
 * demo: it follows the simple commands of scripted-rules.ts (read a file, run a command, remember
 * a fact, call a plugin tool it is told about) so the whole agent loop can be shown and tested
 * without an API key, and says how to configure a real provider for anything else.
 *
 * It streams like a real provider: text in several deltas, complete tool calls, usage estimated
 * at four characters a token, then a stop reason.
 */
import { createHash } from "node:crypto";
import type { ChatRequest, LlmProvider, ProviderEvent } from "../types.js";
import { abortReason } from "./errors.js";
import { planReply } from "./scripted-rules.js";

export interface ScriptedProviderOptions {
  id?: string;
  /** Reported to the engine for compaction decisions (default 32,768). */
  contextWindow?: number;
  /** Pause between deltas, for demos that should look like streaming (default 0). */
  chunkDelayMs?: number;
}

export const SCRIPTED_CONTEXT_WINDOW = 32_768;

/** Words per text delta. */
const WORDS_PER_DELTA = 4;

const estimateTokens = (chars: number): number => Math.ceil(chars / 4);

/** Splits text into deltas of a few words, keeping every character (whitespace included). */
export function chunkText(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? (text ? [text] : []);
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += WORDS_PER_DELTA)
    chunks.push(words.slice(i, i + WORDS_PER_DELTA).join(""));
  return chunks;
}

export class ScriptedProvider implements LlmProvider {
  readonly id: string;

  constructor(private readonly options: ScriptedProviderOptions = {}) {
    this.id = options.id ?? "scripted";
  }

  contextWindow(): number {
    return this.options.contextWindow ?? SCRIPTED_CONTEXT_WINDOW;
  }

  async *stream(request: ChatRequest): AsyncGenerator<ProviderEvent, void, undefined> {
    const plan = planReply(request);
    // Ids must be unique in a session yet reproducible: derive them from the conversation so far.
    const digest = createHash("sha256").update(JSON.stringify(request.messages)).digest("hex").slice(0, 12);
    const events: ProviderEvent[] = [];
    for (const text of chunkText(plan.thinking ?? "")) events.push({ type: "thinking_delta", text });
    for (const text of chunkText(plan.text)) events.push({ type: "text_delta", text });
    for (const [i, call] of plan.calls.entries()) {
      events.push({
        type: "tool_call",
        id: `call_scripted_${digest}_${i}`,
        name: call.name,
        input: call.input,
      });
    }
    const inputChars =
      (request.system?.length ?? 0) +
      JSON.stringify(request.messages).length +
      JSON.stringify(request.tools ?? []).length;
    const outputChars = (plan.thinking?.length ?? 0) + plan.text.length + JSON.stringify(plan.calls).length;
    events.push({
      type: "usage",
      usage: {
        inputTokens: estimateTokens(inputChars),
        outputTokens: estimateTokens(outputChars),
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      },
    });
    events.push({ type: "stop", reason: plan.calls.length > 0 ? "tool_use" : "end_turn" });

    const pause = this.options.chunkDelayMs ?? 0;
    const pauses = pause > 0 ? new Pauses(request.signal) : undefined;
    try {
      for (const event of events) {
        if (request.signal?.aborted) throw abortReason(request.signal);
        if (pauses !== undefined && (event.type === "text_delta" || event.type === "thinking_delta")) {
          await pauses.sleep(pause);
          if (request.signal?.aborted) throw abortReason(request.signal);
        }
        yield event;
      }
    } finally {
      pauses?.dispose();
    }
  }
}

/**
 * The pauses between a reply's deltas, cut short when the request's signal aborts. One abort
 * listener serves the whole reply: a listener added and removed for every pause (what a signal
 * passed to timers/promises' setTimeout costs) was 12% of the daemon's busy time in the
 * 1,000-session benchmark, whose scripted replies pause before every delta.
 */
class Pauses {
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly onAbort = () => {
    clearTimeout(this.timer);
    this.wake?.();
  };

  constructor(private readonly signal: AbortSignal | undefined) {
    signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Resolves after `ms`, or at once when the signal aborts (the caller checks which). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.wake = undefined;
    this.signal?.removeEventListener("abort", this.onAbort);
  }
}
