/** The skills section of a system prompt: order kept, headings, descriptions, the max_chars cut. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderSkillsSection, SKILLS_HEADING } from "../../src/skills/index.js";

describe("renderSkillsSection", () => {
  it("is nothing without skills", () => {
    assert.equal(renderSkillsSection([]), undefined);
  });

  it("puts each skill under its display name (or name), in the given order", () => {
    const text =
      renderSkillsSection([
        { name: "zeta", body: "Z body\n" },
        { name: "alpha", displayName: "Alpha rules", description: "When to use alpha", body: "A body" },
      ]) ?? "";
    assert.ok(text.startsWith(`${SKILLS_HEADING}\n\n`));
    assert.ok(
      text.indexOf("## zeta\n\nZ body") < text.indexOf("## Alpha rules\n\nWhen to use alpha\n\nA body"),
    );
  });

  it("cuts a body at max_chars and says so", () => {
    const text = renderSkillsSection([{ name: "long", maxChars: 5, body: "0123456789" }]) ?? "";
    assert.match(text, /## long\n\n01234\n\[… skill cut at 5 characters\]$/);
    assert.doesNotMatch(text, /56789/);
  });
});
