// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings test the ${...} config syntax itself.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { z } from "zod";
import {
  ConfigError,
  escapeSubstitution,
  parseConfigText,
  substituteString,
  substituteValues,
} from "../../src/config/index.js";

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "nexo-config-subst-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const sub = (text: string, env: Record<string, string | undefined> = {}) =>
  substituteString(text, { env, baseDir: dir });

function substitutionError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    assert.equal(error.code, "substitution");
    return error;
  }
  assert.fail("expected a substitution error");
}

describe("${VAR}", () => {
  it("inserts the variable's value, including an empty one", () => {
    assert.equal(sub("key-${KEY}-end", { KEY: "abc" }), "key-abc-end");
    assert.equal(sub("[${EMPTY}]", { EMPTY: "" }), "[]");
    assert.equal(sub("${A}${B}", { A: "1", B: "2" }), "12");
  });

  it("names the unset variable and how it was written", () => {
    const error = substitutionError(() => sub("Bearer ${API_TOKEN}"));
    assert.equal(error.message, "environment variable API_TOKEN is not set (used as ${API_TOKEN})");
  });

  it("reports every unset variable in one string", () => {
    const error = substitutionError(() => sub("${A}:${B}"));
    assert.deepEqual(
      error.issues.map((issue) => issue.message),
      [
        "environment variable A is not set (used as ${A})",
        "environment variable B is not set (used as ${B})",
      ],
    );
  });

  it("never expands a value that came from the environment", () => {
    assert.equal(sub("${SECRET}", { SECRET: "pa${ss}word", ss: "x" }), "pa${ss}word");
  });

  it("rejects malformed placeholders with a clear message", () => {
    assert.match(substitutionError(() => sub("${}")).message, /^empty placeholder: expected \$\{NAME\}/);
    assert.match(substitutionError(() => sub("${1ABC}")).message, /^invalid placeholder \$\{1ABC\}/);
    assert.match(substitutionError(() => sub("${A B}")).message, /^invalid placeholder \$\{A B\}/);
    assert.equal(
      substitutionError(() => sub("x ${OPEN", { OPEN: "1" })).message,
      'unterminated placeholder ${OPEN: missing "}"',
    );
  });
});

describe("defaults", () => {
  it(":- uses the default when the variable is unset or empty, like the shell", () => {
    assert.equal(sub("${PORT:-8080}"), "8080");
    assert.equal(sub("${PORT:-8080}", { PORT: "" }), "8080");
    assert.equal(sub("${PORT:-8080}", { PORT: "9090" }), "9090");
    assert.equal(sub("${HOST:-}"), "");
  });

  it("- uses the default only when the variable is unset", () => {
    assert.equal(sub("${PORT-8080}"), "8080");
    assert.equal(sub("${PORT-8080}", { PORT: "" }), "");
  });

  it("defaults may hold colons, spaces and nested placeholders, expanded only when used", () => {
    assert.equal(sub("${URL:-http://localhost:4222}"), "http://localhost:4222");
    assert.equal(sub("${A:-${B}}", { B: "from-b" }), "from-b");
    assert.equal(sub("${A:-${B:-deep}}"), "deep");
    // The default is not evaluated when the variable is set, so its unset reference is no error.
    assert.equal(sub("${A:-${NOT_SET}}", { A: "a" }), "a");
    assert.equal(
      substitutionError(() => sub("${A:-${NOT_SET}}")).message,
      "environment variable NOT_SET is not set (used as ${NOT_SET})",
    );
  });
});

describe("escape", () => {
  it("$${...} is a literal ${...}", () => {
    assert.equal(sub("$${HOME}"), "${HOME}");
    assert.equal(sub("a $${X:-y} b ${Z}", { Z: "z" }), "a ${X:-y} b z");
    assert.equal(sub("${A:-$${literal}}"), "${literal}");
  });

  it("leaves other dollar signs alone", () => {
    assert.equal(sub("costs $5 or $$5, $ alone, $HOME"), "costs $5 or $$5, $ alone, $HOME");
  });

  it("escapeSubstitution makes any text load back unchanged", () => {
    const raw = "template ${name} and $${kept} and ${file:/etc/passwd}";
    assert.equal(sub(escapeSubstitution(raw)), raw);
  });
});

