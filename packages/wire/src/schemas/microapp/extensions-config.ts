/**
 * One `extensions.yaml` `entries.<id>` block: how the operator configures a microapp. The daemon
 * reads `path`, `timeout_secs`, `capabilities_grant` and `allow_external_bind`; `config` is handed
 * to the microapp in `initialize` without being read.
 */
import { z } from "zod";

/** The per-call timeout when an entry sets none. */
export const MICROAPP_DEFAULT_TIMEOUT_SECS = 30;

export const MicroappExtensionEntrySchema = z.looseObject({
  /** The microapp's executable or directory, relative to the config dir. */
  path: z.string().min(1).optional(),
  /** Opaque microapp settings, validated by the microapp itself. */
  config: z.unknown().optional(),
  /** Per-call timeout; a timeout fails the call and leaves the process running. */
  timeout_secs: z.number().positive().optional(),
  /**
   * Capabilities the operator allows. Unknown names are kept (the capability matrix only grows,
   * so a newer name is not an error); see isKnownCapability to warn about typos.
   */
  capabilities_grant: z.array(z.string().min(1)).optional(),
  /** Lets the microapp's HTTP server bind beyond loopback. */
  allow_external_bind: z.boolean().optional(),
});
export type MicroappExtensionEntry = z.infer<typeof MicroappExtensionEntrySchema>;
