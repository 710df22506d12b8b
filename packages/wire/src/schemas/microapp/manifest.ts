/**
 * `plugin.toml`, beside a microapp's executable: who the microapp is and what it needs. The
 * daemon reads `[plugin]` (identity), `[capabilities.admin]` (the capabilities it requires or can
 * use, compared with the operator's grant at boot), `[capabilities.http_server]` (an HTTP UI it
 * serves) and the optional `[plugin.sandbox]` (the same bubblewrap section as a plugin's). Other
 * sections pass through: a manifest written for a newer daemon still loads.
 *
 * The daemon reads `plugin.toml` when it starts or restarts a microapp, never per call, so these
 * schemas are built on use and let go (`disposableSchema`, ../lazy.ts), each tree by one plain
 * builder (see ../plugin/manifest.ts for why), the extension id and the admin capability
 * declaration included: their modules' builders, not the kept lazy schemas they export.
 */
import { z } from "zod";
import { adminCapabilityDeclarationSchema } from "../admin/capabilities.js";
import { disposableSchema } from "../lazy.js";
import { manifestSandboxSchema, SEMVER_PATTERN } from "../plugin/manifest.js";
import { extensionIdSchema } from "./extensions-config.js";

export const MICROAPP_MANIFEST_FILE = "plugin.toml";

function microappManifestPluginSchema() {
  return z.looseObject({
    /** When present, must equal the extensions.yaml key the microapp is configured under. */
    id: extensionIdSchema().optional(),
    version: z
      .string()
      .regex(SEMVER_PATTERN, { error: "must be a semantic version such as 0.2.0" })
      .optional(),
    name: z.string().optional(),
    description: z.string().optional(),
    sandbox: manifestSandboxSchema().optional(),
  });
}
export const MicroappManifestPluginSchema = disposableSchema(microappManifestPluginSchema);
export type MicroappManifestPlugin = z.infer<typeof MicroappManifestPluginSchema>;

/** The default health path of a microapp's HTTP server. */
export const HTTP_SERVER_DEFAULT_HEALTH_PATH = "/healthz";

function microappHttpServerSchema() {
  return z.strictObject({
    port: z.number().int().min(1).max(65_535),
    /** Loopback unless the operator sets `allow_external_bind` for this microapp. */
    bind: z.string().min(1).default("127.0.0.1"),
    /** The variable the microapp reads its bearer token from. */
    token_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: "must be a variable name" })
      .optional(),
    health_path: z
      .string()
      .startsWith("/", { error: "must start with /" })
      .default(HTTP_SERVER_DEFAULT_HEALTH_PATH),
  });
}
export const MicroappHttpServerSchema = disposableSchema(microappHttpServerSchema);
export type MicroappHttpServer = z.output<typeof MicroappHttpServerSchema>;

function microappCapabilitiesSchema() {
  return z.looseObject({
    admin: adminCapabilityDeclarationSchema().optional(),
    http_server: microappHttpServerSchema().optional(),
  });
}
export const MicroappCapabilitiesSchema = disposableSchema(microappCapabilitiesSchema);

export const MicroappManifestSchema = disposableSchema(() =>
  z.looseObject({
    plugin: microappManifestPluginSchema().default({}),
    capabilities: microappCapabilitiesSchema().default({}),
  }),
);
export type MicroappManifest = z.output<typeof MicroappManifestSchema>;
