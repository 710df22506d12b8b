/**
 * Long-term memory per agent: short facts an agent keeps across sessions, found again by FTS5
 * recall with concept-tag expansion. `recall` is what the plugin contract's `memory.recall` (§5.2)
 * serves; `MemoryRepository` also satisfies the engine's `AgentMemory` interface.
 *
 * Recall matches a memory when any of the query's words appears in its content or tags, or when
 * one of the query's (up to 3) concept tags is among the memory's concept tags; bm25 ranks memories
 * that match more, rarer words first. Concept tags are what let "what answer length does she
 * prefer?" find "prefers concise answers".
 */
import { v7 as uuidv7 } from "uuid";
import { conceptTags, isStopWord, MAX_QUERY_CONCEPTS, normalizeConceptTag, words } from "./concepts.js";
import type { Connection } from "./db.js";
import { StoreError } from "./errors.js";
import { anyOf, parseQuery, quoteTerm, type SearchTerm, scopeToken } from "./fts-query.js";
import { redact } from "./redact.js";
import { optionalString, requireId, resolveLimit, timestamp } from "./validate.js";

/** The engine's `MemoryEntry` plus the spec's `memory_type`. */
export interface MemoryEntry {
  id: string;
  agentId: string;
  content: string;
  tags: string[];
  conceptTags: string[];
  /** A kind chosen by whoever stored it (e.g. "preference", "fact"); null when none was given. */
  memoryType: string | null;
  createdAt: string;
}

export interface NewMemory {
  agentId: string;
  content: string;
  tags?: readonly string[];
  /** Derived from the content when absent (see concepts.ts). */
  conceptTags?: readonly string[];
  memoryType?: string | null;
  createdAt?: Date | string;
}

export interface RecallOptions {
  /** Default 10, capped at 1000 (plugin contract §5.2). */
  limit?: number;
}

export interface RecallHit {
  entry: MemoryEntry;
  /** bm25 score: lower is a better match. */
  score: number;
}

export const DEFAULT_RECALL_LIMIT = 10;
export const MAX_RECALL_LIMIT = 1000;

/**
 * bm25 column weights: content, tags, concept_tags. A word the storer chose as a tag says more than
 * the same word in passing; a shared concept is the weakest evidence, so it ranks below any literal
 * match of equal rarity.
 */
const WEIGHTS = "1.0, 2.0, 0.5, 0.0";

/** See `#commonTerms`. */
const COMMON_SHARE = 0.05;
const COMMON_FLOOR = 500;

interface MemoryRow {
  id: string;
  agent_id: string;
  content: string;
  tags: string;
  concept_tags: string;
  memory_type: string | null;
  created_at: string;
}

const toEntry = (row: MemoryRow): MemoryEntry => ({
  id: row.id,
  agentId: row.agent_id,
  content: row.content,
  tags: JSON.parse(row.tags) as string[],
  conceptTags: JSON.parse(row.concept_tags) as string[],
  memoryType: row.memory_type,
  createdAt: row.created_at,
});

const COLUMNS = "m.id, m.agent_id, m.content, m.tags, m.concept_tags, m.memory_type, m.created_at";

export class MemoryRepository {
  readonly #db: Connection;
  readonly #now: () => Date;

  constructor(db: Connection, now: () => Date) {
    this.#db = db;
    this.#now = now;
  }

  // --- the engine's AgentMemory -----------------------------------------------------------------

  async store(agentId: string, content: string, tags?: string[]): Promise<MemoryEntry> {
    return this.remember({ agentId, content, ...(tags === undefined ? {} : { tags }) });
  }

  async recall(agentId: string, query: string, limit?: number): Promise<MemoryEntry[]> {
    return this.recallRanked(agentId, query, limit === undefined ? {} : { limit }).map((hit) => hit.entry);
  }

  // --- the richer, synchronous API --------------------------------------------------------------

