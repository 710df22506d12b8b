import assert from "node:assert/strict";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import fc from "fast-check";
import { type Document, parseDocument } from "yaml";
import { z } from "zod";
import { ConfigError, editYamlFile, isTempFileName, writeFileAtomic } from "../../src/config/index.js";

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), "nexo-config-write-"));
});
after(() => rmSync(root, { recursive: true, force: true }));

function freshDir(): string {
  return mkdtempSync(join(root, "case-"));
}

describe("writeFileAtomic", () => {
  it("creates a file owner-only by default, or with the given mode", async () => {
    const dir = freshDir();
    await writeFileAtomic(join(dir, "a.yaml"), "a: 1\n");
    assert.equal(readFileSync(join(dir, "a.yaml"), "utf8"), "a: 1\n");
    assert.equal(statSync(join(dir, "a.yaml")).mode & 0o777, 0o600);
    await writeFileAtomic(join(dir, "b.yaml"), new Uint8Array([104, 105]), { mode: 0o644 });
    assert.equal(readFileSync(join(dir, "b.yaml"), "utf8"), "hi");
    assert.equal(statSync(join(dir, "b.yaml")).mode & 0o777, 0o644);
    assert.deepEqual(readdirSync(dir).sort(), ["a.yaml", "b.yaml"]);
  });

  it("keeps an existing file's mode, even bits the umask would strip", async () => {
    const dir = freshDir();
    const path = join(dir, "llm.yaml");
    writeFileSync(path, "old\n");
    chmodSync(path, 0o664);
    await writeFileAtomic(path, "new\n");
    assert.equal(readFileSync(path, "utf8"), "new\n");
    assert.equal(statSync(path).mode & 0o7777, 0o664);
  });

  it("writes through a symlink, leaving the link in place", async () => {
    const dir = freshDir();
    mkdirSync(join(dir, "real"));
    writeFileSync(join(dir, "real", "mcp.yaml"), "old\n");
    symlinkSync(join(dir, "real", "mcp.yaml"), join(dir, "mcp.yaml"));
    await writeFileAtomic(join(dir, "mcp.yaml"), "new\n");
    assert.ok(lstatSync(join(dir, "mcp.yaml")).isSymbolicLink());
    assert.equal(readFileSync(join(dir, "real", "mcp.yaml"), "utf8"), "new\n");
    assert.deepEqual(readdirSync(join(dir, "real")), ["mcp.yaml"]);
  });

  it("removes its temp file and leaves the target alone when the rename fails", async () => {
    const dir = freshDir();
    const target = join(dir, "taken.yaml");
    mkdirSync(target);
    writeFileSync(join(target, "inside"), "keep");
    await assert.rejects(writeFileAtomic(target, "data\n"));
    assert.deepEqual(readdirSync(dir), ["taken.yaml"]);
    assert.deepEqual(readdirSync(target), ["inside"]);
  });

  it("names temp files .<name>.tmp-<pid>-<hex>, which loaders skip", () => {
    assert.ok(isTempFileName(`.agents.yaml.tmp-${process.pid}-0a1b2c3d`));
    assert.ok(!isTempFileName("agents.yaml"));
    assert.ok(!isTempFileName(".agents.yaml"));
  });
});

const commented = `# nexo LLM providers.
# Keys are provider names used by agents.yaml.

providers:
  anthropic:
    api_key: \${ANTHROPIC_API_KEY}   # from the environment
    base_url: "https://api.anthropic.com"
    rate_limit: {requests_per_second: 2.0}

  # OpenAI is optional.
  openai:
    api_key: '\${file:secrets/openai}'
    flags: [a, b]
    mask: 0x1F

retry:
  max_attempts: 5 # enough
  backoff_ms: 1000
`;

const LlmSchema = z.object({
  providers: z.record(z.string(), z.looseObject({ api_key: z.string(), base_url: z.string().optional() })),
  retry: z.object({ max_attempts: z.number().int().min(1), backoff_ms: z.number() }),
});

