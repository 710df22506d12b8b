/**
 * Storage, in one run over one database file:
 *   fts    — TranscriptRepository.search (FTS5, bm25, snippets, row decoding: the real code path)
 *   like   — the naive alternative: `text LIKE '%word%'` for every word, newest first, same filters
 *   recall — MemoryRepository.recallRanked with concept-tag expansion over 100,000 memories
 * Goal (issue 4): fts p95 <= 50 ms at 1,000,000 messages.
 *
 * Text comes from a seeded generator (Zipf-distributed vocabulary with English function words, some
 * numbers, addresses and tool calls), so every run searches the same corpus. Queries span rare, mid
 * and common words, two-word AND, phrases, prefixes and an agent filter.
 *   BENCH_STORE_MESSAGES=100000 BENCH_STORE_MEMORIES=20000 for a quick run.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { type ContentBlock, type NewTranscriptEntry, Store } from "../packages/nexo/src/store/index.js";
import { type BenchContext, median, percentile, round } from "./lib.js";

const MESSAGES = Number(process.env.BENCH_STORE_MESSAGES ?? 1_000_000);
const MEMORIES = Number(process.env.BENCH_STORE_MEMORIES ?? 100_000);
const MESSAGES_PER_SESSION = 100;
const AGENTS = 20;
const TENANTS = 3;
const ROWS_PER_TRANSACTION = 20_000;
const GOAL_P95_MS = 50;

// --- a deterministic corpus ----------------------------------------------------------------------

/**
 * mulberry32: small, fast, and the same sequence for the same seed on every machine. Also the
 * search oracle test's corpus generator (packages/nexo/test/store/transcript-search-oracle.test.ts).
 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FUNCTION_WORDS =
  "the a to of and in is it that for on with as this be at by not are from or have an they you we can will was but".split(
    " ",
  );
const ONSETS = "b c d f g h j k l m n p r s t v w z br ch cl cr dr fl gr pl pr sh st tr th".split(" ");
const NUCLEI = "a e i o u ai ea io ou".split(" ");
const CODAS = " n r s t l m nd st rk ng".split(" ");

class Corpus {
  readonly vocabulary: string[];
  readonly #cumulative: Float64Array;
  readonly #random: () => number;

  constructor(seed: number, size = 20_000) {
    this.#random = prng(seed);
    const words = new Set<string>();
    while (words.size < size) {
      const syllables = 1 + Math.floor(this.#random() * 3);
      let word = "";
      for (let s = 0; s < syllables; s++) word += this.pick(ONSETS) + this.pick(NUCLEI) + this.pick(CODAS);
      if (word.length >= 3) words.add(word);
    }
    this.vocabulary = [...words];
    // Zipf with s = 1: the word of rank r is drawn with weight 1/r, as in natural language.
    this.#cumulative = new Float64Array(size);
    let total = 0;
    for (let r = 0; r < size; r++) {
      total += 1 / (r + 1);
      this.#cumulative[r] = total;
    }
    for (let r = 0; r < size; r++) this.#cumulative[r]! /= total;
  }

  random(): number {
    return this.#random();
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#random() * items.length)]!;
  }

  word(): string {
    const u = this.#random();
    let lo = 0;
    let hi = this.#cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#cumulative[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return this.vocabulary[lo]!;
  }

  sentence(min: number, max: number): string {
    const n = min + Math.floor(this.#random() * (max - min + 1));
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(this.#random() < 0.4 ? this.pick(FUNCTION_WORDS) : this.word());
    const extra = this.#random();
    // A little of what chat really holds, so redaction does real work during the build.
    if (extra < 0.03) words.push(`${this.word()}.${this.word()}@example.org`);
    else if (extra < 0.06)
      words.push(
        `+54 9 11 ${1000 + Math.floor(this.#random() * 9000)}-${1000 + Math.floor(this.#random() * 9000)}`,
      );
    else if (extra < 0.15) words.push(String(Math.floor(this.#random() * 100_000)));
    else if (extra < 0.2)
      words.push(`2026-0${1 + Math.floor(this.#random() * 9)}-1${Math.floor(this.#random() * 9)}`);
    const text = words.join(" ");
    return text.charAt(0).toUpperCase() + text.slice(1) + (this.#random() < 0.2 ? "?" : ".");
  }

  message(index: number): NewTranscriptEntry {
    const role = index % 2 === 0 ? "user" : "assistant";
    const sentences = 1 + Math.floor(this.#random() * 3);
    const text = Array.from({ length: sentences }, () => this.sentence(4, 14)).join(" ");
    if (role === "assistant" && this.#random() < 0.05) {
      const content: ContentBlock[] = [
        { type: "text", text },
        { type: "tool_use", id: `call_${index}`, name: "web_search", input: { query: this.sentence(2, 5) } },
      ];
      return { role, content };
    }
    return { role, content: text };
  }
}

// --- building ----------------------------------------------------------------------------------

function buildTranscripts(store: Store, corpus: Corpus, messages: number, ctx: BenchContext): void {
  const sessions = Math.ceil(messages / MESSAGES_PER_SESSION);
  for (let s = 0; s < sessions; s++) {
    store.sessions.create({
      id: `s${s}`,
      agentId: `agent-${s % AGENTS}`,
      tenantId: `tenant-${s % TENANTS}`,
      channel: "bench",
    });
  }
  const start = performance.now();
  let written = 0;
  let session = 0;
  while (written < messages) {
    store.transaction(() => {
      const end = Math.min(messages, written + ROWS_PER_TRANSACTION);
      while (written < end) {
        const count = Math.min(MESSAGES_PER_SESSION, end - written);
        store.transcripts.appendMany(
          `s${session++}`,
          Array.from({ length: count }, (_, i) => corpus.message(i)),
        );
        written += count;
      }
    });
    if (written % 200_000 === 0) ctx.log(`  built ${written} messages`);
  }
  const seconds = (performance.now() - start) / 1000;
  ctx.log(`  ${messages} messages in ${round(seconds, 1)} s (${Math.round(messages / seconds)} messages/s)`);
}

function buildMemories(store: Store, corpus: Corpus, count: number): void {
  for (let done = 0; done < count; ) {
    const batch = Math.min(10_000, count - done);
    store.memory.rememberMany(
      Array.from({ length: batch }, () => ({
        agentId: "bench-agent",
        content: corpus.sentence(6, 20),
        tags: corpus.random() < 0.3 ? [corpus.word()] : [],
      })),
    );
    done += batch;
  }
}

// --- queries -----------------------------------------------------------------------------------

interface Query {
  kind: string;
  text: string;
  /** The words a LIKE scan must find, each as `%word%`. */
  like: string[];
  agentId?: string;
}

