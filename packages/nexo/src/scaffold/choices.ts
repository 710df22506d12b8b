/**
 * What the scaffolding commands offer, apart from what they write: `nexo plugin new`, `nexo
 * microapp new` and `nexo init` list these as their options' choices, and every command builds
 * the whole command tree before it runs, so this file stays free of the templates (importing a
 * scaffold module for its list loaded the templates' chunk on every command's start).
 */

export type PluginLanguage = "python" | "ts";
export const PLUGIN_LANGUAGES: readonly PluginLanguage[] = ["python", "ts"];

export type MicroappLanguage = "python" | "ts";
export const MICROAPP_LANGUAGES: readonly MicroappLanguage[] = ["python", "ts"];

export type InitProvider = "anthropic" | "openai" | "ollama" | "scripted";
export const INIT_PROVIDERS: readonly InitProvider[] = ["anthropic", "openai", "ollama", "scripted"];
