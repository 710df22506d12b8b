/**
 * SKILL.md parsing and rendering: front matter round trip, a body that itself starts with `---`,
 * unclosed or invalid front matter refused with the file named, and the size bound.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  MAX_SKILL_FILE_BYTES,
  parseSkillFile,
  renderSkillFile,
  SkillFileError,
} from "../../src/skills/index.js";

describe("SKILL.md", () => {
  it("round-trips every front matter field", () => {
    const content = {
      displayName: "Tone",
      description: "How to sound: warm",
      maxChars: 120,
      requires: { env: ["LANG"] },
      body: "Line one.\n\nLine two.\n",
    };
    assert.deepEqual(parseSkillFile(renderSkillFile(content), "x"), content);
  });

  it("a body that starts with --- gets an empty front matter so it is read back as a body", () => {
    const text = renderSkillFile({ body: "---\nnot: front matter\n---\nrest\n" });
    assert.equal(parseSkillFile(text, "x").body, "---\nnot: front matter\n---\nrest\n");
  });

  it("refuses broken front matter, naming the file", () => {
    for (const text of [
      "---\ndisplay_name: x\nno closing line\n",
      "---\ndisplay_name: [unclosed\n---\nbody\n",
      "---\nmax_chars: -1\n---\nbody\n",
      "---\nrequires: { mode: sometimes }\n---\nbody\n",
      "---\na: 1\na: 2\n---\nbody\n",
    ]) {
      assert.throws(
        () => parseSkillFile(text, "skills/t/SKILL.md"),
        (e: unknown) => e instanceof SkillFileError && e.message.startsWith("skills/t/SKILL.md: "),
        text,
      );
    }
  });

  it("refuses a file over the size bound", () => {
    assert.throws(() => parseSkillFile("x".repeat(MAX_SKILL_FILE_BYTES + 1), "big"), /larger than/);
  });

  it("tolerates a BOM and CRLF line ends", () => {
    const parsed = parseSkillFile("\ufeff---\r\ndescription: d\r\n---\r\nbody\r\n", "x");
    assert.equal(parsed.description, "d");
    assert.equal(parsed.body, "body\r\n");
  });
});
