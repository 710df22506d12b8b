/**
 * The PII redactor hook plugin. For every `hook.on_hook` it looks at the text under inspection
 * (`event.body`, which the daemon fills with the message, reply or tool output; `event.text` for
 * hosts that only send the payload) and answers:
 *
 * - `decision: "transform"` with `transformed_body` when something was redacted, and a `reason`
 *   saying what, for the operator's audit log;
 * - `decision: "allow"` when nothing changed, so the daemon keeps the original untouched.
 *
 * It never blocks: redaction is enough, and a hook that blocks every message with a phone number
 * in it would make the agent useless for the people it serves.
 */
import { readFileSync } from "node:fs";
import { PluginAdapter } from "nexo-plugin-sdk";
import { describeCounts, redactPii } from "./src/redact.js";

function textUnderInspection(event: unknown): string | undefined {
  if (event === null || typeof event !== "object") return undefined;
  const { body, text } = event as { body?: unknown; text?: unknown };
  if (typeof body === "string") return body;
  if (typeof text === "string") return text;
  return undefined;
}

const adapter = new PluginAdapter({
  // This file runs compiled, as dist/plugin.js (see nexo-plugin.toml): the manifest is one level up.
  manifestToml: readFileSync(new URL("../nexo-plugin.toml", import.meta.url), "utf8"),
  onHook: (params) => {
    const text = textUnderInspection(params.event);
    if (text === undefined) return { abort: false, decision: "allow" };
    const { text: redacted, counts } = redactPii(text);
    if (redacted === text) return { abort: false, decision: "allow" };
    return {
      abort: false,
      decision: "transform",
      transformed_body: redacted,
      reason: `redacted ${describeCounts(counts)}`,
    };
  },
});

await adapter.run();