describe("${file:path}", () => {
  it("reads the file, trimming exactly one trailing newline", () => {
    writeFileSync(join(dir, "one.txt"), "s3cret\n");
    writeFileSync(join(dir, "two.txt"), "line\n\n");
    writeFileSync(join(dir, "crlf.txt"), "win\r\n");
    writeFileSync(join(dir, "none.txt"), "bare");
    assert.equal(sub("${file:one.txt}"), "s3cret");
    assert.equal(sub("${file:./two.txt}"), "line\n");
    assert.equal(sub("${file:crlf.txt}"), "win");
    assert.equal(sub("${file:none.txt}"), "bare");
  });

  it("resolves relative paths against baseDir, accepts absolute paths and nested placeholders", () => {
    mkdirSync(join(dir, "secrets"), { recursive: true });
    writeFileSync(join(dir, "secrets", "token"), "tok\n");
    assert.equal(sub("${file:secrets/token}"), "tok");
    assert.equal(sub(`\${file:${join(dir, "secrets", "token")}}`), "tok");
    assert.equal(sub("${file:${SECRETS}/token}", { SECRETS: join(dir, "secrets") }), "tok");
  });

  it("fails with the resolved path and the reason when the file is unreadable", () => {
    const missing = join(dir, "nope.txt");
    assert.equal(
      substitutionError(() => sub("${file:nope.txt}")).message,
      `cannot read ${missing} (used as \${file:nope.txt}): no such file (ENOENT)`,
    );
    assert.equal(
      substitutionError(() => sub("${file:.}")).message,
      `cannot read ${dir} (used as \${file:.}): is a directory (EISDIR)`,
    );
    assert.match(substitutionError(() => sub("${file:}")).message, /^empty file path in \$\{file:\}/);
  });

  it("inserts file contents verbatim, without expanding them", () => {
    writeFileSync(join(dir, "raw.txt"), "${NOT_EXPANDED}\n");
    assert.equal(sub("${file:raw.txt}"), "${NOT_EXPANDED}");
  });
});

describe("substituteValues", () => {
  it("walks arrays and objects, touches string values only, never keys", () => {
    const input = { "${KEY}": "${V}", list: ["${V}", 3, true, null], nested: { n: 1, s: "x${V}" } };
    const { value, failures } = substituteValues(input, { env: { V: "v", KEY: "k" }, baseDir: dir });
    assert.deepEqual(failures, []);
    assert.deepEqual(value, { "${KEY}": "v", list: ["v", 3, true, null], nested: { n: 1, s: "xv" } });
  });

  it("returns every failure with its path and keeps the failed string as written", () => {
    const input = { a: "${X}", b: ["ok", "${Y}"] };
    const { value, failures } = substituteValues(input, { env: {}, baseDir: dir });
    assert.deepEqual(value, input);
    assert.deepEqual(failures, [
      { path: ["a"], messages: ["environment variable X is not set (used as ${X})"] },
      { path: ["b", 1], messages: ["environment variable Y is not set (used as ${Y})"] },
    ]);
  });
});

describe("substitution inside a loaded file", () => {
  const schema = z.looseObject({ url: z.string(), note: z.string().optional() });

  it("happens after parsing, so values with ':' or '#' cannot break YAML, and comments are skipped", () => {
    const text = "# ${IN_COMMENT} is never read\nurl: ${URL}\nnote: '${NOTE}'\n";
    const value = parseConfigText(text, "yaml", schema, {
      file: "x.yaml",
      env: { URL: "nats://h:4222 # not a comment", NOTE: "a: b" },
    });
    assert.deepEqual(value, { url: "nats://h:4222 # not a comment", note: "a: b" });
  });

  it("resolves ${file:} relative to the config file's directory", () => {
    mkdirSync(join(dir, "conf", "secrets"), { recursive: true });
    writeFileSync(join(dir, "conf", "secrets", "url"), "http://secret\n");
    const value = parseConfigText('url = "${file:secrets/url}"\n', "toml", schema, {
      file: join(dir, "conf", "llm.toml"),
      env: {},
    });
    assert.equal(value.url, "http://secret");
  });

  it("reports the key path and the value's position of a failed placeholder", () => {
    const text = "providers:\n  anthropic:\n    api_key: ${ANTHROPIC_API_KEY}\n";
    const error = substitutionError(() =>
      parseConfigText(text, "yaml", z.any(), { file: "llm.yaml", env: {} }),
    );
    assert.equal(
      error.message,
      "llm.yaml:3:14: providers.anthropic.api_key: environment variable ANTHROPIC_API_KEY is not set (used as ${ANTHROPIC_API_KEY})",
    );
  });

  it("does not pile schema complaints onto a value whose placeholder failed", () => {
    const strict = z.object({ provider: z.enum(["anthropic", "openai"]), port: z.number() });
    const error = substitutionError(() =>
      parseConfigText("provider: ${PROVIDER}\nport: nope\n", "yaml", strict, { file: "a.yaml", env: {} }),
    );
    assert.deepEqual(
      error.issues.map((issue) => [issue.code, issue.keyPath]),
      [
        ["substitution", "provider"],
        ["schema", "port"],
      ],
    );
  });
});
