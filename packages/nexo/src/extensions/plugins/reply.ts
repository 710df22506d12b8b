/** Checking what a plugin answered against the shape the contract gives the method. */
import type { z } from "zod";
import { formatIssues, PluginProtocolError } from "./errors.js";

/** The reply as the schema reads it, or PluginProtocolError naming the method and the problem. */
export function parseReply<S extends z.ZodType>(schema: S, method: string, reply: unknown): z.output<S> {
  const parsed = schema.safeParse(reply);
  if (!parsed.success) throw new PluginProtocolError(method, formatIssues(parsed.error.issues));
  return parsed.data;
}
