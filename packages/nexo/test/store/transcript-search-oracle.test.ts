/**
 * TranscriptRepository.search against an oracle on a generated corpus: for every query kind and
 * filter, the same hits in the same order with the same entries, scores, snippets and channels.
 *
 * The oracle is the plainest way to answer: every match of the expression with its bm25 score (one
 * statement, no rowid bound), the rank window, the entry filters (role, time, channel), the
 * ordering and the page applied in JavaScript, and the page's snippets from a second walk over
 * every match that SQLite itself narrows to the page's rows (`+rowid` keeps the constraint away
 * from FTS5). `search` gets there by other roads (a window in SQL, snippets looked up per row or in
 * a pass over a rowid range, rowids bound as integers); any difference in what it returns fails.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
// The store benchmark's seeded generator (mulberry32): the same corpus on every run.
import { prng } from "../../../../bench/store.bench.js";
import { allOf, parseQuery, scopeToken } from "../../src/store/fts-query.js";
import {
  RANK_WINDOW,
  Store,
  type TranscriptEntry,
  type TranscriptHit,
  type TranscriptSearchOptions,
} from "../../src/store/index.js";

const SESSIONS = 48;
const PER_SESSION = 250;
/** In most messages, so that a search for it alone matches more than RANK_WINDOW entries. */
const COMMON = "ping";
const CHANNELS = ["telegram", "telegram.bot1", "telegram.bot2", "slack", null] as const;
const START_MS = Date.parse("2026-03-01T00:00:00.000Z");
const STEP_MS = 60_000;

let root: string;
let store: Store;
let raw: Database.Database;
let entries: Map<number, TranscriptEntry>;
let channels: Map<string, string | null>;

before(() => {
  root = mkdtempSync(join(tmpdir(), "nexo-store-search-oracle-"));
  const path = join(root, "oracle.db");
  store = Store.open(path);
  const random = prng(20261203);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  // A small Zipf-ish vocabulary: a few words everywhere, many rare ones, some sharing prefixes.
  const vocabulary = Array.from({ length: 400 }, (_, i) => `${["dep", "bil", "mig", "tra"][i % 4]}w${i}`);
  const word = () => vocabulary[Math.max(0, Math.floor(1 / (random() + 0.0025)) - 1)]!;
  const FILLER = ["the", "a", "of", "and", "to", "is"];
  assert.ok(SESSIONS * PER_SESSION * 0.85 > RANK_WINDOW, "the common word must overflow the rank window");
  let at = START_MS;
  store.transaction(() => {
    for (let s = 0; s < SESSIONS; s++) {
      const id = `s${s}`;
      store.sessions.create({
        id,
        agentId: `agent-${s % 4}`,
        tenantId: s % 3 === 0 ? null : `tenant-${s % 2}`,
        channel: CHANNELS[s % CHANNELS.length]!,
      });
      store.transcripts.appendMany(
        id,
        Array.from({ length: PER_SESSION }, (_, i) => {
          at += STEP_MS;
          const role = pick(["user", "assistant", "system"] as const);
          // Some lines repeat word for word, so equal scores must be ordered the same way (newest first).
          const text =
            i % 25 === 0
              ? `ping the ${vocabulary[3]} ping`
              : Array.from({ length: 3 + Math.floor(random() * 14) }, () =>
                  random() < 0.35 ? pick(FILLER) : word(),
                )
                  .concat(random() < 0.9 ? [COMMON] : [])
                  .join(" ");
          return { role, content: text, createdAt: new Date(at) };
        }),
      );
    }
  });
  entries = new Map();
  channels = new Map();
  for (let s = 0; s < SESSIONS; s++) {
    for (const entry of store.transcripts.entries(`s${s}`)) entries.set(entry.id, entry);
    channels.set(`s${s}`, store.sessions.get(`s${s}`)?.channel ?? null);
  }
  raw = new Database(path, { readonly: true });
});

after(() => {
  raw?.close();
  store?.close();
  rmSync(root, { recursive: true, force: true });
});

interface OracleRow {
  id: number;
  score: number;
}
/** Every match and its score, by expression (the other options filter them). */
const everyMatch = new Map<string, OracleRow[]>();

