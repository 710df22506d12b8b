/**
 * docs/cli.md is generated from the commander definitions (issue 14.16): this fails when a command,
 * flag or description changed without regenerating it.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { buildProgram } from "../../src/cli/program.js";
import { renderCliReference } from "../../src/cli/reference.js";

const DOC = fileURLToPath(new URL("../../../../docs/cli.md", import.meta.url));

describe("docs/cli.md", () => {
  it("is what the CLI's definitions say (regenerate: node scripts/cli-docs.mjs)", () => {
    const rendered = renderCliReference(buildProgram({}));
    assert.equal(
      readFileSync(DOC, "utf8"),
      rendered,
      "docs/cli.md is stale: run `node scripts/cli-docs.mjs`",
    );
  });

  it("lists every command, with the options and choices help shows", () => {
    const text = renderCliReference(buildProgram({}));
    for (const command of [
      "start",
      "init",
      "chat",
      "agent",
      "app-server",
      "config validate",
      "plugin new",
      "plugin check",
    ]) {
      assert.match(text, new RegExp(`^## \`nexo ${command}\`$`, "m"), command);
    }
    assert.match(text, /`--lang <language>` \| the language; one of: `python`, `ts`; default: `python`/);
    assert.match(text, /\| 2 \| the command was called wrong/);
  });
});
