/**
 * `demo_time`: the current time (or a given instant) in an IANA time zone, using the time-zone
 * data Node ships with (Intl), so it works offline. A zone Intl does not know is the caller's
 * mistake: -33402 naming `/timezone`.
 */
import { type ToolDef, textResult } from "nexo-plugin-sdk";
import { ArgumentReader } from "./args.js";

/** ISO 8601 with an explicit offset: `Date.parse` of anything looser depends on the engine. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export const timeTool: ToolDef = {
  name: "demo_time",
  description:
    "The current date and time in an IANA time zone (e.g. Europe/Madrid), or the given instant `at` converted to it.",
  inputSchema: {
    type: "object",
    properties: {
      timezone: { type: "string", minLength: 1, maxLength: 64, default: "UTC", description: "IANA zone" },
      at: {
        type: "string",
        description: "An instant in ISO 8601 with an offset, e.g. 2026-05-01T12:00:00Z; default now",
      },
    },
    additionalProperties: false,
  },
};

export interface ZonedTime {
  /** `YYYY-MM-DD HH:mm:ss` in the zone. */
  local: string;
  weekday: string;
  /** The zone's offset at that instant, as Intl spells it: `GMT+02:00`. */
  offset: string;
  timezone: string;
}

/** Throws RangeError for a zone Intl does not know. */
export function timeIn(timezone: string, instant: Date): ZonedTime {
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: timezone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    weekday: "long",
    timeZoneName: "longOffset",
  });
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(instant)) parts[part.type] = part.value;
  return {
    local: `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`,
    weekday: parts.weekday ?? "",
    offset: parts.timeZoneName ?? "",
    // Intl's canonical spelling: "europe/lisbon" comes back as "Europe/Lisbon".
    timezone: format.resolvedOptions().timeZone,
  };
}

export function runTime(args: unknown, now = new Date()) {
  const reader = new ArgumentReader("demo_time", args, ["timezone", "at"]);
  const timezone = reader.string("timezone", { fallback: "UTC", maxLength: 64 });
  const at = reader.optionalString("at", { maxLength: 40 });
  let instant = now;
  if (at !== undefined) {
    const parsed = new Date(at);
    if (ISO_INSTANT.test(at) && !Number.isNaN(parsed.getTime())) instant = parsed;
    else reader.problem("at", "must be an ISO 8601 instant with an offset, e.g. 2026-05-01T12:00:00Z");
  }
  // Tried even when `at` was refused (with `now`), so a bad zone is reported in the same reply.
  let zoned: ZonedTime | undefined;
  try {
    zoned = timeIn(timezone, instant);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    reader.problem("timezone", `is not a time zone this system knows (IANA names such as Europe/Madrid)`);
  }
  reader.finish();
  const z = zoned!;
  return textResult(`${z.local} in ${z.timezone} (${z.weekday}, ${z.offset})`);
}