function transcriptQueries(corpus: Corpus): Query[] {
  const v = corpus.vocabulary;
  const band = (from: number, to: number, n: number) =>
    Array.from({ length: n }, (_, i) => v[from + Math.floor(((to - from) * (i + 0.5)) / n)]!);
  const single = (kind: string, words: string[]): Query[] => words.map((w) => ({ kind, text: w, like: [w] }));
  const rare = band(3000, 15_000, 8);
  const mid = band(200, 2000, 8);
  const common = band(10, 50, 4);
  return [
    ...single("rare", rare),
    ...single("mid", mid),
    ...single("common", common),
    ...mid.map((w, i) => ({
      kind: "and",
      text: `${w} ${common[i % common.length]}`,
      like: [w, common[i % common.length]!],
    })),
    ...mid.slice(0, 4).map((w) => ({ kind: "phrase", text: `"the ${w}"`, like: [`the ${w}`] })),
    ...mid.slice(4).map((w) => ({ kind: "prefix", text: `${w.slice(0, 4)}*`, like: [w.slice(0, 4)] })),
    ...mid.slice(0, 4).map((w, i) => ({ kind: "agent", text: w, like: [w], agentId: `agent-${i}` })),
  ];
}

function timed(fn: () => unknown): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

function summarize(samples: number[][]): {
  p50: number;
  p95: number;
  perRepP50: number[];
  perRepP95: number[];
} {
  const perRepP50 = samples.map((rep) => percentile(rep, 50));
  const perRepP95 = samples.map((rep) => percentile(rep, 95));
  return { p50: median(perRepP50), p95: median(perRepP95), perRepP50, perRepP95 };
}

