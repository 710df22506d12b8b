/**
 * One question to a model outside any conversation (a commit message, welcome suggestions): the
 * engine's one-shot completion on the model a thread would use. Nothing is stored; a failure of
 * the provider is the caller's typed error, not a crash.
 */
import { oneShotRequest, runOneShot } from "../../../engine/providers/one-shot.js";
import type { ThreadModel } from "../threads/service.js";

/** Long enough for a slow provider, short enough that a wedged one does not hold a request slot. */
const ASK_TIMEOUT_MS = 120_000;

export interface Question {
  system: string;
  prompt: string;
  maxTokens: number;
}

/** The model's answer text; rejects with the provider's error. */
export async function askModel(target: ThreadModel, question: Question): Promise<string> {
  const request = oneShotRequest({
    model: target.model,
    systemPrompt: question.system,
    messages: [{ role: "user", content: question.prompt }],
    maxTokens: question.maxTokens,
    signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
  });
  if (request === undefined) throw new Error("the question is empty");
  return (await runOneShot(target.provider, request)).content;
}
