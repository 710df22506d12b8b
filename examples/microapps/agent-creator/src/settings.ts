/**
 * The microapp's settings: extensions.yaml `entries.agent-creator.config`, checked when the daemon
 * sends `initialize` (a bad config fails initialize with a message naming the field, which the
 * daemon logs).
 *
 *   config:
 *     default_model: { provider: anthropic, model: claude-sonnet-5 }
 *     system_prompt: "You are a helpful assistant."
 */
import type { SafeParser } from "nexo-plugin-sdk/microapp";

/** A type alias, not an interface: the admin client's params accept extra keys, interfaces cannot. */
export type ModelRef = { provider: string; model: string };

export interface Settings {
  /** The model of agents created without one. */
  default_model: ModelRef;
  /** The prompt of agents created without one. */
  system_prompt: string;
}

const DEFAULTS: Settings = {
  default_model: { provider: "scripted", model: "scripted" },
  system_prompt: "You are a helpful assistant.",
};

type Issue = { path: string[]; message: string };

function isModelRef(value: unknown): value is ModelRef {
  const ref = value as Partial<ModelRef> | null;
  return (
    typeof ref?.provider === "string" &&
    ref.provider !== "" &&
    typeof ref.model === "string" &&
    ref.model !== ""
  );
}

export const settingsParser: SafeParser<Settings> = {
  safeParse(raw) {
    if (raw === undefined || raw === null) return { success: true, data: DEFAULTS };
    if (typeof raw !== "object" || Array.isArray(raw)) {
      return { success: false, error: { issues: [{ path: [], message: "config must be a mapping" }] } };
    }
    const given = raw as Record<string, unknown>;
    const issues: Issue[] = [];
    if (given.default_model !== undefined && !isModelRef(given.default_model)) {
      issues.push({ path: ["default_model"], message: "must be {provider, model}, both non-empty strings" });
    }
    if (given.system_prompt !== undefined && typeof given.system_prompt !== "string") {
      issues.push({ path: ["system_prompt"], message: "must be a string" });
    }
    if (issues.length > 0) return { success: false, error: { issues } };
    return {
      success: true,
      data: {
        default_model: (given.default_model as ModelRef | undefined) ?? DEFAULTS.default_model,
        system_prompt: (given.system_prompt as string | undefined) ?? DEFAULTS.system_prompt,
      },
    };
  },
};
