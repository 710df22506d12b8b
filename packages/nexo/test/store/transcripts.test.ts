import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import fc from "fast-check";
import type { ChatMessage as EngineChatMessage } from "../../src/engine/types.js";
import { scopeToken } from "../../src/store/fts-query.js";
import { isStoreError, MAX_SEARCH_LIMIT, RANK_WINDOW, Store } from "../../src/store/index.js";

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), "nexo-store-transcripts-"));
});
after(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
const freshPath = () => join(root, `t-${++counter}.db`);

describe("transcripts: truncate (a thread's rollback)", () => {
  it("drops the entries after a seq, from the history and the search index, and numbering goes on without a gap", () => {
    const store = Store.inMemory();
    store.sessions.create({ id: "a", agentId: "kate" });
    store.sessions.create({ id: "b", agentId: "kate" });
    store.transcripts.appendMany("a", [
      { role: "user", content: "keep this walrus" },
      { role: "assistant", content: "kept" },
      { role: "user", content: "drop this narwhal" },
      { role: "assistant", content: "dropped" },
    ]);
    store.transcripts.append("b", { role: "user", content: "another narwhal" });
    assert.equal(store.transcripts.truncate("a", 2), 2);
    assert.deepEqual(
      store.transcripts.entries("a").map((e) => [e.seq, e.text]),
      [
        [1, "keep this walrus"],
        [2, "kept"],
      ],
    );
    assert.deepEqual(
      store.transcripts.search("narwhal").map((hit) => hit.entry.sessionId),
      ["b"],
    );
    assert.equal(store.transcripts.append("a", { role: "user", content: "next" }).seq, 3);
    assert.equal(store.transcripts.truncate("a", 10), 0);
    assert.throws(
      () => store.transcripts.truncate("a", -1),
      (e) => isStoreError(e) && e.code === "invalid_argument",
    );
    store.close();
  });
});

describe("transcripts: appending and reading", () => {
  it("numbers entries 1, 2, 3 … per session and returns them as stored", () => {
    const store = Store.inMemory();
    store.sessions.create({ id: "a", agentId: "kate", tenantId: "acme" });
    store.sessions.create({ id: "b", agentId: "kate" });
    const first = store.transcripts.append("a", {
      role: "user",
      content: "hello",
      sourcePlugin: "telegram",
      senderId: "42",
      messageId: "m-1",
      turnId: "turn-1",
      createdAt: "2026-02-03T04:05:06Z",
    });
    assert.deepEqual(first, {
      id: first.id,
      sessionId: "a",
      seq: 1,
      role: "user",
      content: [{ type: "text", text: "hello" }],
      text: "hello",
      agentId: "kate",
      tenantId: "acme",
      sourcePlugin: "telegram",
      senderId: "42",
      messageId: "m-1",
      turnId: "turn-1",
      createdAt: "2026-02-03T04:05:06.000Z",
    });
    store.transcripts.append("b", { role: "user", content: "other session" });
    const more = store.transcripts.appendMany("a", [
      { role: "assistant", content: "hi" },
      { role: "user", content: "again" },
    ]);
    assert.deepEqual(
      more.map((e) => e.seq),
      [2, 3],
    );
    assert.deepEqual(store.transcripts.entries("a"), [first, ...more]);
    assert.equal(store.transcripts.count("a"), 3);
    assert.equal(store.transcripts.count("b"), 1);
    assert.equal(store.transcripts.count("none"), 0);
    store.close();
  });

  it("pages through history with afterSeq, limit and last", () => {
    const store = Store.inMemory();
    store.sessions.create({ id: "s", agentId: "kate" });
    store.transcripts.appendMany(
      "s",
      Array.from({ length: 10 }, (_, i) => ({ role: "user" as const, content: `message ${i + 1}` })),
    );
    const seqs = (entries: Array<{ seq: number }>) => entries.map((e) => e.seq);
    assert.deepEqual(seqs(store.transcripts.entries("s", { afterSeq: 7 })), [8, 9, 10]);
    assert.deepEqual(seqs(store.transcripts.entries("s", { limit: 2 })), [1, 2]);
    assert.deepEqual(seqs(store.transcripts.entries("s", { afterSeq: 3, limit: 2 })), [4, 5]);
    assert.deepEqual(seqs(store.transcripts.entries("s", { last: 3 })), [8, 9, 10]);
    assert.throws(
      () => store.transcripts.entries("s", { afterSeq: -1 }),
      (e) => isStoreError(e, "invalid_argument"),
    );
    assert.throws(
      () => store.transcripts.entries("s", { last: 0 }),
      (e) => isStoreError(e, "invalid_argument"),
    );
    store.close();
  });

  it("rebuilds the engine's ChatMessage[] with tool calls and results, leaving system notes out", () => {
    const store = Store.inMemory();
    store.sessions.create({ id: "s", agentId: "kate" });
    const conversation: EngineChatMessage[] = [
      { role: "user", content: [{ type: "text", text: "what is in README.md?" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", text: "I should read it", signature: "c2lnbmF0dXJl" },
          { type: "text", text: "Let me look." },
          { type: "tool_use", id: "call_1", name: "read_file", input: { path: "README.md", lines: [1, 20] } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", toolUseId: "call_1", content: "# nexo\nan agent daemon", isError: false },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "It describes nexo." }] },
      { role: "user", content: [{ type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" }] },
    ];
    for (const [i, message] of conversation.entries()) {
      store.transcripts.append("s", message);
      if (i === 1) store.transcripts.append("s", { role: "system", content: "compacted earlier turns" });
    }
    const rebuilt: EngineChatMessage[] = store.transcripts.messages("s");
    assert.deepEqual(rebuilt, conversation);
    assert.deepEqual(store.transcripts.messages("s", { last: 2 }), conversation.slice(-2));
    const toolUse = store.transcripts.entries("s")[1]!;
    assert.equal(toolUse.text, "Let me look.\nread_file\nREADME.md\n1\n20", "thinking is not searchable");
    store.close();
  });

  it("writes all of a batch or none of it, and refuses bad input with typed errors", () => {
    const store = Store.inMemory();
    store.sessions.create({ id: "s", agentId: "kate" });
    const invalid: unknown[] = [
      { role: "robot", content: "x" },
      { role: "user", content: [{ type: "text" }] },
      { role: "user", content: [{ type: "video", url: "x" }] },
      { role: "user", content: [{ type: "tool_use", id: "1", name: "x", input: [] }] },
      { role: "user", content: "x", senderId: 42 },
      { role: "user", content: "x", createdAt: "not a date" },
      null,
    ];
    for (const entry of invalid) {
      assert.throws(
        () => store.transcripts.appendMany("s", [{ role: "user", content: "fine" }, entry as never]),
        (e) => isStoreError(e, "invalid_argument"),
        JSON.stringify(entry),
      );
    }
    assert.equal(store.transcripts.count("s"), 0);
    // The refusal names the offending block the way every schema failure reads.
    assert.throws(
      () =>
        store.transcripts.append("s", {
          role: "user",
          content: [{ type: "text", text: "a" }, { type: "text", text: 5 } as never],
        }),
      /^StoreError: content\[1\]\.text: /,
    );
    assert.throws(
      () => store.transcripts.append("", { role: "user", content: "x" }),
      (e) => isStoreError(e, "invalid_argument"),
    );
    assert.throws(
      () => store.transcripts.append("missing", { role: "user", content: "x" }),
      (e) => isStoreError(e, "not_found"),
    );
    store.close();
  });

  it("is append-only: the database itself refuses to rewrite an entry", () => {
    const path = freshPath();
    const store = Store.open(path);
    store.sessions.create({ id: "s", agentId: "kate" });
    store.transcripts.append("s", { role: "user", content: "original" });
    const other = new Database(path);
    assert.throws(() => other.prepare("UPDATE transcript_entries SET text = 'forged'").run(), /append-only/);
    other.close();
    assert.equal(store.transcripts.entries("s")[0]?.text, "original");
    store.close();
  });
});

describe("transcripts: search", () => {
  const seeded = () => {
    const store = Store.inMemory();
    store.sessions.create({ id: "k1", agentId: "kate", tenantId: "acme" });
    store.sessions.create({ id: "k2", agentId: "kate", tenantId: "acme" });
    store.sessions.create({ id: "o1", agentId: "ops", tenantId: "globex" });
    store.transcripts.appendMany("k1", [
      { role: "user", content: "The deployment of the billing service failed again last night" },
      { role: "assistant", content: "Deployment logs show a timeout in the billing migration step" },
      { role: "user", content: "billing billing billing: is billing down?" },
      { role: "user", content: "Let's talk about the canción for the café party" },
    ]);
    store.transcripts.appendMany("k2", [
      { role: "user", content: "Schedule the deploy window for Friday" },
      { role: "user", content: "alpha and beta are both required" },
      { role: "user", content: "alpha only here" },
      { role: "user", content: "beta only here" },
    ]);
    store.transcripts.appendMany("o1", [{ role: "user", content: "ops note: billing cluster rotated" }]);
    return store;
  };
  const where = (hits: Array<{ entry: { sessionId: string; seq: number } }>) =>
    hits.map((h) => `${h.entry.sessionId}:${h.entry.seq}`);

  it("finds every word, ranks with bm25, and highlights a snippet", () => {
    const store = seeded();
    const hits = store.transcripts.search("billing");
    assert.deepEqual(where(hits).sort(), ["k1:1", "k1:2", "k1:3", "o1:1"]);
    assert.equal(where(hits)[0], "k1:3", "the entry saying billing five times ranks first");
    for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1]!.score <= hits[i]!.score);
    assert.match(hits[0]!.snippet, /«billing»/);
    assert.deepEqual(where(store.transcripts.search("billing deployment")).sort(), ["k1:1", "k1:2"]);
    assert.deepEqual(where(store.transcripts.search("deploy*")).sort(), ["k1:1", "k1:2", "k2:1"]);
    for (const hit of store.transcripts.search("deploy* billing"))
      assert.match(hit.snippet, /«[Dd]eploy\w*».*«billing»/);
    assert.deepEqual(where(store.transcripts.search('"billing migration"')), ["k1:2"]);
    assert.deepEqual(where(store.transcripts.search("cancion cafe")), ["k1:4"], "diacritics are folded");
    const custom = store.transcripts.search("timeout", { highlight: { open: "<b>", close: "</b>" } });
    assert.match(custom[0]!.snippet, /<b>timeout<\/b>/);
    assert.deepEqual(store.transcripts.search("nothing-like-this"), []);
    store.close();
  });

  it("isolates results by session, agent and tenant", () => {
    const store = seeded();
    assert.deepEqual(where(store.transcripts.search("billing", { sessionId: "k2" })), []);
    assert.deepEqual(where(store.transcripts.search("billing", { agentId: "ops" })), ["o1:1"]);
    assert.deepEqual(where(store.transcripts.search("billing", { tenantId: "globex" })), ["o1:1"]);
    assert.deepEqual(where(store.transcripts.search("billing", { tenantId: "acme", agentId: "ops" })), []);
    assert.deepEqual(
      where(store.transcripts.search("billing", { sessionId: "k1", agentId: "kate" })).sort(),
      ["k1:1", "k1:2", "k1:3"],
    );
    store.close();
  });

  it("applies the limit: default 20, capped at 1000, typed error for nonsense", () => {
    const store = Store.inMemory();
    store.sessions.create({ id: "s", agentId: "kate" });
    store.transcripts.appendMany(
      "s",
      Array.from({ length: 1100 }, (_, i) => ({ role: "user" as const, content: `needle number ${i}` })),
    );
    assert.equal(store.transcripts.search("needle").length, 20);
    assert.equal(store.transcripts.search("needle", { limit: 5 }).length, 5);
    assert.equal(store.transcripts.search("needle", { limit: 5000 }).length, MAX_SEARCH_LIMIT);
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      assert.throws(
        () => store.transcripts.search("needle", { limit }),
        (e) => isStoreError(e, "invalid_argument"),
      );
    }
    store.close();
  });

  it("ranks the newest RANK_WINDOW matches when a query matches more", () => {
    const store = Store.inMemory();
    store.sessions.create({ id: "s", agentId: "kate" });
    const old = Array.from({ length: 5 }, () => ({ role: "user" as const, content: "needle needle needle" }));
    const recent = Array.from({ length: RANK_WINDOW }, (_, i) => ({
      role: "user" as const,
      content: `needle in a long haystack of words, message ${i}`,
    }));
    store.transcripts.appendMany("s", [...old, ...recent]);
    const hits = store.transcripts.search("needle", { limit: 5 });
    assert.equal(hits.length, 5);
    assert.ok(
      hits.every((h) => h.entry.seq > old.length),
      "the five best-scoring entries are older than the window and are not ranked",
    );
    // Inside the window, bm25 decides: an exact phrase search still finds the old ones.
    assert.equal(store.transcripts.search('"needle needle needle"').length, 5);
    store.close();
  });

  it("treats FTS5 syntax in user input as text: nothing throws and nothing widens", () => {
    const store = seeded();
    const expectations: Array<[string, string[]]> = [
      ['"', []],
      ["*", []],
      ["   ", []],
      ["NEAR(", []],
      ["NEAR(alpha beta)", []],
      ["alpha OR beta", []],
      ["alpha AND", ["k2:2"]],
      ["NOT alpha", []],
      ["alpha NOT beta", []],
      ["text:alpha", []],
      ["{text}: alpha", []],
      ["text : alpha", []],
      ["-alpha", ["k2:2", "k2:3"]],
      ["^alpha", ["k2:2", "k2:3"]],
      ["alpha)", ["k2:2", "k2:3"]],
      ["(alpha", ["k2:2", "k2:3"]],
      ['alpha "beta', ["k2:2"]],
      ['"alpha and beta"', ["k2:2"]],
      ['"alpha beta"', []],
      ["alpha beta", ["k2:2"]],
      ["rowid:1", []],
      ["transcript_fts:alpha", []],
      ["\u0000alpha", ["k2:2", "k2:3"]],
      ['al"pha', []],
      ["a".repeat(10_000), []],
      // The index's filter tokens are not reachable from a query.
      [scopeToken("s", "k2"), []],
      [`scope:${scopeToken("a", "kate")}`, []],
      [Array.from({ length: 500 }, () => "alpha").join(" OR "), []],
    ];
    for (const [query, expected] of expectations) {
      const got = where(store.transcripts.search(query)).sort();
      assert.deepEqual(got, expected, `query ${JSON.stringify(query.slice(0, 40))}`);
    }
    store.close();
  });
  it("property: any input is safe, and every hit contains every word of the query", () => {
    const store = seeded();
    const tokens = (text: string) =>
      (text
        .normalize("NFD")
        .replace(/\p{M}/gu, "")
        .toLowerCase()
        .match(/[\p{L}\p{N}]+/gu) ?? []) as string[];
    const piece = fc.oneof(
      fc.constantFrom('"', "*", "(", ")", ":", "^", "-", "+", "{", "}", ",", "\u0000", " ", " ", " "),
      fc.constantFrom(
        "NEAR",
        "OR",
        "AND",
        "NOT",
        "text",
        "rowid",
        "alpha",
        "beta",
        "billing",
        "deploy",
        "the",
      ),
      fc.string({ unit: "binary", maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }), (pieces) => {
        const query = pieces.join("");
        const hits = store.transcripts.search(query, { limit: 1000 });
        const wanted = tokens(query);
        for (const hit of hits) {
          const have = tokens(hit.entry.text);
          for (const word of wanted) {
            assert.ok(
              have.some((t) => t.startsWith(word)),
              `${JSON.stringify(query)} found ${JSON.stringify(hit.entry.text)} without "${word}"`,
            );
          }
        }
      }),
      { numRuns: 1000 },
    );
    store.close();
  });
});

describe("transcripts: redaction on disk", () => {
  it("no secret reaches the table, the search index or the file", () => {
    const path = freshPath();
    const store = Store.open(path);
    store.sessions.create({ id: "s", agentId: "kate" });
    const secrets = {
      email: "zelda.secret@hyrule-mail.org",
      phone: "+54 9 11 5566-7788",
      card: "4111 1111 1111 1111",
      key: "sk-ant-api03-QWERTYqwerty0123456789zxcvb",
      bearer: "Bearer zz9plurZalphaTOKEN77",
      toolSecret: "0123456789abcdefFEDCBA9876543210",
    };
    const stored = store.transcripts.appendMany("s", [
      { role: "user", content: `mail ${secrets.email} or call ${secrets.phone}` },
      {
        role: "assistant",
        content: [
          { type: "text", text: `charging ${secrets.card}` },
          {
            type: "tool_use",
            id: "call_9",
            name: "http_get",
            input: {
              headers: { authorization: secrets.bearer },
              query: `api_key=${secrets.toolSecret}`,
              key: secrets.key,
            },
          },
        ],
      },
      {
        role: "user",
        content: [{ type: "tool_result", toolUseId: "call_9", content: `echo ${secrets.email}` }],
      },
    ]);
    assert.deepEqual(stored[1]!.content[1], {
      type: "tool_use",
      id: "call_9",
      name: "http_get",
      input: {
        headers: { authorization: "[REDACTED:bearer]" },
        query: "api_key=[REDACTED:api_key]",
        key: "[REDACTED:api_key]",
      },
    });
    assert.deepEqual(store.transcripts.search("hyrule"), []);
    assert.deepEqual(store.transcripts.search("zelda"), []);
    assert.equal(store.transcripts.search("REDACTED email").length, 2);

    // Another connection sees only placeholders.
    const other = new Database(path, { readonly: true });
    const rows = other.prepare("SELECT content || text AS all_text FROM transcript_entries").all() as Array<{
      all_text: string;
    }>;
    other.close();
    const everything = rows.map((r) => r.all_text).join("\n");
    for (const secret of Object.values(secrets)) assert.ok(!everything.includes(secret), secret);
    assert.ok(everything.includes("[REDACTED:phone]") && everything.includes("[REDACTED:card]"));

    // And the raw bytes of the database and its WAL hold none of it either.
    store.close();
    const files = [path, `${path}-wal`].filter(existsSync).map((f) => readFileSync(f).toString("latin1"));
    for (const bytes of files) {
      for (const needle of [
        "zelda",
        "hyrule",
        "5566-7788",
        "1111 1111",
        "QWERTYqwerty",
        "zz9plurZ",
        "FEDCBA98",
      ]) {
        assert.ok(!bytes.includes(needle), `${needle} found in the raw file`);
      }
    }
  });
});

describe("transcripts: concurrent appends", () => {
  const storeModule = fileURLToPath(new URL("../../src/store/index.ts", import.meta.url));
  /** A writer process: opens the file (racing the others through migrations), waits for "go", appends. */
  const WRITER = `
    import { createInterface } from "node:readline";
    const [modulePath, dbPath, name, count] = process.argv.slice(1);
    const { Store, isStoreError } = await import(modulePath);
    const store = Store.open(dbPath, { busyTimeoutMs: 20000 });
    try { store.sessions.create({ id: "shared", agentId: "kate" }); }
    catch (e) { if (!isStoreError(e, "conflict")) throw e; }
    process.stdout.write("ready\\n");
    for await (const _ of createInterface({ input: process.stdin })) break;
    const seqs = [];
    for (let i = 0; i < Number(count); i++) {
      if (i % 10 === 9) {
        for (const e of store.transcripts.appendMany("shared", [1, 2, 3].map((k) => ({ role: "user", content: name + " batch " + i + "." + k })))) seqs.push(e.seq);
      } else {
        seqs.push(store.transcripts.append("shared", { role: "user", content: name + " single " + i }).seq);
      }
    }
    store.close();
    process.stdout.write(JSON.stringify(seqs) + "\\n");
  `;

  it("never duplicates or skips a seq across processes writing one session", {
    timeout: 60_000,
  }, async () => {
    const path = freshPath();
    const writers = ["w1", "w2", "w3"].map((name) => {
      const child = spawn(
        process.execPath,
        [
          "--conditions=@nexo/source",
          "--import",
          "tsx",
          "--input-type=module",
          "-e",
          WRITER,
          storeModule,
          path,
          name,
          "300",
        ],
        { stdio: ["pipe", "pipe", "pipe"] },
      );
      let stderr = "";
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      return { name, child, lines, exited, stderr: () => stderr };
    });
    try {
      for (const w of writers) {
        const ready = await w.lines.next();
        assert.equal(ready.value, "ready", `${w.name} did not start: ${w.stderr()}`);
      }
      // Ending stdin, not just writing to it, lets each writer exit once it is done.
      for (const w of writers) w.child.stdin.end("go\n");
      const results = new Map<string, number[]>();
      for (const w of writers) {
        const line = await w.lines.next();
        assert.equal(await w.exited, 0, `${w.name} failed: ${w.stderr()}`);
        results.set(w.name, JSON.parse(line.value as string) as number[]);
      }

      const perWriter = 270 + 30 * 3;
      const all = [...results.values()].flat().sort((a, b) => a - b);
      assert.equal(all.length, perWriter * writers.length);
      assert.deepEqual(
        all,
        Array.from({ length: all.length }, (_, i) => i + 1),
      );
      for (const [name, seqs] of results) {
        for (let i = 1; i < seqs.length; i++)
          assert.ok(seqs[i]! > seqs[i - 1]!, `${name} saw seqs go backwards`);
      }
      // The writers really ran at the same time: someone's seqs are not one contiguous block.
      const contiguous = (seqs: number[]) => seqs.at(-1)! - seqs[0]! === seqs.length - 1;
      assert.ok(
        [...results.values()].some((seqs) => !contiguous(seqs)),
        "the writers never interleaved",
      );
      const store = Store.open(path);
      const entries = store.transcripts.entries("shared");
      assert.deepEqual(
        entries.map((e) => e.seq),
        all,
      );
      // Each batch got consecutive seqs even while other writers were appending.
      for (const name of results.keys()) {
        const batch = entries.filter((e) => e.text.startsWith(`${name} batch 9.`)).map((e) => e.seq);
        assert.equal(batch.length, 3);
        assert.deepEqual(batch, [batch[0]!, batch[0]! + 1, batch[0]! + 2]);
      }
      store.close();
    } finally {
      for (const w of writers) if (w.child.exitCode === null) w.child.kill();
    }
  });
});
