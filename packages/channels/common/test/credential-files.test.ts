/**
 * Registered credentials on disk: one 0600 file per instance, replaced whole; anything unusable in
 * the file reads as "nothing registered", and an instance name cannot escape the directory.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { CredentialFiles } from "../src/index.js";

const TOKEN = /^tok-[a-z]+$/;
const store = (dir: string) =>
  new CredentialFiles<string>(dir, {
    read: ({ token }) => (typeof token === "string" && TOKEN.test(token) ? token : undefined),
    write: (token) => ({ token }),
  });

test("saved per instance, 0600, read back; the default instance is _default.json", () => {
  const dir = mkdtempSync(join(tmpdir(), "nexo-credentials-"));
  const credentials = store(dir);
  assert.equal(credentials.get(null), undefined);
  credentials.save(null, "tok-default");
  credentials.save("work", "tok-work");
  assert.equal(credentials.get(undefined), "tok-default");
  assert.equal(credentials.get("work"), "tok-work");
  const file = join(dir, "credentials", "_default.json");
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const saved = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  assert.equal(saved.token, "tok-default");
  assert.equal(typeof saved.saved_at, "string");
});

test("a broken, foreign or refused file is nothing registered", () => {
  const dir = mkdtempSync(join(tmpdir(), "nexo-credentials-"));
  const credentials = store(dir);
  credentials.save("a", "tok-a");
  const file = join(dir, "credentials", "a.json");
  for (const content of ["{not json", "[1,2]", "null", '"tok-a"', '{"token":"not a token"}']) {
    writeFileSync(file, content);
    assert.equal(credentials.get("a"), undefined, content);
  }
});

test("an instance name that is not a plain word is refused on save and has nothing registered", () => {
  const credentials = store(mkdtempSync(join(tmpdir(), "nexo-credentials-")));
  for (const name of ["../x", "a/b", "", "x".repeat(65), "a b"]) {
    assert.throws(() => credentials.save(name, "tok-x"), /invalid instance name/);
    assert.equal(credentials.get(name), undefined);
  }
});
