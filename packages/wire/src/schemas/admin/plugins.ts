/**
 * `nexo/admin/plugins/*`: `doctor` (plugin_doctor, read-only) snapshots plugin discovery;
 * `restart` (plugin_restart, a separate destructive grant) restarts one subprocess plugin.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { CountSchema, EpochMsSchema, NonEmptyStringSchema, NoParamsSchema } from "./common.js";

export const PluginsDoctorParamsSchema = NoParamsSchema;
export type PluginsDoctorParams = z.infer<typeof PluginsDoctorParamsSchema>;

export const PluginsDoctorResultSchema = lazySchema("admin.plugins", () =>
  z.looseObject({
    /** The discovery report (manifests, capabilities, spawn state) as the doctor CLI prints it. */
    report: z.unknown(),
    generated_at_ms: EpochMsSchema,
  }),
);
export type PluginsDoctorResult = z.infer<typeof PluginsDoctorResultSchema>;

/** In-tree plugins and unknown ids are answered with -32602. */
export const PluginsRestartParamsSchema = lazySchema("admin.plugins", () =>
  z.looseObject({ plugin_id: NonEmptyStringSchema }),
);
export type PluginsRestartParams = z.infer<typeof PluginsRestartParamsSchema>;

export const PluginsRestartResultSchema = lazySchema("admin.plugins", () =>
  z.looseObject({
    plugin_id: NonEmptyStringSchema,
    /** How long the previous process had been up. */
    previous_uptime_ms: CountSchema,
    restarted_at_ms: EpochMsSchema,
    new_pid: z.number().int().positive().optional(),
  }),
);
export type PluginsRestartResult = z.infer<typeof PluginsRestartResultSchema>;
