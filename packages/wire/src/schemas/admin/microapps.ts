/**
 * `nexo/admin/microapps/list`: a nexo addition to the admin RPC (the spec's table has no microapp
 * health method; plugins/doctor covers plugins only). It reports every microapp of extensions.yaml
 * as the daemon's microapp host sees it — state, pid, restarts, last error, what its plugin.toml
 * declares and what the operator granted — under `plugin_doctor`, the read-only extension-health
 * grant. Read only: restarting a microapp stays an extensions.yaml change and a reload.
 */
import { z } from "zod";
import { CountSchema, NonEmptyStringSchema, NoParamsSchema } from "./common.js";

export const MicroappsListParamsSchema = NoParamsSchema;
export type MicroappsListParams = z.infer<typeof MicroappsListParamsSchema>;

/** `refused`: a required capability is not granted, so the microapp was never spawned. */
export const MICROAPP_STATES = [
  "idle",
  "starting",
  "running",
  "backoff",
  "stopping",
  "stopped",
  "failed",
  "refused",
] as const;

export const MicroappHealthSchema = z.looseObject({
  id: NonEmptyStringSchema,
  /** One of MICROAPP_STATES; kept open so a newer daemon's state still parses. */
  state: z.string().min(1),
  pid: z.number().int().positive().optional(),
  version: z.string().optional(),
  /** How many times the host restarted it after a crash. */
  restarts: CountSchema,
  tools: z.array(z.string()),
  hooks: z.array(z.string()),
  capabilities: z.looseObject({
    /** plugin.toml `[capabilities.admin]`. */
    declared: z.looseObject({ required: z.array(z.string()), optional: z.array(z.string()) }),
    /** extensions.yaml `capabilities_grant`: what the gate allows. */
    granted: z.array(z.string()),
  }),
  warnings: z.array(z.string()),
  last_error: z
    .looseObject({ code: z.string(), message: z.string(), at_ms: z.number().int().nonnegative() })
    .optional(),
  /** The last lines it wrote to stderr (redacted by the daemon's log redactor). */
  stderr_tail: z.array(z.string()),
});
export type MicroappHealth = z.infer<typeof MicroappHealthSchema>;

export const MicroappsListResultSchema = z.looseObject({
  microapps: z.array(MicroappHealthSchema),
  generated_at_ms: z.number().int().nonnegative(),
});
export type MicroappsListResult = z.infer<typeof MicroappsListResultSchema>;
