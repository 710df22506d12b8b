/**
 * The `restart:` section an operator writes in plugins.yaml (per plugin) and mcp.yaml (for every
 * server, and per server): overrides of the supervisor's restart policy (restart-policy.ts), in
 * the files' snake_case. One schema for both files, so a plugin and an MCP server crash-loop,
 * back off and give up by the same rules, configured with the same words.
 */
import { z } from "zod";
import type { RestartPolicy } from "./restart-policy.js";

/** Overrides of a restart policy; absent keys keep what the policy had. */
export const RestartConfigSchema = z
  .strictObject({
    respawn: z.boolean().optional(),
    /** Restarts allowed within `window_ms`; one more crash there marks the child failed. */
    max_restarts: z.int().min(0).max(1000).optional(),
    window_ms: z.int().min(1).optional(),
    initial_delay_ms: z.int().min(0).optional(),
    max_delay_ms: z.int().min(0).optional(),
    factor: z.number().min(1).max(10).optional(),
    jitter: z.number().min(0).max(1).optional(),
  })
  .superRefine((restart, ctx) => {
    const { initial_delay_ms: initial, max_delay_ms: max } = restart;
    if (initial !== undefined && max !== undefined && max < initial) {
      ctx.addIssue({
        code: "custom",
        path: ["max_delay_ms"],
        message: `max_delay_ms (${max}) is smaller than initial_delay_ms (${initial})`,
      });
    }
  });
export type RestartConfig = z.output<typeof RestartConfigSchema>;

/** A `restart:` section in the supervisor's terms. */
export function restartOverrides(restart: RestartConfig | undefined): Partial<RestartPolicy> {
  if (restart === undefined) return {};
  const overrides: Partial<RestartPolicy> = {};
  if (restart.respawn !== undefined) overrides.respawn = restart.respawn;
  if (restart.max_restarts !== undefined) overrides.maxRestarts = restart.max_restarts;
  if (restart.window_ms !== undefined) overrides.windowMs = restart.window_ms;
  if (restart.initial_delay_ms !== undefined) overrides.initialDelayMs = restart.initial_delay_ms;
  if (restart.max_delay_ms !== undefined) overrides.maxDelayMs = restart.max_delay_ms;
  if (restart.factor !== undefined) overrides.factor = restart.factor;
  if (restart.jitter !== undefined) overrides.jitter = restart.jitter;
  return overrides;
}
