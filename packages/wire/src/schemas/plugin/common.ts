/**
 * Building blocks shared by the plugin contract's message schemas and its manifest schema.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

/**
 * The slug rule for plugin ids, channel kinds and every `[plugin.extends]` id (plugin contract
 * §2, §2.1). It is also what keeps `plugin.outbound.<kind>` topics free of `.`, `*` and `>`.
 */
export const PLUGIN_ID_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;

/**
 * A fresh plugin id schema, for schemas built on use and let go (the manifest's, ./manifest.ts):
 * composing the kept {@link PluginIdSchema} instead would build it for good. `jsonObjectSchema()`
 * below is the same for {@link JsonObjectSchema} (the handshake's, ./lifecycle.ts).
 */
export function pluginIdSchema() {
  return z
    .string()
    .regex(PLUGIN_ID_PATTERN, { error: "must match ^[a-z][a-z0-9_]{0,31}$ (lowercase slug, max 32 chars)" });
}

export const PluginIdSchema = lazySchema("plugin.common", pluginIdSchema);

/** Token counts as every LLM exchange of the contract reports them. */
export const TokenUsageSchema = lazySchema("plugin.common", () =>
  z.looseObject({
    prompt_tokens: z.number().int().nonnegative(),
    completion_tokens: z.number().int().nonnegative(),
  }),
);
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

/** The `{ ok: true }` acknowledgement of shutdown / channel.start / channel.stop. */
export const OkResultSchema = lazySchema("plugin.common", () => z.looseObject({ ok: z.boolean() }));
export type OkResult = z.infer<typeof OkResultSchema>;

/** A JSON object whose members the contract leaves opaque (payloads, metadata, JSON Schemas). */
export function jsonObjectSchema() {
  return z.record(z.string(), z.unknown());
}
export const JsonObjectSchema = lazySchema("plugin.common", jsonObjectSchema);
export type JsonObject = z.infer<typeof JsonObjectSchema>;

/**
 * Wraps a params schema whose fields are all optional so that absent or `null` params read as
 * `{}`: the reference conformance kit sends `shutdown` without params and `initialize` with `{}`,
 * and §3 allows `params: null`.
 */
export function optionalParams<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => value ?? {}, schema);
}

/**
 * The per-plugin tool namespace (§4.1.1, §5.t): a plugin may only contribute tools named
 * `<plugin_id>_*` or `ext_<plugin_id>_*`, so two plugins can never shadow each other's tools.
 */
export function toolNameInNamespace(pluginId: string, toolName: string): boolean {
  return toolName.startsWith(`${pluginId}_`) || toolName.startsWith(`ext_${pluginId}_`);
}
