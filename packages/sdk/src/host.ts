/**
 * The plugin's calls into its host (plugin contract §5.2 `memory.recall`, §5.3 `llm.complete`):
 * option and result types, tolerant parsers for the host's replies, and the streaming handle.
 *
 * The parsers fill defaults instead of throwing, as the upstream SDK does: a host that leaves out a
 * field the plugin rarely reads should not break the call.
 */
import { PluginError } from "./errors.js";

/** How long a call waits for the host's reply unless `timeoutMs` says otherwise. */
export const DEFAULT_RPC_TIMEOUT_MS = 30_000;

/** One long-term memory entry, in the wire's snake_case. */
export interface MemoryEntry {
  id: string;
  agent_id: string;
  content: string;
  tags: string[];
  concept_tags: string[];
  created_at: string;
  memory_type: string | null;
}

export interface Message {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
}

export interface TokenCount {
  prompt_tokens: number;
  completion_tokens: number;
}

/** `content` is null for a streamed completion: the text came as chunks. */
export interface LlmCompleteResult {
  content: string | null;
  /** `stop`, `length`, `tool_use` or `other:<reason>`. */
  finish_reason: string;
  usage: TokenCount;
}

export interface LlmCompleteOptions {
  provider: string;
  model: string;
  messages: Message[];
  /** Default 4096. */
  maxTokens?: number;
  /** Default 0.7. */
  temperature?: number;
  systemPrompt?: string;
  /**
   * Reply timeout in ms (default 30 000). Streams have none by default, because their length is
   * the model's; given explicitly, it bounds the whole stream.
   */
  timeoutMs?: number;
}

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === "string" ? value : fallback;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

/** Reads one `memory.recall` entry; missing or mistyped fields get empty defaults. */
export function parseMemoryEntry(value: unknown): MemoryEntry {
  const o = asObject(value);
  return {
    id: stringOr(o.id, ""),
    agent_id: stringOr(o.agent_id, ""),
    content: stringOr(o.content, ""),
    tags: stringList(o.tags),
    concept_tags: stringList(o.concept_tags),
    created_at: stringOr(o.created_at, ""),
    memory_type: typeof o.memory_type === "string" ? o.memory_type : null,
  };
}

/** Reads an `llm.complete` result (or a stream's final reply, which has no content). */
export function parseLlmCompleteResult(value: unknown): LlmCompleteResult {
  const o = asObject(value);
  const usage = asObject(o.usage);
  return {
    content: typeof o.content === "string" ? o.content : null,
    finish_reason: stringOr(o.finish_reason, ""),
    usage: { prompt_tokens: count(usage.prompt_tokens), completion_tokens: count(usage.completion_tokens) },
  };
}

/**
 * Chunks of a stream not yet read by the consumer are buffered up to this many UTF-16 code units
 * (32 MiB of memory at most). A consumer that never reads while the host keeps sending would
 * otherwise grow the buffer without limit; past the bound the stream fails instead.
 */
export const LLM_STREAM_BUFFER_LIMIT = 16 * 1024 * 1024;

/** A single-consumer queue of chunks, read with `for await`. */
export class ChunkQueue implements AsyncIterableIterator<string> {
  private readonly buffered: string[] = [];
  private bufferedUnits = 0;
  private readonly waiting: Array<(result: IteratorResult<string>) => void> = [];
  private ended = false;

  /** Queues a chunk. Returns false, and ends the queue, when the buffer bound is exceeded. */
  push(chunk: string): boolean {
    if (this.ended) return true;
    const reader = this.waiting.shift();
    if (reader) {
      reader({ value: chunk, done: false });
      return true;
    }
    if (this.bufferedUnits + chunk.length > LLM_STREAM_BUFFER_LIMIT) {
      this.end();
      return false;
    }
    this.buffered.push(chunk);
    this.bufferedUnits += chunk.length;
    return true;
  }

  /** No more chunks; buffered ones are still delivered. */
  end(): void {
    this.ended = true;
    for (const reader of this.waiting.splice(0)) reader({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<string>> {
    const chunk = this.buffered.shift();
    if (chunk !== undefined) {
      this.bufferedUnits -= chunk.length;
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The consumer stopped early (`break`): later chunks are discarded. */
  return(): Promise<IteratorResult<string>> {
    this.buffered.length = 0;
    this.bufferedUnits = 0;
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<string> {
    return this;
  }
}

/** The consumer fell behind a stream by more than LLM_STREAM_BUFFER_LIMIT. */
export class LlmStreamOverflowError extends PluginError {
  constructor() {
    super(`llm.complete stream: more than ${LLM_STREAM_BUFFER_LIMIT} characters buffered and not read`);
    this.name = "LlmStreamOverflowError";
  }
}

/**
 * A streaming `llm.complete`: iterate it for the text chunks, await `result` for the final reply
 * (`content` is null). When the host fails the call, iteration ends and `result` rejects.
 */
export class LlmStream implements AsyncIterable<string> {
  constructor(
    private readonly chunks: AsyncIterator<string>,
    readonly result: Promise<LlmCompleteResult>,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<string> {
    return this.chunks;
  }
}
