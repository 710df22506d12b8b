/**
 * Capability names a microapp can be granted, and the manifest block that declares which ones it
 * needs. Every `nexo/admin/*` method is gated by exactly one capability (the table lives with the
 * methods in ./methods.ts); notification streams and `nexo/dispatch` are gated the same way.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

/** Capabilities that gate `nexo/admin/*` methods (admin-rpc spec, "Domains + methods"). */
export const ADMIN_METHOD_CAPABILITIES = [
  "agents_crud",
  "credentials_crud",
  "pairing_initiate",
  "llm_keys_crud",
  "channels_crud",
  "llm_complete",
  "transcripts_read",
  "audit_read",
  "operator_intervention",
  "escalations_read",
  "escalations_resolve",
  "skills_crud",
  "tenants_crud",
  "mcp_crud",
  "plugin_doctor",
  "plugin_restart",
  "memory_query",
  "memory_snapshot",
  "secrets_write",
  "auth_rotate",
] as const;

/**
 * Capabilities that only decide which daemon notifications a microapp receives. There is no
 * subscribe RPC: holding the grant is the subscription.
 */
export const SUBSCRIPTION_CAPABILITIES = ["transcripts_subscribe", "agent_events_subscribe_all"] as const;

/** Capabilities of the microapp contract's own outbound methods (`nexo/dispatch`). */
export const OUTBOUND_CAPABILITIES = ["dispatch_outbound"] as const;

/** Every capability either spec names. */
export const ADMIN_CAPABILITIES = [
  ...ADMIN_METHOD_CAPABILITIES,
  ...SUBSCRIPTION_CAPABILITIES,
  ...OUTBOUND_CAPABILITIES,
] as const;

export const AdminCapabilitySchema = lazySchema("admin.capabilities", () => z.enum(ADMIN_CAPABILITIES));
export type AdminCapability = z.infer<typeof AdminCapabilitySchema>;

const knownCapabilities: ReadonlySet<string> = new Set(ADMIN_CAPABILITIES);

/**
 * True for a capability this version knows. Grants naming unknown capabilities are not errors
 * (the matrix grows monotonically and a newer operator config may name newer ones); callers use
 * this to warn about likely typos.
 */
export function isKnownCapability(name: string): name is AdminCapability {
  return knownCapabilities.has(name);
}

/**
 * `plugin.toml` `[capabilities.admin]`: what the microapp needs. `required` ones fail boot when
 * not granted; `optional` ones make runtime calls fail with capability_not_granted until granted.
 * Names are kept as plain strings so a manifest written for a newer daemon still loads.
 */
export function adminCapabilityDeclarationSchema() {
  return z
    .looseObject({
      required: z.array(z.string().min(1)).default([]),
      optional: z.array(z.string().min(1)).default([]),
    })
    .superRefine((decl, ctx) => {
      decl.optional.forEach((name, index) => {
        if (decl.required.includes(name)) {
          ctx.addIssue({
            code: "custom",
            path: ["optional", index],
            message: `capability "${name}" is listed as both required and optional`,
          });
        }
      });
    });
}
/**
 * Lazy and kept once built. The microapp manifest, read only when a microapp starts, composes a
 * fresh {@link adminCapabilityDeclarationSchema} instead, so that a collection frees it with the
 * manifest's tree.
 */
export const AdminCapabilityDeclarationSchema = lazySchema(
  "admin.capabilities",
  adminCapabilityDeclarationSchema,
);
export type AdminCapabilityDeclaration = z.infer<typeof AdminCapabilityDeclarationSchema>;
