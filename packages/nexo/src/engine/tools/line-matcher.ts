/**
 * One Grep search's matching, done in a worker thread (match-workers.ts) under a hard time limit.
 *
 * Files are sent in batches and answered in the order they were sent, so matches come back in
 * walk order; a few batches are in flight at once, so the main thread reads the next files while
 * the worker matches the previous ones. Memory is bounded: at most `MAX_IN_FLIGHT` batches of at
 * most `MAX_BATCH_BYTES` (or one file, if larger) are outstanding — `add` waits for the oldest
 * otherwise. When the time limit passes or the call is cancelled, the worker is terminated on the
 * spot (inside a runaway regex too) and every outstanding batch fails with the reason.
 */
import {
  acquireMatchWorker,
  type MatchResult,
  type MatchWorker,
  releaseMatchWorker,
} from "./match-workers.js";

const MAX_BATCH_FILES = 32;
const MAX_BATCH_BYTES = 512 * 1024;
const MAX_IN_FLIGHT = 4;

export class RegexTimeoutError extends Error {
  override readonly name = "RegexTimeoutError";
  constructor(readonly timeoutMs: number) {
    super(
      `The search hit its ${timeoutMs} ms time limit (a pattern that backtracks catastrophically does this); ` +
        "simplify the pattern or narrow the path",
    );
  }
}

export interface LineSearchOptions {
  /** For the whole search, from `start` on. */
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** Report matching lines (true), or only that a file matched (false: stops at its first match). */
  readonly lines: boolean;
  readonly maxLineChars: number;
  readonly maxLinesPerFile: number;
}

/** The matching lines of one file (1-based numbers, text cut to `maxLineChars`); empty in "files" mode. */
export type MatchedLines = { number: number; text: string }[];

export class LineSearch<Tag> {
  private batch: { tags: Tag[]; files: Uint8Array[]; bytes: number } = { tags: [], files: [], bytes: 0 };
  private readonly inFlight: Promise<void>[] = [];
  private delivered: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort: () => void;
  private closed = false;

  private constructor(
    regex: RegExp,
    private readonly worker: MatchWorker,
    private readonly options: LineSearchOptions,
    private readonly onMatch: (tag: Tag, lines: MatchedLines) => void,
  ) {
    worker.setPattern(regex);
    this.timer = setTimeout(() => worker.stop(new RegexTimeoutError(options.timeoutMs)), options.timeoutMs);
    this.onAbort = () => worker.stop(new Error("Search cancelled"));
    if (options.signal.aborted) this.onAbort();
    else options.signal.addEventListener("abort", this.onAbort, { once: true });
  }

  /**
   * Starts a search for `regex` (compiled without the g or y flag). `onMatch` is called for each
   * file that matched, in the order the files were added. Call `close()` when done, always.
   */
  static async start<Tag>(
    regex: RegExp,
    options: LineSearchOptions,
    onMatch: (tag: Tag, lines: MatchedLines) => void,
  ): Promise<LineSearch<Tag>> {
    if (regex.global || regex.sticky) throw new Error("LineSearch needs a regex without the g or y flag");
    const worker = await acquireMatchWorker(options.signal);
    return new LineSearch(regex, worker, options, onMatch);
  }

  /** Queues one file's bytes; waits when too much is in flight. Fails once the search has failed. */
  async add(tag: Tag, bytes: Uint8Array): Promise<void> {
    if (this.worker.failure !== undefined) throw this.worker.failure;
    this.batch.tags.push(tag);
    this.batch.files.push(bytes);
    this.batch.bytes += bytes.length;
    if (this.batch.files.length >= MAX_BATCH_FILES || this.batch.bytes >= MAX_BATCH_BYTES) await this.flush();
  }

  /** Matches what is still queued and waits until every match has been reported. */
  async finish(): Promise<void> {
    await this.flush();
    await this.delivered;
  }

  /** Gives the worker back (a terminated one is replaced by the pool). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.options.signal.removeEventListener("abort", this.onAbort);
    releaseMatchWorker(this.worker);
  }

  private async flush(): Promise<void> {
    const { tags, files } = this.batch;
    if (files.length === 0) return;
    this.batch = { tags: [], files: [], bytes: 0 };
    const answer = this.worker.match({
      files,
      lines: this.options.lines,
      maxLineChars: this.options.maxLineChars,
      maxLinesPerFile: this.options.maxLinesPerFile,
    });
    const delivered = this.delivered.then(() => answer).then((results) => this.report(tags, results));
    // Observed here so that a failure nobody awaits (the caller stopped early) is not unhandled.
    delivered.catch(() => undefined);
    this.delivered = delivered;
    this.inFlight.push(delivered);
    if (this.inFlight.length > MAX_IN_FLIGHT) await this.inFlight.shift();
  }

  private report(tags: Tag[], results: MatchResult[]): void {
    results.forEach((result, index) => {
      if (result === false) return;
      const lines: MatchedLines = [];
      if (Array.isArray(result)) {
        if (result.length === 0) return;
        for (let i = 0; i < result.length; i += 2) {
          lines.push({ number: result[i] as number, text: result[i + 1] as string });
        }
      }
      this.onMatch(tags[index]!, lines);
    });
  }
}
