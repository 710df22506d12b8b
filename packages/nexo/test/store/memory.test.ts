import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import fc from "fast-check";
import type { AgentMemory, MemoryEntry as EngineMemoryEntry } from "../../src/engine/types.js";
import {
  conceptTags,
  isStoreError,
  MAX_RECALL_LIMIT,
  normalizeConceptTag,
  Store,
  stem,
} from "../../src/store/index.js";
import { recallExpression } from "../../src/store/memory.js";

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), "nexo-store-memory-"));
});
after(() => rmSync(root, { recursive: true, force: true }));

describe("concept tags", () => {
  it("stems the forms that matter for recall onto one tag", () => {
    const groups = [
      ["answer", "answers", "answered", "answering"],
      ["prefer", "prefers", "preference", "preferred"],
      ["concise", "concisely"],
      ["reply", "replies", "replied"],
      ["run", "running"],
      ["ship", "shipped", "shipping"],
    ];
    for (const group of groups) assert.deepEqual(new Set(group.map(stem)).size, 1, group.join("/"));
    for (const word of ["ring", "thing", "string", "class", "bus", "news"])
      assert.ok(stem(word).length >= 3, word);
  });

  it("ranks keywords by frequency then first appearance, without stop words, numbers or placeholders", () => {
    assert.deepEqual(
      conceptTags(
        "The user prefers concise answers; concise answers save the user's time in 2024. [REDACTED:email]",
      ),
      ["user", "concise", "answer", "prefer", "save", "time"],
    );
    assert.deepEqual(conceptTags("El cliente prefiere respuestas cortas y el envío por correo"), [
      "cliente",
      "prefiere",
      "respuesta",
      "corta",
      "envio",
      "correo",
    ]);
    assert.deepEqual(conceptTags("the and of to"), []);
    assert.equal(conceptTags("one two three four five six seven eight nine ten eleven").length, 8);
    assert.equal(normalizeConceptTag("  User Preferences "), "user_prefer");
    assert.equal(normalizeConceptTag("!!"), undefined);
  });

  it("property: deterministic, bounded, lowercase tokens", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const tags = conceptTags(text);
        assert.deepEqual(conceptTags(text), tags);
        assert.ok(tags.length <= 8);
        for (const tag of tags) assert.match(tag, /^[\p{Ll}\p{Lo}\p{N}\p{Lm}]+$/u);
      }),
      { numRuns: 500 },
    );
  });
});