describe("editYamlFile", () => {
  it("changes only the edited line, keeping comments, blank lines, order and formatting", async () => {
    const path = join(freshDir(), "llm.yaml");
    writeFileSync(path, commented);
    const result = await editYamlFile(path, (doc) => {
      doc.setIn(["retry", "max_attempts"], 7);
    });
    const expected = commented.replace("max_attempts: 5 # enough", "max_attempts: 7 # enough");
    assert.equal(result.changed, true);
    assert.equal(readFileSync(path, "utf8"), expected);
    assert.equal(result.text, expected);
  });

  it("adds and deletes keys in place, leaving every other line byte-identical", async () => {
    const path = join(freshDir(), "llm.yaml");
    writeFileSync(path, commented);
    await editYamlFile(path, (doc) => {
      doc.setIn(["providers", "anthropic", "base_url"], "https://proxy.internal");
      doc.deleteIn(["providers", "openai", "flags"]);
      doc.setIn(["retry", "jitter"], true);
    });
    const expected = commented
      .replace('"https://api.anthropic.com"', '"https://proxy.internal"')
      .replace("    flags: [a, b]\n", "")
      .replace("  backoff_ms: 1000\n", "  backoff_ms: 1000\n  jitter: true\n");
    assert.equal(readFileSync(path, "utf8"), expected);
  });

  it("re-renders only the region an edit touches when the operator spelled it differently", async () => {
    const path = join(freshDir(), "llm.yaml");
    const original = commented.replace("retry:\n", "\n\nretry:\n");
    writeFileSync(path, original);
    // The value is a literal placeholder for the loader, not a JS template.
    const placeholder = "$" + "{OTHER_KEY}";
    await editYamlFile(path, (doc) => doc.setIn(["providers", "anthropic", "api_key"], placeholder));
    const expected = original.replace(
      "api_key: $" + "{ANTHROPIC_API_KEY}   # from the environment",
      `api_key: ${placeholder} # from the environment`,
    );
    assert.equal(readFileSync(path, "utf8"), expected);
  });

  it("always writes text that means exactly what the edited document means", async () => {
    const edits: Array<(doc: Document.Parsed) => void> = [
      (doc) => doc.deleteIn(["providers", "openai"]),
      (doc) => doc.deleteIn(["providers"]),
      (doc) => doc.setIn(["providers", "anthropic"], "disabled"),
      (doc) => doc.setIn(["providers", "openai", "flags"], ["a", "b", "c"]),
      (doc) => doc.setIn(["providers", "openai", "mask"], 31),
      (doc) => doc.setIn(["retry"], { max_attempts: 1 }),
      (doc) => doc.setIn(["new_section", "deep", "key"], "v: with colon # and hash"),
      (doc) => {
        doc.deleteIn(["retry", "max_attempts"]);
        doc.setIn(["providers", "anthropic", "rate_limit", "requests_per_second"], 5);
      },
    ];
    for (const [index, edit] of edits.entries()) {
      const path = join(freshDir(), "llm.yaml");
      writeFileSync(path, commented);
      let expected: unknown;
      await editYamlFile(path, (doc) => {
        edit(doc);
        expected = doc.toJS();
      });
      const written = parseDocument(readFileSync(path, "utf8"));
      assert.deepEqual(written.errors, [], `edit ${index}`);
      assert.deepEqual(written.toJS(), expected, `edit ${index}`);
      assert.match(
        readFileSync(path, "utf8"),
        /^# nexo LLM providers\.\n# Keys are provider names/,
        `edit ${index}`,
      );
    }
  });

  it("keeps that guarantee under random sequences of edits (property)", async () => {
    const path = join(freshDir(), "prop.yaml");
    const key = fc.constantFrom("providers", "anthropic", "openai", "retry", "mask", "flags", "x");
    const editArb = fc.oneof(
      fc.record({
        op: fc.constant("set" as const),
        path: fc.array(key, { minLength: 1, maxLength: 4 }),
        value: fc.oneof(fc.integer(), fc.string({ maxLength: 12 }), fc.array(fc.integer(), { maxLength: 3 })),
      }),
      fc.record({ op: fc.constant("delete" as const), path: fc.array(key, { minLength: 1, maxLength: 3 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(editArb, { minLength: 1, maxLength: 4 }), async (edits) => {
        writeFileSync(path, commented);
        let expected: unknown;
        try {
          await editYamlFile(path, (doc) => {
            for (const edit of edits) {
              if (edit.op === "set") doc.setIn(edit.path, edit.value);
              else doc.deleteIn(edit.path);
            }
            expected = doc.toJS();
          });
        } catch {
          // setIn through a scalar is refused by yaml itself; the file must then be untouched.
          assert.equal(readFileSync(path, "utf8"), commented);
          return;
        }
        const written = parseDocument(readFileSync(path, "utf8"));
        assert.deepEqual(written.errors, []);
        assert.deepEqual(written.toJS(), expected);
      }),
      { numRuns: 150 },
    );
  });

  it("follows the file's own indentation and sequence style for new content", async () => {
    const path = join(freshDir(), "agents.yaml");
    const original = "agents:\n- id: ana    # first\n  plugins:\n  - whatsapp\n";
    writeFileSync(path, original);
    await editYamlFile(path, (doc) => {
      doc.addIn(["agents"], { id: "bob", plugins: ["telegram"] });
    });
    assert.equal(readFileSync(path, "utf8"), `${original}- id: bob\n  plugins:\n  - telegram\n`);
  });

  it("keeps CRLF line endings", async () => {
    const path = join(freshDir(), "broker.yaml");
    writeFileSync(path, "# broker\r\nbroker:\r\n  type: local   # default\r\n  url: x\r\n");
    await editYamlFile(path, (doc) => doc.setIn(["broker", "url"], "nats://h:4222"));
    assert.equal(
      readFileSync(path, "utf8"),
      "# broker\r\nbroker:\r\n  type: local   # default\r\n  url: nats://h:4222\r\n",
    );
  });

  it("does not rewrite the file when the edit changes nothing", async () => {
    const path = join(freshDir(), "llm.yaml");
    writeFileSync(path, commented);
    const before = statSync(path);
    const result = await editYamlFile(path, (doc) => doc.setIn(["retry", "max_attempts"], 5));
    assert.deepEqual(result, { changed: false, text: commented });
    assert.equal(statSync(path).ino, before.ino);
  });

  it("validates the result (with substitution) and writes it when it passes", async () => {
    const dir = freshDir();
    const path = join(dir, "llm.yaml");
    mkdirSync(join(dir, "secrets"));
    writeFileSync(join(dir, "secrets", "openai"), "sk-test\n");
    writeFileSync(path, commented);
    const validate = { schema: LlmSchema, env: { ANTHROPIC_API_KEY: "k" } };
    const result = await editYamlFile(path, (doc) => doc.setIn(["retry", "backoff_ms"], 250), { validate });
    assert.equal(result.changed, true);
    assert.match(readFileSync(path, "utf8"), /backoff_ms: 250\n/);
  });

  it("leaves the file byte-identical when the edit fails validation", async () => {
    const dir = freshDir();
    const path = join(dir, "llm.yaml");
    mkdirSync(join(dir, "secrets"));
    writeFileSync(join(dir, "secrets", "openai"), "sk-test\n");
    writeFileSync(path, commented);
    const before = readFileSync(path);
    const validate = { schema: LlmSchema, env: { ANTHROPIC_API_KEY: "k" } };
    await assert.rejects(
      editYamlFile(path, (doc) => doc.setIn(["retry", "max_attempts"], 0), { validate }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.code, "schema");
        assert.equal(error.keyPath, "retry.max_attempts");
        assert.equal(error.line, 17);
        return true;
      },
    );
    assert.deepEqual(readFileSync(path), before);
    assert.deepEqual(readdirSync(dir).sort(), ["llm.yaml", "secrets"]);
  });

  it("refuses to edit a file that does not parse, and leaves it alone", async () => {
    const path = join(freshDir(), "bad.yaml");
    writeFileSync(path, "a: 1\na: 2\n");
    await assert.rejects(
      editYamlFile(path, (doc) => doc.setIn(["b"], 1)),
      (error: unknown) => error instanceof ConfigError && error.code === "parse" && error.line === 2,
    );
    assert.equal(readFileSync(path, "utf8"), "a: 1\na: 2\n");
  });

  it("runs check on the exact text to be written; a throwing check refuses the edit", async () => {
    const path = join(freshDir(), "llm.yaml");
    writeFileSync(path, commented);
    const seen: string[] = [];
    await assert.rejects(
      editYamlFile(path, (doc) => doc.setIn(["retry", "max_attempts"], 9), {
        check: (text) => {
          seen.push(text);
          throw new Error("the rest of the directory disagrees");
        },
      }),
      /the rest of the directory disagrees/,
    );
    assert.deepEqual(seen, [commented.replace("max_attempts: 5 # enough", "max_attempts: 9 # enough")]);
    assert.equal(readFileSync(path, "utf8"), commented, "left byte-identical");
    const accepted = await editYamlFile(path, (doc) => doc.setIn(["retry", "max_attempts"], 9), {
      check: async (text) => void seen.push(text),
    });
    assert.equal(accepted.text, seen[1]);
    assert.equal(readFileSync(path, "utf8"), seen[1]);
  });

  it("creates a missing file only when asked", async () => {
    const dir = freshDir();
    const path = join(dir, "tenants.yaml");
    await assert.rejects(
      editYamlFile(path, (doc) => doc.setIn(["tenants"], [])),
      (error: unknown) => error instanceof ConfigError && error.code === "io",
    );
    const result = await editYamlFile(path, (doc) => doc.setIn(["tenants"], [{ id: "acme" }]), {
      createIfMissing: true,
    });
    assert.equal(result.changed, true);
    assert.equal(readFileSync(path, "utf8"), "tenants:\n  - id: acme\n");
  });

  it("serializes 50 concurrent edits of one file so that none is lost", async () => {
    const path = join(freshDir(), "counter.yaml");
    writeFileSync(path, "# edited concurrently\ncount: 0\nseen: {}\n");
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        editYamlFile(path, async (doc) => {
          const count = Number(doc.getIn(["count"]));
          // Yield mid-edit: without the lock every edit would read count 0 and most would be lost.
          await sleep(i % 3);
          doc.setIn(["count"], count + 1);
          doc.setIn(["seen", `e${i}`], i);
        }),
      ),
    );
    const text = readFileSync(path, "utf8");
    assert.match(text, /^# edited concurrently\ncount: 50\n/);
    for (let i = 0; i < 50; i += 1) assert.match(text, new RegExp(`\\be${i}: ${i}\\b`));
  });

  it("lets one edit's failure leave the queue running for the next ones", async () => {
    const path = join(freshDir(), "q.yaml");
    writeFileSync(path, "n: 0\n");
    const failing = editYamlFile(path, () => {
      throw new Error("boom");
    });
    const next = editYamlFile(path, (doc) => doc.setIn(["n"], 1));
    await assert.rejects(failing, /boom/);
    assert.equal((await next).changed, true);
    assert.equal(readFileSync(path, "utf8"), "n: 1\n");
  });
});
