/**
 * `workspace/commitMessage/suggest`: the git diff of the paths a client names, sent to the model of
 * the thread it names, and the commit message that comes back. The question is asked outside the
 * thread (a one-shot request on the thread's model): the thread's history is neither read into it
 * nor written by it, and no thread is created for it.
 */

import type { ThreadModel } from "../threads/service.js";
import { askModel } from "./ask-model.js";
import { diffOf } from "./git-diff.js";

/** The diff characters sent when the client does not say (about 5,000 tokens). */
export const DEFAULT_MAX_DIFF_CHARS = 20_000;

const SYSTEM = [
  "You write git commit messages.",
  "Given a diff, answer with the commit message only: a summary line of at most 72 characters in the imperative mood,",
  "then, when the change needs it, a blank line and a short body saying what changed and why.",
  "No code fences, no quotes, no preamble.",
].join(" ");

export async function suggestCommitMessage(
  target: ThreadModel,
  workspace: string,
  paths: readonly string[],
  maxDiffChars = DEFAULT_MAX_DIFF_CHARS,
): Promise<string> {
  const diff = await diffOf(workspace, paths, maxDiffChars);
  const answer = await askModel(target, {
    system: SYSTEM,
    prompt: `Write the commit message for this diff:\n\n${diff}`,
    maxTokens: 1024,
  });
  return cleanMessage(answer);
}

/** The message without what models like to wrap it in: code fences, surrounding quotes, blank edges. */
export function cleanMessage(answer: string): string {
  let text = answer.trim();
  const fenced = /^```[\w-]*\n([\s\S]*?)\n?```$/.exec(text);
  if (fenced) text = fenced[1]!.trim();
  if (text.length >= 2 && /^["'`]/.test(text) && text.at(-1) === text[0]) text = text.slice(1, -1).trim();
  return text;
}