describe("memory", () => {
  it("implements the engine's AgentMemory", async () => {
    const store = Store.inMemory();
    const memory: AgentMemory = store.memory;
    const stored: EngineMemoryEntry = await memory.store("ventas_v1", "user prefers concise answers", [
      "preference",
    ]);
    assert.equal(stored.agentId, "ventas_v1");
    assert.deepEqual(stored.tags, ["preference"]);
    assert.deepEqual(stored.conceptTags, ["user", "prefer", "concise", "answer"]);
    assert.match(stored.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    const recalled = await memory.recall("ventas_v1", "user prefers concise answers", 5);
    assert.deepEqual(recalled, [{ ...stored, memoryType: null }]);
    await assert.rejects(memory.recall("ventas_v1", "x", 0), (e) => isStoreError(e, "invalid_argument"));
    await assert.rejects(memory.store("", "x"), (e) => isStoreError(e, "invalid_argument"));
    store.close();
  });

  it("recalls by words and by shared concept tags, best match first", () => {
    const store = Store.inMemory();
    const m = store.memory;
    const concise = m.remember({ agentId: "kate", content: "Prefers concise answers without small talk" });
    const tea = m.remember({ agentId: "kate", content: "Drinks green tea in the morning", tags: ["habits"] });
    const deploy = m.remember({ agentId: "kate", content: "Deployments happen on Fridays after review" });
    m.remember({ agentId: "other", content: "Prefers long answers" });

    const ids = (query: string, limit?: number) =>
      m.recallRanked("kate", query, limit === undefined ? {} : { limit }).map((h) => h.entry.id);
    // "preferred" and "answer" never appear literally; the stems `prefer` and `answer` do as concepts.
    assert.deepEqual(ids("what answer length is preferred?"), [concise.id]);
    assert.deepEqual(ids("deployment schedule"), [deploy.id]);
    assert.deepEqual(ids("habits"), [tea.id], "explicit tags are searchable");
    assert.deepEqual(
      ids("tea OR answers").sort(),
      [concise.id, tea.id].sort(),
      "OR is a word, any word may match",
    );
    assert.deepEqual(ids("the"), [tea.id], "a query of stop words still searches them");
    assert.deepEqual(ids("!!! ***"), []);
    assert.deepEqual(ids("quantum chromodynamics"), []);
    // A literal match outranks a concept-only match.
    const literal = m.remember({ agentId: "kate", content: "Reviews answers for tone" });
    const ranked = ids("answers");
    assert.deepEqual(ranked.slice(0, 2).sort(), [concise.id, literal.id].sort());
    store.close();
  });

  it("leaves out words too common to tell memories apart, unless nothing else is left", () => {
    const store = Store.inMemory();
    const filler = Array.from({ length: 600 }, (_, i) => ({
      agentId: "kate",
      content: `the user mentioned topic number ${i} during a call`,
    }));
    store.memory.rememberMany(filler);
    const birthday = store.memory.remember({ agentId: "kate", content: "The user's birthday is on May 3rd" });
    // "user" is in every memory: it is dropped, so "birthday" alone decides.
    assert.deepEqual(
      store.memory.recallRanked("kate", "user birthday", { limit: 1000 }).map((h) => h.entry.id),
      [birthday.id],
    );
    // Only common words: the rarest of them is still searched, so recall is never empty for that.
    assert.equal(store.memory.recallRanked("kate", "user mentioned").length, 10);
    store.close();
  });

  it("builds the recall expression from words and concepts, minus what is common", () => {
    assert.equal(
      recallExpression("what answer length is preferred?"),
      '{content tags} : ("answer" OR "length" OR "preferred?") OR concept_tags : ("answer" OR "length" OR "prefer")',
    );
    const common = (term: string) => ({ answer: 900, length: 800 })[term];
    assert.equal(
      recallExpression("what answer length is preferred?", common),
      '{content tags} : ("preferred?") OR concept_tags : ("prefer")',
    );
    assert.equal(recallExpression("answer length", common), '{content tags} : ("length")');
    assert.equal(recallExpression('"the" * ***'), '{content tags} : ("the")');
    assert.equal(recallExpression("*** !!!"), undefined);
  });

  it("honours given concept tags, normalized like derived ones", () => {
    const store = Store.inMemory();
    const entry = store.memory.remember({
      agentId: "kate",
      content: "Blue kettle on the second shelf",
      conceptTags: ["Kitchen Items", "kitchen items", "Location"],
      memoryType: "fact",
    });
    assert.deepEqual(entry.conceptTags, ["kitchen_item", "location"]);
    assert.equal(entry.memoryType, "fact");
    assert.deepEqual(
      store.memory.recallRanked("kate", "where are kitchen things?").map((h) => h.entry.id),
      [entry.id],
    );
    store.close();
  });

  it("applies the limit: default 10, capped at 1000, typed error for nonsense", () => {
    const store = Store.inMemory();
    store.memory.rememberMany(
      Array.from({ length: 1050 }, (_, i) => ({
        agentId: "kate",
        content: `fact number ${i} about widgets`,
      })),
    );
    assert.equal(store.memory.recallRanked("kate", "widgets").length, 10);
    assert.equal(store.memory.recallRanked("kate", "widgets", { limit: 3 }).length, 3);
    assert.equal(store.memory.recallRanked("kate", "widgets", { limit: 100_000 }).length, MAX_RECALL_LIMIT);
    for (const limit of [0, -5, 2.5]) {
      assert.throws(
        () => store.memory.recallRanked("kate", "widgets", { limit }),
        (e) => isStoreError(e, "invalid_argument"),
      );
    }
    assert.equal(store.memory.count("kate"), 1050);
    store.close();
  });

  it("lists, gets and forgets an agent's memories, keeping the index in step", () => {
    const store = Store.inMemory();
    const a = store.memory.remember({ agentId: "kate", content: "first umbrella" });
    const b = store.memory.remember({ agentId: "kate", content: "second umbrella" });
    assert.deepEqual(
      store.memory.list("kate").map((e) => e.id),
      [b.id, a.id],
    );
    assert.deepEqual(store.memory.get(a.id), a);
    assert.equal(store.memory.forget("other-agent", a.id), false, "an agent cannot forget another's memory");
    assert.equal(store.memory.forget("kate", a.id), true);
    assert.equal(store.memory.get(a.id), undefined);
    assert.deepEqual(
      store.memory.recallRanked("kate", "umbrella").map((h) => h.entry.id),
      [b.id],
    );
    store.close();
  });

  it("treats FTS5 syntax in a recall query as text", () => {
    const store = Store.inMemory();
    store.memory.remember({ agentId: "kate", content: "alpha" });
    for (const query of [
      '"',
      "*",
      "NEAR(",
      "content:alpha",
      "{tags}: x",
      "concept_tags:alpha",
      "\u0000",
      ")(",
    ]) {
      assert.doesNotThrow(() => store.memory.recallRanked("kate", query), query);
    }
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (query) => {
        store.memory.recallRanked("kate", query);
      }),
      { numRuns: 1000 },
    );
    store.close();
  });

  it("redacts content, tags and derived concepts before they reach the file", () => {
    const path = join(root, "memory.db");
    const store = Store.open(path);
    const entry = store.memory.remember({
      agentId: "kate",
      content: "Her email is quinn.private@example.net and card 5500 0000 0000 0004",
      tags: ["contact quinn.private@example.net"],
    });
    assert.equal(entry.content, "Her email is [REDACTED:email] and card [REDACTED:card]");
    assert.deepEqual(entry.tags, ["contact [REDACTED:email]"]);
    assert.ok(!entry.conceptTags.some((t) => /quinn|private|example|5500/.test(t)), entry.conceptTags.join());
    assert.deepEqual(store.memory.recallRanked("kate", "quinn"), []);
    store.close();

    const db = new Database(path, { readonly: true });
    const row = db.prepare("SELECT content || tags || concept_tags AS all_text FROM memories").get() as {
      all_text: string;
    };
    db.close();
    assert.ok(!row.all_text.includes("quinn") && !row.all_text.includes("5500"));
    for (const file of [path, `${path}-wal`].filter(existsSync)) {
      const bytes = readFileSync(file).toString("latin1");
      assert.ok(!bytes.includes("quinn.private") && !bytes.includes("5500 0000"), file);
    }
  });
});
