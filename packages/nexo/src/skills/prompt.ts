/**
 * How skills reach a model: one section of the system prompt, after the agent's own prompt, with
 * each skill under its own heading in the order the agent lists them. A skill's `max_chars` caps
 * the characters of its body that go in (the cut is marked, so the model knows text is missing).
 */
import type { SkillContent } from "./skill-file.js";

export type PromptSkill = Pick<SkillContent, "displayName" | "description" | "maxChars" | "body"> & {
  name: string;
};

export const SKILLS_HEADING = "# Skills";

/** The section for `skills`, or undefined when there are none. */
export function renderSkillsSection(skills: readonly PromptSkill[]): string | undefined {
  if (skills.length === 0) return undefined;
  const parts = skills.map((skill) => {
    const title = skill.displayName?.trim() || skill.name;
    const description = skill.description?.trim();
    const body = capped(skill.body.trim(), skill.maxChars);
    return [`## ${title}`, description, body]
      .filter((part) => part !== undefined && part !== "")
      .join("\n\n");
  });
  return [SKILLS_HEADING, "The operator gave you these skills. Follow them when they apply.", ...parts].join(
    "\n\n",
  );
}

function capped(body: string, maxChars: number | undefined): string {
  if (maxChars === undefined || body.length <= maxChars) return body;
  return `${body.slice(0, maxChars)}\n[… skill cut at ${maxChars} characters]`;
}
