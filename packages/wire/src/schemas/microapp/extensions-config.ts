/**
 * `extensions.yaml`: how the operator configures microapps. The file is closed like every other
 * config file of the daemon (an unknown key is a typo, reported with its line), and each
 * `extensions.entries.<id>` block says where the microapp's executable is, which capabilities it
 * is granted, its per-call timeout and the opaque `config` handed to it in `initialize`.
 *
 *   extensions:
 *     entries:
 *       agent-creator:
 *         path: extensions/agent-creator/main.py
 *         capabilities_grant: [agents_crud, audit_read]
 *         timeout_secs: 10
 *         config: { anything: "the microapp validates this itself" }
 */
import { z } from "zod";
import { disposableSchema, lazySchema } from "../lazy.js";

/** The per-call timeout when an entry sets none. */
export const MICROAPP_DEFAULT_TIMEOUT_SECS = 30;

/**
 * An extension id: the key under `extensions.entries`. Hyphens are allowed (the contract's own
 * example is `agent-creator`); tool names write them as `_`. 32 characters at most, so a prefixed
 * tool name still fits the 64 characters LLM vendors accept.
 */
export const EXTENSION_ID_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * A fresh extension id schema, for schemas built on use and let go (the microapp manifest's,
 * ./manifest.ts): composing the kept {@link ExtensionIdSchema} would build it for good.
 */
export function extensionIdSchema() {
  return z.string().regex(EXTENSION_ID_PATTERN, {
    error: "extension ids are 1-32 chars of a-z, 0-9, '_' and '-', starting with a letter",
  });
}

/** Lazy and kept once built. */
export const ExtensionIdSchema = lazySchema("microapp.extensions-config", extensionIdSchema);

function microappExtensionEntrySchema() {
  return z.strictObject({
    /**
     * The microapp's executable (a binary, or a script with a `#!` line), relative to the config
     * dir; its `plugin.toml` sits in the same directory.
     */
    path: z.string().min(1, { error: "must not be empty" }),
    /** Opaque microapp settings, passed verbatim as `initialize.params.config`. */
    config: z.unknown().optional(),
    /** Per-call timeout (daemon → microapp); a timeout fails the call and leaves the process running. */
    timeout_secs: z.number().positive().max(3600).optional(),
    /**
     * Capabilities the operator allows. Unknown names are kept (the capability matrix only grows,
     * so a newer name is not an error); see isKnownCapability to warn about typos.
     */
    capabilities_grant: z.array(z.string().min(1)).default([]),
    /** Lets the microapp's HTTP server bind beyond loopback. */
    allow_external_bind: z.boolean().default(false),
  });
}

/** One `extensions.entries.<id>` block; built on use and let go. */
export const MicroappExtensionEntrySchema = disposableSchema(microappExtensionEntrySchema);
export type MicroappExtensionEntry = z.output<typeof MicroappExtensionEntrySchema>;

/** The whole file; built on use from plain schemas (one build per parse) and let go. */
export const ExtensionsFileSchema = disposableSchema(() =>
  z.strictObject({
    extensions: z
      .strictObject({
        entries: z.record(extensionIdSchema(), microappExtensionEntrySchema()).default({}),
      })
      .default({ entries: {} }),
  }),
);
export type ExtensionsFile = z.output<typeof ExtensionsFileSchema>;