/** What search should return, computed the plain way. */
function oracle(query: string, options: TranscriptSearchOptions = {}): TranscriptHit[] {
  const terms = parseQuery(query);
  if (terms.length === 0) return [];
  const clauses = [`text : (${allOf(terms)})`];
  if (options.sessionId !== undefined) clauses.push(`scope : "${scopeToken("s", options.sessionId)}"`);
  if (options.agentId !== undefined) clauses.push(`scope : "${scopeToken("a", options.agentId)}"`);
  if (options.tenantId !== undefined) clauses.push(`scope : "${scopeToken("t", options.tenantId)}"`);
  const { open, close } = options.highlight ?? { open: "«", close: "»" };
  const match = clauses.join(" AND ");
  let all = everyMatch.get(match);
  if (all === undefined) {
    all = raw
      .prepare(
        "SELECT rowid AS id, bm25(transcript_fts, 1.0, 0.0) AS score FROM transcript_fts WHERE transcript_fts MATCH ?",
      )
      .all(match) as OracleRow[];
    everyMatch.set(match, all);
  }
  const passes = ({ id }: { id: number }) => {
    const entry = entries.get(id)!;
    const at = Date.parse(entry.createdAt);
    const channel = channels.get(entry.sessionId) ?? null;
    return (
      (options.role === undefined || entry.role === options.role) &&
      (options.sinceMs === undefined || at >= options.sinceMs) &&
      (options.untilMs === undefined || at < options.untilMs) &&
      (options.channel === undefined ||
        (channel !== null && (channel === options.channel || channel.startsWith(`${options.channel}.`))))
    );
  };
  const offset = options.offset ?? 0;
  const page = all
    .filter(passes)
    .sort((a, b) => b.id - a.id)
    .slice(0, RANK_WINDOW)
    .sort((a, b) => a.score - b.score || b.id - a.id)
    .slice(offset, offset + (options.limit ?? 20));
  // Snippets from a walk over every match, the wanted rows picked out by SQLite (no rowid bound).
  const snippets = new Map(
    (
      raw
        .prepare(
          `SELECT rowid AS id, snippet(transcript_fts, 0, ?, ?, '…', 16) AS snippet FROM transcript_fts
           WHERE transcript_fts MATCH ? AND +rowid IN (SELECT value FROM json_each(?))`,
        )
        .all(open, close, match, JSON.stringify(page.map((hit) => hit.id))) as Array<{
        id: number;
        snippet: string;
      }>
    ).map((r) => [r.id, r.snippet]),
  );
  return page.map(({ id, score }) => {
    const entry = entries.get(id)!;
    return { entry, snippet: snippets.get(id)!, score, channel: channels.get(entry.sessionId) ?? null };
  });
}

describe("transcripts: search matches the oracle", () => {
  const queries = [
    // one word: the common one (more matches than the rank window), mid, rare, absent
    COMMON,
    "depw0",
    "bilw1",
    "migw2",
    "traw3",
    "traw7",
    "migw250",
    "nothingsuchword",
    // every word must appear
    `${COMMON} the`,
    "the a",
    `depw0 ${COMMON}`,
    // phrases
    `"the depw0"`,
    `"ping the"`,
    `"of the"`,
    // prefixes, alone and with other words
    "dep*",
    "bilw1*",
    "mig* ping",
    `"the dep"*`,
    // a match in several places, and tokens that fold
    "PING Ping",
  ];
  const optionSets: TranscriptSearchOptions[] = [
    {},
    { limit: 1 },
    { limit: 400 },
    { offset: 19, limit: 7 },
    { offset: 9_990, limit: 50 },
    { agentId: "agent-1" },
    { tenantId: "tenant-0" },
    { sessionId: "s5" },
    { sessionId: "s5", agentId: "agent-1" },
    { role: "assistant" },
    { role: "system", limit: 200 },
    { channel: "telegram" },
    { channel: "telegram.bot1", limit: 100 },
    { channel: "slack", role: "user", offset: 3 },
    { sinceMs: START_MS + 3000 * STEP_MS, untilMs: START_MS + 9000 * STEP_MS },
    { sinceMs: START_MS + 11_000 * STEP_MS, agentId: "agent-2", limit: 300 },
    { highlight: { open: "<b>", close: "</b>" } },
  ];

  it("returns the oracle's hits for every query kind and filter", () => {
    let compared = 0;
    let windowed = 0;
    for (const query of queries) {
      for (const options of optionSets) {
        const expected = oracle(query, options);
        const got = store.transcripts.search(query, options);
        assert.deepStrictEqual(got, expected, `${JSON.stringify(query)} ${JSON.stringify(options)}`);
        compared += got.length;
        if (got.length > 0 && query === COMMON && options.role === undefined && options.channel === undefined)
          windowed++;
      }
    }
    assert.ok(compared > 10_000, `only ${compared} hits compared`);
    assert.ok(windowed > 0);
  });

  it("the common word overflows the rank window, so the window decides which entries are ranked", () => {
    const matches = raw
      .prepare("SELECT count(*) FROM transcript_fts WHERE transcript_fts MATCH ?")
      .pluck()
      .get(`text : ("${COMMON}")`) as number;
    assert.ok(matches > RANK_WINDOW, `${matches} matches`);
    // Ranked over every match instead, the best thousand would differ: the window is really exercised.
    const everyMatch = raw
      .prepare(
        `SELECT rowid FROM transcript_fts WHERE transcript_fts MATCH ?
         ORDER BY bm25(transcript_fts, 1.0, 0.0), rowid DESC LIMIT 1000`,
      )
      .pluck()
      .all(`text : ("${COMMON}")`) as number[];
    assert.notDeepEqual(
      store.transcripts.search(COMMON, { limit: 1000 }).map((hit) => hit.entry.id),
      everyMatch,
    );
  });
});
