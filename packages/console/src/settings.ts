/**
 * The console's settings: extensions.yaml `entries.console.config`, checked in `initialize` (a bad
 * value refuses the microapp with the field named, in the daemon's log).
 */
import { z } from "zod";

export const SettingsSchema = z
  .strictObject({
    /** The loopback port the web UI listens on; 0 lets the system pick a free one. */
    port: z.number().int().min(0).max(65_535).default(0),
  })
  .default({ port: 0 });
export type Settings = z.output<typeof SettingsSchema>;

/**
 * The console binds loopback only: it is the operator's tool on the daemon's machine. Reach it
 * from elsewhere through an SSH tunnel, never by exposing it.
 */
export const CONSOLE_HOST = "127.0.0.1";