  /** Stores a memory (redacted) and returns it as stored. */
  remember(input: NewMemory): MemoryEntry {
    const agentId = requireId("agentId", input.agentId);
    if (typeof input.content !== "string" || input.content.trim() === "") {
      throw new StoreError("invalid_argument", "content must be a non-empty string");
    }
    const content = redact(input.content).text;
    const tags = normalizeTags(input.tags ?? []);
    // Derived from the redacted text: a secret must not survive as a tag.
    const concepts =
      input.conceptTags === undefined ? conceptTags(content) : normalizeConcepts(input.conceptTags);
    const row: MemoryRow = {
      id: uuidv7(),
      agent_id: agentId,
      content,
      tags: JSON.stringify(tags),
      concept_tags: JSON.stringify(concepts),
      memory_type: optionalString("memoryType", input.memoryType),
      created_at: timestamp("createdAt", input.createdAt, this.#now),
    };
    this.#db
      .prepare(
        `INSERT INTO memories (id, agent_id, content, tags, concept_tags, memory_type, created_at)
         VALUES (@id, @agent_id, @content, @tags, @concept_tags, @memory_type, @created_at)`,
      )
      .run(row);
    return toEntry(row);
  }

  /** Stores many memories in one transaction (imports, benchmarks). */
  rememberMany(inputs: readonly NewMemory[]): MemoryEntry[] {
    return this.#db.transaction(() => inputs.map((input) => this.remember(input))).immediate();
  }

  /** Recall with scores, best first. A query with nothing searchable in it recalls nothing. */
  recallRanked(agentId: string, query: string, options: RecallOptions = {}): RecallHit[] {
    requireId("agentId", agentId);
    if (typeof query !== "string") throw new StoreError("invalid_argument", "query must be a string");
    const limit = resolveLimit(options.limit, DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT);
    const expression = recallExpression(query, this.#commonTerms());
    if (expression === undefined) return [];
    // Only rowids and scores go through the sort; rows are read for the few that are returned.
    const ranked = this.#db
      .prepare(
        `SELECT rowid AS pk, bm25(memory_fts, ${WEIGHTS}) AS score FROM memory_fts
         WHERE memory_fts MATCH @match
         ORDER BY score, rowid DESC LIMIT @limit`,
      )
      .all({ match: `scope : "${scopeToken("a", agentId)}" AND (${expression})`, limit }) as Array<{
      pk: number;
      score: number;
    }>;
    const row = this.#db.prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.pk = ?`);
    return ranked.map(({ pk, score }) => ({ entry: toEntry(row.get(pk) as MemoryRow), score }));
  }

  /**
   * A test for "this term is in so many memories that matching it says little": more than
   * COMMON_SHARE of them, and at least COMMON_FLOOR. Such terms cost the most (bm25 scores every
   * memory that matches) and rank the least, so recall leaves them out.
   */
  #commonTerms(): (term: string) => number | undefined {
    // MAX(pk) stands in for the count: it never undercounts, so deletions only make the test milder.
    const total =
      (this.#db.prepare("SELECT COALESCE(MAX(pk), 0) FROM memories").pluck().get() as number) || 0;
    const threshold = Math.max(COMMON_FLOOR, total * COMMON_SHARE);
    const lookup = this.#db.prepare("SELECT doc FROM memory_terms WHERE term = ?").pluck();
    return (term) => {
      if (total < COMMON_FLOOR) return undefined;
      const docs = lookup.get(term) as number | undefined;
      return docs !== undefined && docs > threshold ? docs : undefined;
    };
  }

  get(id: string): MemoryEntry | undefined {
    const row = this.#db
      .prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.id = ?`)
      .get(requireId("id", id)) as MemoryRow | undefined;
    return row === undefined ? undefined : toEntry(row);
  }

  /** An agent's memories, newest first. */
  list(agentId: string, options: RecallOptions = {}): MemoryEntry[] {
    const limit = resolveLimit(options.limit, DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT);
    const rows = this.#db
      .prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.agent_id = ? ORDER BY m.pk DESC LIMIT ?`)
      .all(requireId("agentId", agentId), limit) as MemoryRow[];
    return rows.map(toEntry);
  }

  count(agentId: string): number {
    const row = this.#db
      .prepare("SELECT COUNT(*) AS n FROM memories WHERE agent_id = ?")
      .get(requireId("agentId", agentId)) as { n: number };
    return row.n;
  }

  /** Every memory of the agent, oldest first, without a limit (snapshots). */
  all(agentId: string): MemoryEntry[] {
    const rows = this.#db
      .prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.agent_id = ? ORDER BY m.pk`)
      .all(requireId("agentId", agentId)) as MemoryRow[];
    return rows.map(toEntry);
  }

  /**
   * Replaces every memory of the agent with `entries` (ids and times kept, content redacted again),
   * in one transaction: a failure leaves the agent's memories as they were. Returns how many are
   * stored.
   */
  replaceAll(agentId: string, entries: readonly MemoryEntry[]): number {
    requireId("agentId", agentId);
    const insert = this.#db.prepare(
      `INSERT INTO memories (id, agent_id, content, tags, concept_tags, memory_type, created_at)
       VALUES (@id, @agent_id, @content, @tags, @concept_tags, @memory_type, @created_at)`,
    );
    return this.#db
      .transaction(() => {
        this.#db.prepare("DELETE FROM memories WHERE agent_id = ?").run(agentId);
        for (const entry of entries) {
          const content = redact(entry.content).text;
          insert.run({
            id: requireId("id", entry.id),
            agent_id: agentId,
            content,
            tags: JSON.stringify(normalizeTags(entry.tags)),
            concept_tags: JSON.stringify(normalizeConcepts(entry.conceptTags)),
            memory_type: optionalString("memoryType", entry.memoryType),
            created_at: timestamp("createdAt", entry.createdAt, this.#now),
          });
        }
        return entries.length;
      })
      .immediate();
  }

  /** Deletes one of the agent's memories; returns whether it existed. */
  forget(agentId: string, id: string): boolean {
    const result = this.#db
      .prepare("DELETE FROM memories WHERE agent_id = ? AND id = ?")
      .run(requireId("agentId", agentId), requireId("id", id));
    return result.changes > 0;
  }
}

/**
 * `{content tags} : (w1 OR w2 …) OR concept_tags : (c1 OR c2 OR c3)`. Left out of it: unquoted stop
 * words, and words (or concepts) that `common` reports as being in too many memories — unless that
 * leaves nothing, in which case the rarest of them stays. Concept tags come from our own extractor,
 * so they are plain words; they are quoted all the same.
 */
export function recallExpression(
  query: string,
  common: (term: string) => number | undefined = () => undefined,
): string | undefined {
  const terms = parseQuery(query);
  const literal = terms.filter((term) => term.quoted || term.prefix || !isStopWord(term.text.toLowerCase()));
  const concepts = conceptTags(query, MAX_QUERY_CONCEPTS).map(
    (tag): SearchTerm => ({ text: tag, prefix: false, quoted: true }),
  );
  const frequency = (term: SearchTerm): number | undefined => {
    const token = singleToken(term);
    return token === undefined ? undefined : common(token);
  };
  const candidates = [
    ...(literal.length > 0 ? literal : terms).map((term) => ({
      term,
      concept: false,
      docs: frequency(term),
    })),
    ...concepts.map((term) => ({ term, concept: true, docs: frequency(term) })),
  ];
  let kept = candidates.filter((c) => c.docs === undefined);
  if (kept.length === 0 && candidates.length > 0) {
    kept = [candidates.reduce((rarest, c) => ((c.docs ?? 0) < (rarest.docs ?? 0) ? c : rarest))];
  }
  const words = kept.filter((c) => !c.concept).map((c) => c.term);
  const tags = kept.filter((c) => c.concept).map((c) => c.term);
  const parts: string[] = [];
  if (words.length > 0) parts.push(`{content tags} : (${anyOf(words)})`);
  if (tags.length > 0) parts.push(`concept_tags : (${tags.map(quoteTerm).join(" OR ")})`);
  return parts.length === 0 ? undefined : parts.join(" OR ");
}

/** The index term a plain one-word search term looks up (the tokenizer folds case and accents). */
function singleToken(term: SearchTerm): string | undefined {
  if (term.prefix) return undefined;
  const tokens = words(term.text);
  return tokens.length === 1 ? tokens[0] : undefined;
}

function normalizeTags(tags: readonly string[]): string[] {
  if (!Array.isArray(tags)) throw new StoreError("invalid_argument", "tags must be an array of strings");
  const out: string[] = [];
  for (const tag of tags) {
    if (typeof tag !== "string")
      throw new StoreError("invalid_argument", `tags must be strings, got ${String(tag)}`);
    const clean = redact(tag.trim()).text;
    if (clean !== "" && !out.includes(clean)) out.push(clean);
  }
  return out;
}

function normalizeConcepts(tags: readonly string[]): string[] {
  if (!Array.isArray(tags))
    throw new StoreError("invalid_argument", "conceptTags must be an array of strings");
  const out: string[] = [];
  for (const tag of tags) {
    if (typeof tag !== "string") {
      throw new StoreError("invalid_argument", `conceptTags must be strings, got ${String(tag)}`);
    }
    const clean = normalizeConceptTag(redact(tag).text);
    if (clean !== undefined && !out.includes(clean)) out.push(clean);
  }
  return out;
}
