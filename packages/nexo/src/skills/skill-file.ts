/**
 * The SKILL.md format: an optional YAML front matter between two `---` lines, then the skill's
 * markdown body (what the model reads). The front matter carries what nexo needs to show and load
 * the skill — `display_name`, `description`, `max_chars` (a cap on what reaches the prompt) and
 * `requires` (binaries and variables the skill expects) — and may carry other keys, which are
 * kept out of the way (skills written for other tools often have a `name:` or `license:`).
 */
import * as admin from "@nexo/wire/schemas/admin";
import { z } from "zod";
import { disposableSchema } from "../config/disposable-schema.js";
import { yamlLibrary } from "../config/yaml-library.js";

/** The largest SKILL.md nexo reads or writes: a skill is prompt text, not a data file. */
export const MAX_SKILL_FILE_BYTES = 256 * 1024;

/** Read with each SKILL.md, at a config load or an admin call: built on use and let go (config/disposable-schema.ts). */
const FrontMatterSchema = disposableSchema(() =>
  z.looseObject({
    display_name: z.string().optional(),
    description: z.string().optional(),
    max_chars: z.int().positive().optional(),
    requires: z
      .looseObject({
        bins: z.array(z.string()).optional(),
        env: z.array(z.string()).optional(),
        mode: admin.SkillDepsModeSchema.optional(),
      })
      .optional(),
  }),
);

/** What a SKILL.md says, front matter and body. */
export interface SkillContent {
  displayName?: string | undefined;
  description?: string | undefined;
  /** Cap on the characters of the body that reach the prompt. */
  maxChars?: number | undefined;
  requires?: admin.SkillRequires | undefined;
  /** The markdown after the front matter. */
  body: string;
}

/** A SKILL.md that cannot be read as one: bad front matter, or too large. */
export class SkillFileError extends Error {
  override readonly name = "SkillFileError";
  readonly code = "skill_file_invalid" as const;
  constructor(
    readonly file: string,
    /** The problem, without the file. */
    readonly detail: string,
  ) {
    super(`${file}: ${detail}`);
  }
}

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*$/m;

/** Reads the text of a SKILL.md. Throws SkillFileError naming `file`. */
export function parseSkillFile(text: string, file: string): SkillContent {
  if (Buffer.byteLength(text) > MAX_SKILL_FILE_BYTES)
    throw new SkillFileError(file, `larger than ${MAX_SKILL_FILE_BYTES} bytes`);
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const opening = OPENING.exec(source);
  if (opening === null) return { body: source };
  const rest = source.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (closing === null) throw new SkillFileError(file, "the front matter opened by --- is never closed");
  const yamlText = rest.slice(0, closing.index);
  const body = rest.slice(closing.index + closing[0].length).replace(/^\r?\n/, "");
  const doc = yamlLibrary().parseDocument(yamlText, { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0)
    throw new SkillFileError(file, `front matter: ${doc.errors[0]?.message ?? "invalid YAML"}`);
  const data: unknown = doc.toJS({ maxAliasCount: 50 }) ?? {};
  const checked = FrontMatterSchema.safeParse(data);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
    throw new SkillFileError(file, `front matter: ${where}${issue?.message ?? "invalid"}`);
  }
  const meta = checked.data;
  return {
    ...(meta.display_name === undefined ? {} : { displayName: meta.display_name }),
    ...(meta.description === undefined ? {} : { description: meta.description }),
    ...(meta.max_chars === undefined ? {} : { maxChars: meta.max_chars }),
    ...(meta.requires === undefined ? {} : { requires: meta.requires }),
    body,
  };
}

/** The text of a SKILL.md for `content`: front matter only when something goes in it. */
export function renderSkillFile(content: SkillContent): string {
  const meta: Record<string, unknown> = {};
  if (content.displayName !== undefined) meta.display_name = content.displayName;
  if (content.description !== undefined) meta.description = content.description;
  if (content.maxChars !== undefined) meta.max_chars = content.maxChars;
  if (content.requires !== undefined) meta.requires = content.requires;
  const body = content.body.endsWith("\n") ? content.body : `${content.body}\n`;
  if (Object.keys(meta).length === 0 && !OPENING.test(body)) return body;
  return `---\n${yamlLibrary().stringify(meta, { lineWidth: 0 })}---\n${body}`;
}
