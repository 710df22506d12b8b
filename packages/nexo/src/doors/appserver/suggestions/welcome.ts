/**
 * `welcome/suggestions`: a few things a person could ask the agent to do in this workspace, for a
 * client's empty-thread screen. The model is asked once per workspace state (summary fingerprint);
 * its answer is read defensively — anything that is not a list of {title, prompt} gives
 * `source: "none"` and no items, never an error, since the screen works without suggestions.
 */
import type { WelcomeSuggestionsResult } from "@nexo/wire/schemas/appserver";
import { isoTime } from "../../../iso-time.js";
import type { Logger } from "../../../log.js";
import type { ThreadModel } from "../threads/service.js";
import { askModel } from "./ask-model.js";
import { summarizeWorkspace } from "./workspace-summary.js";

export const DEFAULT_WELCOME_ITEMS = 4;
/** A client may ask for fewer, not more: a welcome screen shows a handful. */
export const MAX_WELCOME_ITEMS = 8;
/** Answers kept (one per workspace state); the oldest goes first. */
const CACHE_SIZE = 32;

const TITLE_CHARS = 80;
const PROMPT_CHARS = 1000;
const REASON_CHARS = 300;

export type WelcomeItem = WelcomeSuggestionsResult["items"][number];

export interface WelcomeRequest {
  workspace: string;
  maxItems: number;
  recentTitles: readonly string[];
  /** Resolved only when the model has to be asked (not on a cache hit). */
  model: () => Promise<ThreadModel>;
  logger: Logger;
}

function system(maxItems: number): string {
  return [
    `Suggest ${maxItems} short, concrete tasks a developer could ask a coding agent to do in the workspace described below.`,
    'Answer with a JSON array only, no other text: [{"title": "...", "prompt": "...", "reason": "..."}].',
    "title: at most 6 words. prompt: the request exactly as the user would send it. reason: one short sentence.",
  ].join(" ");
}

function clip(value: unknown, max: number): string | undefined {
  if (typeof value !== "string") return undefined;
  const text = value.replace(/\s+/g, " ").trim();
  return text === "" ? undefined : text.slice(0, max);
}

/** The items in a model's answer; [] when it holds no usable list. */
export function parseSuggestions(answer: string, maxItems: number): WelcomeItem[] {
  const start = answer.indexOf("[");
  const end = answer.lastIndexOf("]");
  if (start < 0 || end <= start) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.slice(start, end + 1));
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const items: WelcomeItem[] = [];
  for (const raw of parsed) {
    if (items.length >= maxItems) break;
    if (raw === null || typeof raw !== "object") continue;
    const entry = raw as Record<string, unknown>;
    const title = clip(entry.title, TITLE_CHARS);
    const prompt = clip(entry.prompt, PROMPT_CHARS);
    if (title === undefined || prompt === undefined) continue;
    const reason = clip(entry.reason, REASON_CHARS);
    items.push({ title, prompt, ...(reason === undefined ? {} : { reason }) });
  }
  return items;
}

/** Welcome suggestions with a cache of the answers the model gave, by workspace state. */
export class WelcomeSuggestions {
  private readonly cache = new Map<string, WelcomeSuggestionsResult>();

  async suggest(request: WelcomeRequest): Promise<WelcomeSuggestionsResult> {
    const summary = await summarizeWorkspace(request.workspace, request.recentTitles, request.maxItems);
    const cached = this.cache.get(summary.fingerprint);
    if (cached !== undefined) return cached;
    const none = (): WelcomeSuggestionsResult => ({
      items: [],
      source: "none",
      generatedAt: isoTime(),
      fingerprint: summary.fingerprint,
    });
    let answer: string;
    try {
      answer = await askModel(await request.model(), {
        system: system(request.maxItems),
        prompt: summary.text,
        maxTokens: 1024,
      });
    } catch (error) {
      // Not kept: the next welcome screen asks again (the provider may be back).
      request.logger.warn(
        { err: (error as Error).message },
        "welcome suggestions: the model could not be asked",
      );
      return none();
    }
    const items = parseSuggestions(answer, request.maxItems);
    const result: WelcomeSuggestionsResult =
      items.length === 0 ? none() : { ...none(), items, source: "dynamic" };
    this.cache.set(summary.fingerprint, result);
    while (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    return result;
  }
}