export default async function storeBench(ctx: BenchContext): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "nexo-bench-store-"));
  const path = join(dir, "bench.db");
  const store = Store.open(path);
  try {
    const corpus = new Corpus(20260401);
    ctx.log(`building ${MESSAGES} transcript messages and ${MEMORIES} memories in ${path}`);
    buildTranscripts(store, corpus, MESSAGES, ctx);
    buildMemories(store, corpus, MEMORIES);
    store.checkpoint();
    ctx.log(`  database file: ${round(statSync(path).size / 1024 / 1024, 1)} MiB`);

    // The baseline reads the same file through its own connection, as an app without FTS would.
    const raw = new Database(path, { readonly: true });
    const like = (q: Query) => {
      const where = q.like.map(() => "text LIKE ?");
      if (q.agentId) where.push("agent_id = ?");
      return raw
        .prepare(
          `SELECT id, session_id, seq, text FROM transcript_entries WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT 20`,
        )
        .all(...q.like.map((w) => `%${w}%`), ...(q.agentId ? [q.agentId] : []));
    };
    const fts = (q: Query) => store.transcripts.search(q.text, q.agentId ? { agentId: q.agentId } : {});
    const queries = transcriptQueries(corpus);
    for (const q of queries) fts(q); // warm the page cache and statement cache alike

    const ftsSamples: number[][] = [];
    const likeSamples: number[][] = [];
    const hits: Record<string, number> = {};
    const likeReps = Math.max(1, Math.floor(ctx.reps / 3));
    for (let rep = 0; rep < ctx.reps; rep++) {
      ftsSamples.push(
        queries.map((q) =>
          timed(() => {
            hits[q.kind] = (hits[q.kind] ?? 0) + fts(q).length;
          }),
        ),
      );
      if (rep < likeReps) likeSamples.push(queries.map((q) => timed(() => like(q))));
    }
    raw.close();
    const f = summarize(ftsSamples);
    const l = summarize(likeSamples);
    const ratios = {
      "like_p50/fts_p50": round(l.p50 / f.p50, 1),
      "like_p95/fts_p95": round(l.p95 / f.p95, 1),
    };
    const slowest = queries
      .map((q, i) => ({ q, ms: median(ftsSamples.map((rep) => rep[i]!)) }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 3)
      .map(({ q, ms }) => `${q.kind} ${JSON.stringify(q.text)} ${round(ms, 1)} ms`);
    ctx.log(
      `transcripts (${MESSAGES}): fts p50 ${round(f.p50)} ms p95 ${round(f.p95)} ms | like p50 ${round(l.p50)} ms p95 ${round(l.p95)} ms | like/fts p50 ${ratios["like_p50/fts_p50"]}x p95 ${ratios["like_p95/fts_p95"]}x`,
    );
    ctx.log(`  slowest fts queries: ${slowest.join("; ")}`);
    ctx.log(`  hits per kind over all reps: ${JSON.stringify(hits)}`);

    for (const [stat, value, samples] of [
      ["p50", l.p50, l.perRepP50],
      ["p95", l.p95, l.perRepP95],
    ] as const) {
      ctx.record({
        benchmark: "store",
        name: `transcript search like ${MESSAGES} ${stat}`,
        metric: `${stat} latency over the query set`,
        value: round(value),
        unit: "ms",
        samples: samples.map((v) => round(v)),
      });
    }
    ctx.record({
      benchmark: "store",
      name: `transcript search fts ${MESSAGES} p50`,
      metric: "p50 latency over the query set",
      value: round(f.p50),
      unit: "ms",
      samples: f.perRepP50.map((v) => round(v)),
      ratios: { "like_p50/fts_p50": ratios["like_p50/fts_p50"] },
    });
    ctx.record({
      benchmark: "store",
      name: `transcript search fts ${MESSAGES} p95`,
      metric: "p95 latency over the query set",
      value: round(f.p95),
      unit: "ms",
      samples: f.perRepP95.map((v) => round(v)),
      ratios: { "like_p95/fts_p95": ratios["like_p95/fts_p95"] },
      goal: { ratio: "fts p95 ms", max: GOAL_P95_MS, met: MESSAGES >= 1_000_000 && f.p95 <= GOAL_P95_MS },
    });

    // Memory recall: natural-language questions of 3–8 words against one agent's memories.
    const recallQueries = Array.from({ length: 40 }, () => corpus.sentence(3, 8));
    for (const q of recallQueries) store.memory.recallRanked("bench-agent", q);
    const recallSamples: number[][] = [];
    let recalled = 0;
    for (let rep = 0; rep < ctx.reps; rep++) {
      recallSamples.push(
        recallQueries.map((q) =>
          timed(() => {
            recalled += store.memory.recallRanked("bench-agent", q).length;
          }),
        ),
      );
    }
    const r = summarize(recallSamples);
    ctx.log(
      `memory recall (${MEMORIES}): p50 ${round(r.p50)} ms p95 ${round(r.p95)} ms (${round(recalled / (ctx.reps * recallQueries.length), 1)} hits per query)`,
    );
    ctx.record({
      benchmark: "store",
      name: `memory recall ${MEMORIES} p50`,
      metric: "p50 latency over the query set",
      value: round(r.p50),
      unit: "ms",
      samples: r.perRepP50.map((v) => round(v)),
    });
    ctx.record({
      benchmark: "store",
      name: `memory recall ${MEMORIES} p95`,
      metric: "p95 latency over the query set",
      value: round(r.p95),
      unit: "ms",
      samples: r.perRepP95.map((v) => round(v)),
    });
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
