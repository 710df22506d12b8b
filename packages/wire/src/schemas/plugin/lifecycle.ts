/**
 * Plugin lifecycle (plugin contract §4): the `initialize` handshake with its optional tool catalog
 * (§4.1.1) and the graceful `shutdown` request. Both are host → child requests.
 *
 * The handshake's schemas are read once per plugin start or restart (the host parses the reply,
 * the SDK the params and its own tool definitions), never per message, so they are built on use
 * and let go (`disposableSchema`, ../lazy.ts), each tree by one plain builder from fresh parts, as
 * ./manifest.ts explains.
 */
import { z } from "zod";
import { disposableSchema, lazySchema } from "../lazy.js";
import { hostFeaturesAdvertSchema } from "./broker.js";
import { channelFeaturesAdvertSchema } from "./channel-features.js";
import { jsonObjectSchema, OkResultSchema, optionalParams } from "./common.js";

/**
 * `initialize` params. The host always sends `nexo_version`, but the reference SDKs ignore it and
 * the conformance kit sends `{}`, so a child must not insist on it.
 */
export const InitializeParamsSchema = disposableSchema(() =>
  optionalParams(
    z.looseObject({
      nexo_version: z.string().optional(),
      /** nexo's optional host features (./broker.ts); absent from upstream hosts. */
      host_features: hostFeaturesAdvertSchema().optional(),
    }),
  ),
);
export type InitializeParams = z.infer<typeof InitializeParamsSchema>;

/**
 * One entry of the initialize-reply tool catalog (`RemoteToolDef`, §4.1.1). The SDKs serialize a
 * missing schema as `{}`; the host treats an absent one the same way but warns about both, since
 * such a tool's arguments are never validated (issue 14.5) — so absence is kept visible here.
 */
function remoteToolDefSchema() {
  return z.looseObject({
    name: z.string().min(1),
    description: z.string(),
    input_schema: jsonObjectSchema().optional(),
  });
}
export const RemoteToolDefSchema = disposableSchema(remoteToolDefSchema);
export type RemoteToolDef = z.infer<typeof RemoteToolDefSchema>;

/**
 * The manifest a child echoes back. Only `plugin.id` matters to the handshake (the host compares
 * it with the id it registered the plugin under); the rest is the child's whole TOML document
 * converted to JSON, which SDKs render differently (e.g. TOML datetimes become strings), so it is
 * deliberately not validated against the manifest schema here.
 */
function echoedManifestSchema() {
  return z.looseObject({
    plugin: z.looseObject({
      id: z.string().min(1),
    }),
  });
}
export const EchoedManifestSchema = disposableSchema(echoedManifestSchema);
export type EchoedManifest = z.infer<typeof EchoedManifestSchema>;

/**
 * `initialize` result. `tools` is absent when the plugin declares no tools; whether it must be
 * present, and whether every name is declared in `[plugin.extends].tools`, depends on the host's
 * copy of the manifest and is checked there.
 */
export const InitializeResultSchema = disposableSchema(() =>
  z
    .looseObject({
      manifest: echoedManifestSchema(),
      server_version: z.string(),
      tools: z.array(remoteToolDefSchema()).optional(),
      /** nexo's optional channel features the plugin implements (./channel-features.ts). */
      channel_features: channelFeaturesAdvertSchema().optional(),
    })
    .superRefine((result, ctx) => {
      const seen = new Set<string>();
      result.tools?.forEach((tool, index) => {
        if (seen.has(tool.name)) {
          ctx.addIssue({
            code: "custom",
            message: `tool "${tool.name}" is advertised more than once`,
            path: ["tools", index, "name"],
          });
        }
        seen.add(tool.name);
      });
    }),
);
export type InitializeResult = z.infer<typeof InitializeResultSchema>;
export type InitializeResultInput = z.input<typeof InitializeResultSchema>;

/** `shutdown` params; the conformance kit omits them entirely. */
export const ShutdownParamsSchema = lazySchema("plugin.lifecycle", () =>
  optionalParams(
    z.looseObject({
      reason: z.string().optional(),
    }),
  ),
);
export type ShutdownParams = z.infer<typeof ShutdownParamsSchema>;

/** `shutdown` result: `{ ok: true }`. A failed shutdown is an error reply, not `ok: false`. */
export const ShutdownResultSchema = OkResultSchema;
export type ShutdownResult = z.infer<typeof ShutdownResultSchema>;
