/**
 * ISO-8601 timestamps in UTC, the text `Date.prototype.toISOString()` writes, built from the date's
 * UTC fields instead of by that method.
 *
 * Why: in Node 20's V8, `toISOString()` (and `toJSON()`, `toUTCString()`) share one formatter
 * with `toString()`, which looks up the local time zone's display name whatever the format asked
 * for. The first lookup in a process reads ICU's time-zone names (zone/pool.res, metaZones.res, the
 * locale's zone names ...) and runs ICU's code for them: ~0.9 MB of the node binary's pages,
 * resident from then on. nexo stamps every log line, stored row and broker event, so one such call
 * made that part of every idle daemon (docs/performance.md, "Eighth pass (b)"). The UTC getters
 * need no time zone at all.
 */

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

/**
 * `time` (a Date or milliseconds since the epoch; now when absent) as `toISOString()` writes it:
 * `YYYY-MM-DDTHH:mm:ss.sssZ`, years outside 0–9999 as a sign and six digits. An invalid date
 * throws the same RangeError.
 */
export function isoTime(time: Date | number = Date.now()): string {
  const date = typeof time === "number" ? new Date(time) : time;
  const year = date.getUTCFullYear();
  if (Number.isNaN(year)) throw new RangeError("Invalid time value");
  const yyyy = year >= 0 && year <= 9999 ? pad(year, 4) : `${year < 0 ? "-" : "+"}${pad(Math.abs(year), 6)}`;
  return `${yyyy}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}T${pad(date.getUTCHours(), 2)}:${pad(
    date.getUTCMinutes(),
    2,
  )}:${pad(date.getUTCSeconds(), 2)}.${pad(date.getUTCMilliseconds(), 3)}Z`;
}
