/**
 * `nexo/admin/microapps/list`: a nexo addition to the admin RPC (the spec's table has no microapp
 * health method; plugins/doctor covers plugins only). It reports every microapp of extensions.yaml
 * as the daemon's microapp host sees it — state, pid, restarts, last error, what its plugin.toml
 * declares and what the operator granted — under `plugin_doctor`, the read-only extension-health
 * grant.
 *
 * `nexo/admin/microapps/restart`: also a nexo addition, under `plugin_restart` — the grant that
 * already lets an operator's tool interrupt an extension (plugins/restart); restarting a microapp
 * is the same act on the other kind of extension. A microapp that restarts itself is answered
 * first (`deferred: true`) and restarted once that answer is on its pipe.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { CountSchema, EpochMsSchema, NonEmptyStringSchema, NoParamsSchema } from "./common.js";

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

export const MicroappHealthSchema = lazySchema("admin.microapps", () =>
  z.looseObject({
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
  }),
);
export type MicroappHealth = z.infer<typeof MicroappHealthSchema>;

export const MicroappsListResultSchema = lazySchema("admin.microapps", () =>
  z.looseObject({
    microapps: z.array(MicroappHealthSchema),
    generated_at_ms: z.number().int().nonnegative(),
  }),
);
export type MicroappsListResult = z.infer<typeof MicroappsListResultSchema>;

export const MicroappsRestartParamsSchema = lazySchema("admin.microapps", () =>
  z.looseObject({ microapp_id: NonEmptyStringSchema }),
);
export type MicroappsRestartParams = z.infer<typeof MicroappsRestartParamsSchema>;

/** The state a deferred restart reports: the caller's own process is about to be replaced. */
export const MICROAPP_RESTART_DEFERRED_STATE = "restarting";

export const MicroappsRestartResultSchema = lazySchema("admin.microapps", () =>
  z.looseObject({
    microapp_id: NonEmptyStringSchema,
    /** The process that was stopped; absent when none ran (failed, refused, waiting to restart). */
    previous_pid: z.number().int().positive().optional(),
    /** When the restart began (deferred: when it was scheduled). */
    restarted_at_ms: EpochMsSchema,
    /**
     * True when the microapp restarted itself: this answer comes first and the restart begins once
     * it is written, so `state` is `restarting` and there is no `new_pid` yet.
     */
    deferred: z.boolean(),
    /** After the new process's first attempt: `running`, `backoff`, `failed`, `refused`, … */
    state: z.string().min(1),
    new_pid: z.number().int().positive().optional(),
    /** Why the new process is not running, when it is not. */
    error: z.looseObject({ code: z.string(), message: z.string() }).optional(),
  }),
);
export type MicroappsRestartResult = z.infer<typeof MicroappsRestartResultSchema>;
